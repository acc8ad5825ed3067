package console

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/workspace"
)

// SignInLimits bound failed sign-ins, per address and per account (the
// email typed), in a window: past them, sign-in is refused until the
// window ends, whatever the password, and whether the email is known or
// not. The counts live in the database (workspace.Service's
// FailedSignIns), so every replica serving the console counts together.
type SignInLimits struct {
	PerAddress int
	PerAccount int
	Window     time.Duration
}

// DefaultSignInLimits: 10 failures per account and 50 per address in 15
// minutes.
var DefaultSignInLimits = SignInLimits{PerAddress: 50, PerAccount: 10, Window: 15 * time.Minute}

// signInLimiter applies the limits to the counts the workspace service
// keeps.
type signInLimiter struct {
	clock  apikit.Clock
	limits SignInLimits
	ws     *workspace.Service
}

func newSignInLimiter(clock apikit.Clock, l SignInLimits, ws *workspace.Service) *signInLimiter {
	return &signInLimiter{clock: clock, limits: l, ws: ws}
}

func accountKey(email string) string { return "account " + strings.ToLower(strings.TrimSpace(email)) }
func addressKey(addr string) string  { return "address " + addr }

// check refuses a sign-in from addr for email when either has failed too
// often in its window.
func (l *signInLimiter) check(ctx context.Context, addr, email string) error {
	keys := []struct {
		key   string
		limit int
	}{{addressKey(addr), l.limits.PerAddress}, {accountKey(email), l.limits.PerAccount}}
	counts, err := l.ws.FailedSignIns(ctx, []string{keys[0].key, keys[1].key}, l.limits.Window)
	if err != nil {
		return err
	}
	for _, k := range keys {
		f, ok := counts[k.key]
		if !ok || f.Failures < k.limit {
			continue
		}
		wait := max(1, int(math.Ceil(f.WindowStart.Add(l.limits.Window).Sub(l.clock.Now()).Minutes())))
		return &apikit.Error{Code: apikit.ERateLimited, Message: "Too many failed sign-ins from here or for this account.",
			Remedy: fmt.Sprintf("Wait %d minute%s and try again; if you forgot the password, ask a manager for a new invite link.", wait, map[bool]string{true: "", false: "s"}[wait == 1])}
	}
	return nil
}

// failed counts a failed sign-in from addr for email.
func (l *signInLimiter) failed(ctx context.Context, addr, email string) error {
	return l.ws.CountFailedSignIn(ctx, []string{addressKey(addr), accountKey(email)}, l.limits.Window)
}

// succeeded clears the account's failures.
func (l *signInLimiter) succeeded(ctx context.Context, email string) error {
	return l.ws.ForgetFailedSignIns(ctx, accountKey(email))
}
