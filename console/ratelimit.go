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
// ReserveSignIn), so every replica serving the console counts together,
// and each attempt is counted before its password is checked, so that
// attempts sent at once cannot pass a limit together.
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

// reserve counts a sign-in from addr for email before its password is
// checked (workspace.Service.ReserveSignIn), or refuses it when either
// has failed too often in its window. A wrong password leaves the attempt
// counted; release or succeeded gives it back.
func (l *signInLimiter) reserve(ctx context.Context, addr, email string) (*workspace.SignInAttempt, error) {
	att, full, err := l.ws.ReserveSignIn(ctx, []workspace.SignInLimit{
		{Key: addressKey(addr), Limit: l.limits.PerAddress}, {Key: accountKey(email), Limit: l.limits.PerAccount}}, l.limits.Window)
	if err != nil || full == nil {
		return att, err
	}
	wait := max(time.Second, full.WindowStart.Add(l.limits.Window).Sub(l.clock.Now()))
	mins := int(math.Ceil(wait.Minutes()))
	return nil, apikit.WithRetryAfter(&apikit.Error{Code: apikit.ERateLimited, Message: "Too many failed sign-ins from here or for this account.",
		Remedy: fmt.Sprintf("Wait %d minute%s and try again; if you forgot the password, ask a manager for a new invite link.", mins, map[bool]string{true: "", false: "s"}[mins == 1])}, wait)
}

// release gives back an attempt that did not fail on its password.
func (l *signInLimiter) release(ctx context.Context, att *workspace.SignInAttempt) error {
	return l.ws.ReleaseSignIn(ctx, att)
}

// succeeded gives back the attempt and clears the account's failures.
func (l *signInLimiter) succeeded(ctx context.Context, att *workspace.SignInAttempt, email string) error {
	return l.ws.ReleaseSignIn(ctx, att, accountKey(email))
}
