// Package apikit is the small kit every leadline area shares: the error type
// with its codes, the principal of a request, roles, rate classes, the
// injectable clock, identifiers and the paging envelope.
//
// Domain packages return *Error values (or wrap them); the server package is
// the one place where codes become HTTP statuses and bodies.
package apikit

import (
	"errors"
	"fmt"
)

// Error codes, one per row of the spec's error table.
const (
	EUnauthorized        = "E_UNAUTHORIZED"
	EPlanSuspended       = "E_PLAN_SUSPENDED"
	EForbidden           = "E_FORBIDDEN"
	ENotFound            = "E_NOT_FOUND"
	EIdempotencyMismatch = "E_IDEMPOTENCY_MISMATCH"
	EInProgress          = "E_IN_PROGRESS"
	EConflict            = "E_CONFLICT"
	EPayloadInvalid      = "E_PAYLOAD_INVALID"
	ETooMany             = "E_TOO_MANY"
	EGraphInvalid        = "E_GRAPH_INVALID"
	ERateLimited         = "E_RATE_LIMITED"
	EInternal            = "E_INTERNAL"
)

// Error is a domain error a caller can act on: a stable code, a message that
// says what went wrong and a remedy that says what to do about it.
type Error struct {
	Code    string
	Message string
	Remedy  string
}

func (e *Error) Error() string {
	if e.Remedy == "" {
		return e.Code + ": " + e.Message
	}
	return e.Code + ": " + e.Message + " (" + e.Remedy + ")"
}

// Errorf builds an Error with a formatted message.
func Errorf(code, remedy, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Remedy: remedy}
}

// ErrorCode returns the code of the first *Error in err's chain, "" for nil,
// and E_INTERNAL for any other error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// AsError returns the *Error in err's chain, or an E_INTERNAL error that
// reveals nothing of err for any other error.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal()
}

// Unauthorized reports a missing, unknown, expired or revoked key.
func Unauthorized(msg string) *Error {
	return &Error{Code: EUnauthorized, Message: msg,
		Remedy: "Send a valid API key as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'; a lost, expired or revoked key must be replaced with a new one."}
}

// PlanSuspended reports a suspended workspace.
func PlanSuspended() *Error {
	return &Error{Code: EPlanSuspended, Message: "This workspace is suspended.",
		Remedy: "Ask the workspace owner to settle the plan; the key works again as soon as the workspace is reinstated."}
}

// Forbidden reports a role or client scope that does not allow the call.
func Forbidden(msg, remedy string) *Error {
	return &Error{Code: EForbidden, Message: msg, Remedy: remedy}
}

// NotFound reports an object that does not exist or is not visible to the key.
func NotFound(what string) *Error {
	return &Error{Code: ENotFound, Message: what + " was not found.",
		Remedy: "Check the id; objects of other workspaces, or of clients outside this key's scope, are not visible."}
}

// IdempotencyMismatch reports an Idempotency-Key reused for another request.
func IdempotencyMismatch() *Error {
	return &Error{Code: EIdempotencyMismatch, Message: "This Idempotency-Key was already used with a different request.",
		Remedy: "Use a new Idempotency-Key for a new request; reuse a key only to retry the very same request."}
}

// InProgress reports an Idempotency-Key whose first request still runs.
func InProgress() *Error {
	return &Error{Code: EInProgress, Message: "A request with this Idempotency-Key is still running.",
		Remedy: "Wait a moment and retry with the same key to receive the first request's answer."}
}

// Conflict reports a write that conflicts with the current state.
func Conflict(msg, remedy string) *Error {
	return &Error{Code: EConflict, Message: msg, Remedy: remedy}
}

// Invalid reports input that breaks a rule.
func Invalid(msg, remedy string) *Error {
	return &Error{Code: EPayloadInvalid, Message: msg, Remedy: remedy}
}

// TooMany reports input with more items than a limit allows.
func TooMany(msg, remedy string) *Error {
	return &Error{Code: ETooMany, Message: msg, Remedy: remedy}
}

// GraphInvalid reports a sequence step graph that cannot run.
func GraphInvalid(msg, remedy string) *Error {
	return &Error{Code: EGraphInvalid, Message: msg, Remedy: remedy}
}

// RateLimited reports an exhausted hourly budget.
func RateLimited(class RateClass, limit int) *Error {
	return &Error{Code: ERateLimited,
		Message: fmt.Sprintf("The %s rate limit of %d calls per hour for this key is reached.", class, limit),
		Remedy:  "Wait for the number of seconds in the Retry-After header, then retry."}
}

// Internal reports an unexpected failure. It never carries the cause: the
// cause is logged by the server, not shown to the caller.
func Internal() *Error {
	return &Error{Code: EInternal, Message: "An unexpected error occurred; nothing was changed.",
		Remedy: "Retry the request; if it keeps failing, report the X-Request-Id of the response."}
}

// Prefixed returns err with prefix put before the message of the *Error in
// its chain (a setup file's errors name the workspace, sender or sequence
// they are about); any other error is returned as it is.
func Prefixed(prefix string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{Code: e.Code, Message: prefix + e.Message, Remedy: e.Remedy}
	}
	return err
}
