package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/workspace"
)

// TestParallelSignInsKeepTheLimit: wrong passwords sent at once, each
// from its own browser with its own pre-session, get "not right" as many
// times as the account's limit and no more, on both engines; then even
// the right password waits.
func TestParallelSignInsKeepTheLimit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		e.member("sdr@acme.test", apikit.RoleMember)
		// Room for every one at once: this test is about the count.
		const tries = 2 * 10
		e.pl.Workspaces.SetPasswordGate(workspace.NewPasswordGate(tries, 0))
		type form struct {
			b    *browser
			csrf string
		}
		forms := make([]form, tries)
		for i := range forms {
			b := e.browser()
			forms[i] = form{b, b.get("/app/signin").csrf()}
		}
		codes := make([]int, tries)
		var wg sync.WaitGroup
		for i, f := range forms {
			wg.Go(func() {
				codes[i] = f.b.postForm("/app/signin", url.Values{"email": {"sdr@acme.test"}, "password": {"wrong password"}}, f.csrf).code
			})
		}
		wg.Wait()
		n := map[int]int{}
		for _, c := range codes {
			n[c]++
		}
		is.Equal(n, map[int]int{http.StatusUnauthorized: DefaultSignInLimits.PerAccount, http.StatusTooManyRequests: tries - DefaultSignInLimits.PerAccount})
		r := e.browser().signIn("sdr@acme.test", testPassword)
		is.Equal(r.code, http.StatusTooManyRequests)
		is.True(r.header.Get("Retry-After") != "")
	})
}

// TestPasswordGateRefusesOnTheForm: while every slot of the password gate
// is taken, sign-in, an invite and a password change are refused at once
// with 429 and a Retry-After, on their form; the refused sign-in counts
// against no limit.
func TestPasswordGateRefusesOnTheForm(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	sdr := e.member("sdr@acme.test", apikit.RoleMember)
	token := e.invite("acme", "new@acme.test", apikit.RoleMember)
	gate := workspace.NewPasswordGate(1, 0)
	e.pl.Workspaces.SetPasswordGate(gate)
	leave, err := gate.Enter(context.Background())
	is.NoErr(err)
	busy := func(r response, form string) {
		t.Helper()
		is.Equal(r.code, http.StatusTooManyRequests)
		is.Equal(r.header.Get("Retry-After"), "1")
		is.True(strings.Contains(r.body, "Too many passwords are being checked right now."))
		is.True(strings.Contains(r.body, "Wait a second and send the form again."))
		is.True(strings.Contains(r.body, form)) // the form is shown again
	}
	anon := e.browser()
	for range DefaultSignInLimits.PerAccount + 1 {
		busy(anon.signIn("sdr@acme.test", "wrong password"), `value="sdr@acme.test"`)
	}
	b := e.browser()
	busy(b.postForm("/app/invite/"+token, url.Values{"password": {testPassword}, "confirm": {testPassword}}, b.get("/app/invite/"+token).csrf()), `value="new@acme.test" autocomplete="username" readonly`)
	busy(sdr.post("/app/account", "/app/account/password", url.Values{"current": {testPassword}, "password": {"a new long passphrase"}, "confirm": {"a new long passphrase"}}),
		`action="/app/account/password"`)
	leave()
	// None of the refused sign-ins was counted: one more wrong password
	// is "not right", and the right one signs in.
	is.Equal(anon.signIn("sdr@acme.test", "wrong password").code, http.StatusUnauthorized)
	is.Equal(anon.signIn("sdr@acme.test", testPassword).code, http.StatusSeeOther)
}

// TestInvisiblePasswordsAreRefused: a password of zero-width spaces is
// refused on the invite's form, with why.
func TestInvisiblePasswordsAreRefused(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	token := e.invite("acme", "new@acme.test", apikit.RoleMember)
	b := e.browser()
	zw := strings.Repeat("\u200b", 12)
	r := b.postForm("/app/invite/"+token, url.Values{"password": {zw}, "confirm": {zw}}, b.get("/app/invite/"+token).csrf())
	is.Equal(r.code, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, "The password shows no visible character"))
	is.Equal(b.cookie(sessionCookie), "")
}
