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
