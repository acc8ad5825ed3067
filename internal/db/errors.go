package db

import (
	"database/sql"
	"errors"

	"github.com/leadline/leadline/apikit"
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
