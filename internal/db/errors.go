package db

import (
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/leadline/leadline/apikit"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

type conflictError struct {
	cause       error
	msg, remedy string
}

func (e *conflictError) Error() string { return e.msg }

// Unwrap exposes the apikit error first so apikit.ErrorCode finds
// E_CONFLICT, and the engine's error for logs.
func (e *conflictError) Unwrap() []error {
	return []error{apikit.Conflict(e.msg, e.remedy), e.cause}
}

// IsNoRows reports whether err says a query found no row.
func IsNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// Visible loads the object id names for a principal, with load, and
// returns E_NOT_FOUND (naming it as what) for an id that is not a
// canonical id, a missing row, or an object of a client outside the
// principal's scope (client returns the object's client, nil for none):
// a key never learns that an object it may not see exists.
func Visible[T any](p apikit.Principal, what, id string, load func() (T, error), client func(T) *string) (T, error) {
	var zero T
	if !apikit.ValidID(id) {
		return zero, apikit.NotFound(what + " " + id)
	}
	v, err := load()
	if IsNoRows(err) {
		return zero, apikit.NotFound(what + " " + id)
	} else if err != nil {
		return zero, err
	}
	c := ""
	if cp := client(v); cp != nil {
		c = *cp
	}
	if !p.SeesClient(c) {
		return zero, apikit.NotFound(what + " " + id)
	}
	return v, nil
}

// IsRetryable reports whether err is a Postgres deadlock or serialization
// failure: the transaction was rolled back and may simply run again.
func IsRetryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// IsUniqueViolation reports whether err is a unique-constraint violation on
// either engine.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// Conflict translates a unique violation into an E_CONFLICT error with the
// given message and remedy; any other error is returned as it is.
func Conflict(err error, msg, remedy string) error {
	if IsUniqueViolation(err) {
		return &conflictError{cause: err, msg: msg, remedy: remedy}
	}
	return err
}
