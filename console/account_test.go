package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

func TestChangePassword(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		b := e.member("viewer@acme.test", apikit.RoleClientViewer, "Globex")
		elsewhere := e.browser()
		is.Equal(elsewhere.signIn("viewer@acme.test", testPassword).code, http.StatusSeeOther)

		// Every role has the page, linked from the header of every page.
		page := b.get("/app/account")
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(b.get("/app/leads").body, `href="/app/account"`))
		is.True(strings.Contains(page.body, `autocomplete="current-password"`))

		const next = "a new long passphrase"
		change := func(b *browser, current, password, confirm string) response {
			return b.post("/app/account", "/app/account/password", url.Values{"current": {current}, "password": {password}, "confirm": {confirm}})
		}
		// Refusals say why, change nothing and keep the member signed in.
		r := change(b, "not the password", next, next)
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "The current password is not right."))
		r = change(b, testPassword, next, next+"!")
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "The two new passwords differ."))
		r = change(b, testPassword, "short", "short")
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "it needs at least"))
		is.True(!strings.Contains(r.body, testPassword)) // nothing typed is sent back
		is.Equal(elsewhere.get("/app/leads").code, http.StatusOK)
		is.Equal(e.browser().signIn("viewer@acme.test", testPassword).code, http.StatusSeeOther)

		// The change: a new session here, every other one ended, the old
		// password no longer signs in and the new one does.
		before := b.cookie(sessionCookie)
		r = change(b, testPassword, next, next)
		is.Equal(r.code, http.StatusSeeOther)
		is.Equal(r.header.Get("Location"), "/app/account")
		is.True(b.cookie(sessionCookie) != before)
		done := b.get("/app/account")
		is.Equal(done.code, http.StatusOK)
		is.True(strings.Contains(done.body, "Your password is changed."))
		is.Equal(elsewhere.get("/app/leads").code, http.StatusSeeOther)
		stale := e.browser()
		u, _ := url.Parse(e.srv.URL + "/app/")
		stale.http.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: before, Path: "/app/"}})
		is.Equal(stale.get("/app/leads").code, http.StatusSeeOther)
		is.Equal(e.browser().signIn("viewer@acme.test", testPassword).code, http.StatusUnauthorized)
		is.Equal(e.browser().signIn("viewer@acme.test", next).code, http.StatusSeeOther)
	})
}

// A session left open must not become a way to guess the password: wrong
// current passwords count against the account's sign-in limit.
func TestChangePasswordIsRateLimited(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	b := e.member("sdr@acme.test", apikit.RoleMember)
	form := func(current string) url.Values {
		return url.Values{"current": {current}, "password": {"a new long passphrase"}, "confirm": {"a new long passphrase"}}
	}
	for range DefaultSignInLimits.PerAccount {
		is.Equal(b.post("/app/account", "/app/account/password", form("wrong")).code, http.StatusUnprocessableEntity)
	}
	r := b.post("/app/account", "/app/account/password", form(testPassword))
	is.Equal(r.code, http.StatusTooManyRequests)
	is.True(strings.Contains(r.body, "Too many failed sign-ins"))
	is.Equal(e.browser().signIn("sdr@acme.test", testPassword).code, http.StatusTooManyRequests)
	e.clock.Advance(DefaultSignInLimits.Window)
	is.Equal(b.post("/app/account", "/app/account/password", form(testPassword)).code, http.StatusSeeOther)
}
