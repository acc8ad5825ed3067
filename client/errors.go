package client

import (
	"fmt"
	"time"

	"github.com/leadline/leadline/apikit"
)

// Error is a leadline error answer: its HTTP status and the envelope's
// stable code, message and remedy, with the request's id (quote it when
// asking for help: the server logs it).
type Error struct {
	Status    int
	Code      string
	Message   string
	Remedy    string
	RequestID string
	// RetryAfter is what a 429 asked to wait.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := fmt.Sprintf("leadline: %d %s: %s", e.Status, e.Code, e.Message)
	if e.Remedy != "" {
		s += " (" + e.Remedy + ")"
	}
	if e.RequestID != "" {
		s += " [request " + e.RequestID + "]"
	}
	return s
}

// Is makes errors.Is(err, ErrNotFound) and the like true for an error with
// that code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code != "" && t.Code == e.Code
}

// The spec's error codes, for errors.Is.
var (
	ErrUnauthorized        = &Error{Code: apikit.EUnauthorized}
	ErrPlanSuspended       = &Error{Code: apikit.EPlanSuspended}
	ErrForbidden           = &Error{Code: apikit.EForbidden}
	ErrNotFound            = &Error{Code: apikit.ENotFound}
	ErrIdempotencyMismatch = &Error{Code: apikit.EIdempotencyMismatch}
	ErrInProgress          = &Error{Code: apikit.EInProgress}
	ErrConflict            = &Error{Code: apikit.EConflict}
	ErrPayloadInvalid      = &Error{Code: apikit.EPayloadInvalid}
	ErrTooMany             = &Error{Code: apikit.ETooMany}
	ErrGraphInvalid        = &Error{Code: apikit.EGraphInvalid}
	ErrRateLimited         = &Error{Code: apikit.ERateLimited}
	ErrInternal            = &Error{Code: apikit.EInternal}
)

// codes are the sentinels by code (the coverage test checks them against
// the document's enum).
var codes = map[string]*Error{}

func init() {
	for _, e := range []*Error{ErrUnauthorized, ErrPlanSuspended, ErrForbidden, ErrNotFound, ErrIdempotencyMismatch, ErrInProgress,
		ErrConflict, ErrPayloadInvalid, ErrTooMany, ErrGraphInvalid, ErrRateLimited, ErrInternal} {
		codes[e.Code] = e
	}
}
