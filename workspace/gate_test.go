package workspace_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/workspace"
)

// TestPasswordGate: a gate lets its slots in, queues as many callers as
// its queue holds, and refuses the next at once with a Retry-After; a
// slot given back lets the first one waiting in.
func TestPasswordGate(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	g := workspace.NewPasswordGate(1, 1)
	leave, err := g.Enter(ctx)
	is.NoErr(err)
	waited := make(chan func())
	go func() {
		for {
			// Refused only while the probe below holds the queue.
			l, err := g.Enter(ctx)
			if apikit.ErrorCode(err) == apikit.ERateLimited {
				continue
			}
			if err != nil {
				t.Error(err)
			}
			waited <- l
			return
		}
	}()
	// A caller whose context has ended leaves the queue at once when
	// there is room in it; once the one above waits there, it is full.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	for {
		_, err = g.Enter(gone)
		if apikit.ErrorCode(err) == apikit.ERateLimited {
			break
		}
		is.Equal(err, context.Canceled)
	}
	wait, ok := apikit.RetryAfter(err)
	is.True(ok)
	is.Equal(wait, time.Second)
	leave()
	if l := <-waited; l != nil { // the one waiting got the slot
		l()
	}
	leave, err = g.Enter(ctx)
	is.NoErr(err)
	leave()
}

// TestPasswordsWaitForTheGate: signing in, accepting an invite and
// changing a password each hash under the service's gate, and are refused
// with E_RATE_LIMITED when it is full; nothing changes then.
func TestPasswordsWaitForTheGate(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)
		g := workspace.NewPasswordGate(1, 0)
		b.svc.SetPasswordGate(g)
		token := inviteMember(t, b, "sdr@acme.test")

		leave, err := g.Enter(ctx)
		is.NoErr(err)
		busy := func(err error) {
			t.Helper()
			is.Equal(code(err), apikit.ERateLimited)
			_, ok := apikit.RetryAfter(err)
			is.True(ok)
		}
		_, err = b.svc.AcceptInvite(ctx, token, pw)
		busy(err)
		leave()
		session, err := b.svc.AcceptInvite(ctx, token, pw) // the invite was not used
		is.NoErr(err)
		p, err := b.svc.SessionPrincipal(ctx, session)
		is.NoErr(err)

		leave, err = g.Enter(ctx)
		is.NoErr(err)
		for _, email := range []string{"sdr@acme.test", "nobody@acme.test"} {
			_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: email, Password: pw})
			busy(err)
		}
		_, err = b.svc.ChangePassword(ctx, p, pw, "a new long passphrase")
		busy(err)
		leave()
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "sdr@acme.test", Password: pw}) // unchanged
		is.NoErr(err)

		// A slot held for a caller serves its checks; others wait for it.
		held, leave, err := b.svc.HoldPasswordSlot(ctx)
		is.NoErr(err)
		_, err = b.svc.SignIn(held, workspace.SignInInput{Email: "sdr@acme.test", Password: pw})
		is.NoErr(err)
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "sdr@acme.test", Password: pw})
		busy(err)
		_, _, err = b.svc.HoldPasswordSlot(ctx)
		busy(err)
		leave()
	})
}
