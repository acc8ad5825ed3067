package console

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
)

// SignInLimits bound failed sign-ins, per address and per account (the
// email typed), in a window: past them, sign-in is refused until the
// window ends, whatever the password, and whether the email is known or
// not. The counts live in the process's memory: each replica counts its
// own.
type SignInLimits struct {
	PerAddress int
	PerAccount int
	Window     time.Duration
}

// DefaultSignInLimits: 10 failures per account and 50 per address in 15
// minutes.
var DefaultSignInLimits = SignInLimits{PerAddress: 50, PerAccount: 10, Window: 15 * time.Minute}

type signInLimiter struct {
	clock  apikit.Clock
	limits SignInLimits
	mu     sync.Mutex
	counts map[string]*failures
}

type failures struct {
	start time.Time
	n     int
}

// maxTracked bounds the memory of failures; past it, ended windows are
// dropped, and if none has ended the memory starts over.
const maxTracked = 100_000

func newSignInLimiter(clock apikit.Clock, l SignInLimits) *signInLimiter {
	return &signInLimiter{clock: clock, limits: l, counts: map[string]*failures{}}
}

func accountKey(email string) string { return "account " + strings.ToLower(strings.TrimSpace(email)) }
func addressKey(addr string) string  { return "address " + addr }

// check refuses a sign-in from addr for email when either has failed too
// often in its window.
func (l *signInLimiter) check(addr, email string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	for _, k := range []struct {
		key   string
		limit int
	}{{addressKey(addr), l.limits.PerAddress}, {accountKey(email), l.limits.PerAccount}} {
		f := l.counts[k.key]
		if f == nil || now.Sub(f.start) >= l.limits.Window || f.n < k.limit {
			continue
		}
		wait := int(math.Ceil(f.start.Add(l.limits.Window).Sub(now).Minutes()))
		return &apikit.Error{Code: apikit.ERateLimited, Message: "Too many failed sign-ins from here or for this account.",
			Remedy: fmt.Sprintf("Wait %d minute%s and try again; if you forgot the password, ask a manager for a new invite link.", wait, map[bool]string{true: "", false: "s"}[wait == 1])}
	}
	return nil
}

// failed counts a failed sign-in from addr for email.
func (l *signInLimiter) failed(addr, email string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	if len(l.counts) >= maxTracked {
		for k, f := range l.counts {
			if now.Sub(f.start) >= l.limits.Window {
				delete(l.counts, k)
			}
		}
		if len(l.counts) >= maxTracked {
			l.counts = map[string]*failures{}
		}
	}
	for _, k := range []string{addressKey(addr), accountKey(email)} {
		f := l.counts[k]
		if f == nil || now.Sub(f.start) >= l.limits.Window {
			f = &failures{start: now}
			l.counts[k] = f
		}
		f.n++
	}
}

// succeeded clears the account's failures.
func (l *signInLimiter) succeeded(email string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.counts, accountKey(email))
}
