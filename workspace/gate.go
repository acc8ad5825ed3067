package workspace

import (
	"context"
	"runtime"
	"time"

	"github.com/leadline/leadline/apikit"
)

// PasswordGate bounds how many passwords are hashed at once. Each argon2id
// hash holds 19 MiB and a core for tens of milliseconds, and sign-in is
// open to anyone: without a bound, a burst of sign-ins grows the process
// by 19 MiB a request and takes every core from the API. A hash waits for
// one of the gate's slots in a short queue; past the queue it is refused
// at once (E_RATE_LIMITED, with a Retry-After), which costs nothing.
type PasswordGate struct {
	slots chan struct{}
	queue chan struct{}
}

// NewPasswordGate returns a gate that lets slots hashes run at once and
// queue more wait for them.
func NewPasswordGate(slots, queue int) *PasswordGate {
	return &PasswordGate{slots: make(chan struct{}, max(1, slots)), queue: make(chan struct{}, max(0, queue))}
}

// DefaultPasswordGate is the gate of a service that is given none: a slot
// per core the process may use, and twice as many waiting. With the
// default costs, hashing then holds at most 19 MiB a core.
func DefaultPasswordGate() *PasswordGate {
	n := runtime.GOMAXPROCS(0)
	return NewPasswordGate(n, 2*n)
}

// PasswordBusyRetry is how long a refused caller is asked to wait: a few
// hashes' time.
const PasswordBusyRetry = time.Second

// ErrPasswordBusy is the refusal of a password check or change when every
// slot of the gate and its queue are taken.
func ErrPasswordBusy() error {
	return apikit.WithRetryAfter(&apikit.Error{Code: apikit.ERateLimited,
		Message: "Too many passwords are being checked right now.",
		Remedy:  "Wait a second and send the form again."}, PasswordBusyRetry)
}

// Enter takes a slot, waiting in the queue while there is room in it, and
// returns the function that gives the slot back.
// Returns ErrPasswordBusy when the queue is full, and ctx's error when it
// ends while waiting.
func (g *PasswordGate) Enter(ctx context.Context) (leave func(), err error) {
	if held, _ := ctx.Value(heldSlot{}).(*PasswordGate); held == g {
		return func() {}, nil
	}
	leave = func() { <-g.slots }
	select {
	case g.slots <- struct{}{}:
		return leave, nil
	default:
	}
	select {
	case g.queue <- struct{}{}:
	default:
		return nil, ErrPasswordBusy()
	}
	defer func() { <-g.queue }()
	select {
	case g.slots <- struct{}{}:
		return leave, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// SetPasswordGate sets the gate every password hash of s passes (tests
// and programs that run several services in one process share one).
func (s *Service) SetPasswordGate(g *PasswordGate) { s.gate = g }

// heldSlot is the context key of a slot held by HoldPasswordSlot.
type heldSlot struct{}

// HoldPasswordSlot takes a slot of s's gate for a caller that does more
// around the hash, and returns ctx carrying it: the password checks made
// with that context use it instead of taking another. The console holds
// one before it counts a sign-in in the database, so that a burst the
// gate refuses costs no database work (counting it and giving it back),
// and no more sign-ins wait on the counts' rows, holding connections,
// than the gate lets hash. leave gives the slot back.
// Returns ErrPasswordBusy when the gate's queue is full.
func (s *Service) HoldPasswordSlot(ctx context.Context) (_ context.Context, leave func(), err error) {
	leave, err = s.gate.Enter(ctx)
	if err != nil {
		return ctx, nil, err
	}
	return context.WithValue(ctx, heldSlot{}, s.gate), leave, nil
}
