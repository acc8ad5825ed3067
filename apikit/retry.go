package apikit

import (
	"errors"
	"time"
)

// retryAfter is an *Error that says when to try again.
type retryAfter struct {
	err   *Error
	after time.Duration
}

func (r *retryAfter) Error() string { return r.err.Error() }
func (r *retryAfter) Unwrap() error { return r.err }

// WithRetryAfter returns e carrying after, how long the caller should wait
// before trying again: the answer's Retry-After header gives it, in whole
// seconds. ErrorCode and AsError still find e.
func WithRetryAfter(e *Error, after time.Duration) error {
	return &retryAfter{err: e, after: after}
}

// RetryAfter returns how long err (WithRetryAfter's) asks to wait, and
// whether it asks.
func RetryAfter(err error) (time.Duration, bool) {
	var r *retryAfter
	if errors.As(err, &r) {
		return r.after, true
	}
	return 0, false
}
