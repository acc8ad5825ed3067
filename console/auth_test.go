package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/workspace"
)

// signInForm posts the sign-in form as a person would: the page first,
// then the form with its token.
func (b *browser) signIn(email, password string) response {
	b.e.t.Helper()
	return b.post("/app/signin", "/app/signin", url.Values{"email": {email}, "password": {password}})
}

func TestSignInAndOut(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		e.member("sdr@acme.test", apikit.RoleMember)

		b := e.browser()
		r := b.get("/app/leads?stage_id=x")
		is.Equal(r.code, http.StatusSeeOther)
		is.Equal(r.header.Get("Location"), "/app/signin?next=%2Fapp%2Fleads%3Fstage_id%3Dx")
		r = b.get(r.header.Get("Location"))
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, `name="next" value="/app/leads?stage_id=x"`))

		// A wrong password and an unknown email get the same answer, and
		// the email typed is kept.
		wrong := b.signIn("sdr@acme.test", "not the password")
		unknown := b.signIn("nobody@acme.test", testPassword)
		is.Equal(wrong.code, http.StatusUnauthorized)
		is.Equal(unknown.code, http.StatusUnauthorized)
		msg := regexp.MustCompile(`(?s)<div class="error" role="alert">.*?</div>`)
		is.Equal(msg.FindString(wrong.body), msg.FindString(unknown.body))
		is.True(strings.Contains(wrong.body, "The email or the password is not right."))
		is.True(strings.Contains(wrong.body, `value="sdr@acme.test"`))

		// Session fixation: a session id planted before signing in is
		// never the one after.
		u, _ := url.Parse(e.srv.URL + "/app/")
		b.http.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: "planted-by-someone", Path: "/app/"}})
		ok := b.post("/app/signin", "/app/signin", url.Values{"email": {"sdr@acme.test"}, "password": {testPassword}, "next": {"/app/leads?stage_id=x"}})
		is.Equal(ok.code, http.StatusSeeOther)
		is.Equal(ok.header.Get("Location"), "/app/leads?stage_id=x")
		first := b.cookie(sessionCookie)
		is.True(first != "" && first != "planted-by-someone")
		is.Equal(b.get("/app/leads").code, http.StatusOK)

		// The cookie's flags: HttpOnly, SameSite=Lax, the console's path;
		// not Secure on loopback over HTTP.
		var set string
		for _, c := range ok.header.Values("Set-Cookie") {
			if strings.HasPrefix(c, sessionCookie+"=") {
				set = c
			}
		}
		is.True(strings.Contains(set, "HttpOnly"))
		is.True(strings.Contains(set, "SameSite=Lax"))
		is.True(strings.Contains(set, "Path=/app/"))
		is.True(!strings.Contains(set, "Secure"))

		// Signing in again gives a new session and ends the old one.
		again := b.signIn("sdr@acme.test", testPassword)
		is.Equal(again.code, http.StatusSeeOther)
		second := b.cookie(sessionCookie)
		is.True(second != first)
		stale := e.browser()
		stale.http.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: first, Path: "/app/"}})
		is.Equal(stale.get("/app/leads").code, http.StatusSeeOther)

		// Signing out ends the session: its cookie no longer opens a page.
		out := b.post("/app/leads", "/app/signout", nil)
		is.Equal(out.code, http.StatusSeeOther)
		is.Equal(out.header.Get("Location"), "/app/signin?out")
		is.Equal(b.cookie(sessionCookie), "")
		stale.http.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: second, Path: "/app/"}})
		is.Equal(stale.get("/app/leads").code, http.StatusSeeOther)
		is.True(strings.Contains(b.get("/app/signin?out").body, "You signed out."))

		// A next that leaves the console is ignored.
		evil := b.post("/app/signin", "/app/signin", url.Values{"email": {"sdr@acme.test"}, "password": {testPassword}, "next": {"//evil.example/app/"}})
		is.Equal(evil.header.Get("Location"), "/app/")
	})
}

func TestSecureCookiesOffLoopback(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := &Console{}
	for host, want := range map[string]bool{"127.0.0.1:8080": false, "localhost": false, "[::1]:80": false,
		"leadline.example.com": true, "10.0.0.5:8080": true, "": true} {
		r, _ := http.NewRequest(http.MethodGet, "http://x/app/", nil)
		r.Host = host
		is.Equal(c.secure(r), want) // host
	}
}

// TestSecureCookiesBehindAProxy: with a public https URL, every cookie
// the console sets is Secure, though the proxy in front sends plain HTTP
// to the internal address; with a public http URL, none is.
func TestSecureCookiesBehindAProxy(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	token := e.invite("acme", "sdr@acme.test", apikit.RoleMember)
	for _, public := range []string{"https://leadline.example.com", "http://leadline.example.com"} {
		want := strings.HasPrefix(public, "https:")
		behind := httptest.NewServer(newConsole(e.pl, Options{PublicURL: public}))
		defer behind.Close()
		is.True(strings.HasPrefix(behind.URL, "http://127.0.0.1:")) // the Host a proxy would pass
		u, _ := url.Parse(behind.URL)
		b := e.browser()
		b.e = &env{t: t, pl: e.pl, clock: e.clock, srv: behind}
		// carry checks the cookies an answer sets, and keeps them in the
		// jar as not Secure: the jar sends a Secure one over https only.
		carry := func(r response) (names []string) {
			t.Helper()
			for _, c := range (&http.Response{Header: r.header}).Cookies() {
				is.Equal(c.Secure, want) // c.Name
				plain := *c
				plain.Secure = false
				b.http.Jar.SetCookies(u, []*http.Cookie{&plain})
				names = append(names, c.Name)
			}
			return names
		}
		page := b.get("/app/signin")
		is.Equal(carry(page), []string{preCookie})
		if token != "" {
			r := b.postForm("/app/invite/"+token, url.Values{"password": {testPassword}, "confirm": {testPassword}}, page.csrf())
			is.Equal(r.code, http.StatusSeeOther)
			is.Equal(carry(r), []string{sessionCookie, preCookie}) // the pre-session's cleared
			token = ""
			page = b.get("/app/signin")
			carry(page)
		}
		r := b.postForm("/app/signin", url.Values{"email": {"sdr@acme.test"}, "password": {testPassword}}, page.csrf())
		is.Equal(r.code, http.StatusSeeOther)
		is.Equal(carry(r), []string{sessionCookie, preCookie})
		// The flash and sign-out's cleared cookies too.
		out := b.postForm("/app/signout", nil, b.get("/app/account").csrf())
		is.Equal(out.code, http.StatusSeeOther)
		is.Equal(carry(out), []string{sessionCookie, flashCookie})
	}
}

func TestFormsNeedTheirCSRFToken(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		boss := e.member("boss@acme.test", apikit.RoleManager)
		other := e.member("sdr@acme.test", apikit.RoleMember)
		othersToken := other.get("/app/leads").csrf()
		invite := url.Values{"email": {"new@acme.test"}, "role": {"member"}}
		for _, token := range []string{"", "forged", othersToken} {
			r := boss.postForm("/app/members/invite", invite, token)
			is.Equal(r.code, http.StatusForbidden)
			is.True(strings.Contains(r.body, "its security token is missing or out of date"))
			r = boss.postForm("/app/signout", nil, token)
			is.Equal(r.code, http.StatusForbidden)
		}
		is.Equal(boss.get("/app/leads").code, http.StatusOK) // still signed in
		// Another site's page is refused even with a token.
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/app/members/invite", strings.NewReader(url.Values{"email": {"x@acme.test"}, "role": {"member"},
			"csrf": {boss.get("/app/members").csrf()}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		is.Equal(boss.do(req).code, http.StatusForbidden)
		// The public URL's origin is this site, whatever Host a proxy passes.
		behind := httptest.NewServer(newConsole(e.pl, Options{PublicURL: "https://leadline.example.com"}))
		defer behind.Close()
		req, _ = http.NewRequest(http.MethodPost, behind.URL+"/app/members/invite", strings.NewReader(url.Values{"email": {"x@acme.test"}, "role": {"member"},
			"csrf": {boss.get("/app/members").csrf()}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://leadline.example.com")
		is.Equal(boss.do(req).code, http.StatusOK)
		// The sign-in form too: without its pre-session token, nothing is checked.
		anon := e.browser()
		r := anon.postForm("/app/signin", url.Values{"email": {"sdr@acme.test"}, "password": {testPassword}}, "")
		is.Equal(r.code, http.StatusForbidden)
		is.Equal(anon.cookie(sessionCookie), "")
		// With it, the form works.
		is.Equal(boss.post("/app/members", "/app/members/invite", invite).code, http.StatusOK)
	})
}

func TestSignInIsRateLimited(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	e.member("sdr@acme.test", apikit.RoleMember)
	b := e.browser()
	for range DefaultSignInLimits.PerAccount {
		is.Equal(b.signIn("sdr@acme.test", "wrong password").code, http.StatusUnauthorized)
	}
	// Past the limit, even the right password is refused, and so is an
	// unknown email that failed as often.
	r := b.signIn("sdr@acme.test", testPassword)
	is.Equal(r.code, http.StatusTooManyRequests)
	is.True(strings.Contains(r.body, "Too many failed sign-ins"))
	for range DefaultSignInLimits.PerAccount {
		b.signIn("ghost@acme.test", "wrong password")
	}
	is.Equal(b.signIn("ghost@acme.test", "wrong password").code, http.StatusTooManyRequests)
	// Per address: 50 failures from one address stop every account.
	for i := range DefaultSignInLimits.PerAddress {
		b.signIn("x"+strings.Repeat("y", i)+"@acme.test", "wrong password")
	}
	is.Equal(b.signIn("owner@acme.test", "wrong password").code, http.StatusTooManyRequests)
	// The window ends.
	e.clock.Advance(DefaultSignInLimits.Window)
	is.Equal(b.signIn("sdr@acme.test", testPassword).code, http.StatusSeeOther)
}

func TestSessionsEndAfter12HoursIdle(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	b := e.member("sdr@acme.test", apikit.RoleMember)
	e.clock.Advance(11 * time.Hour)
	is.Equal(b.get("/app/leads").code, http.StatusOK)
	e.clock.Advance(11 * time.Hour)
	is.Equal(b.get("/app/leads").code, http.StatusOK)
	e.clock.Advance(12 * time.Hour)
	r := b.get("/app/leads")
	is.Equal(r.code, http.StatusSeeOther)
	is.True(strings.HasPrefix(r.header.Get("Location"), "/app/signin"))
	is.Equal(b.cookie(sessionCookie), "") // cleared
}

func TestInvitePage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		token := e.invite("acme", "vera@globex.test", apikit.RoleClientViewer, "Globex")
		b := e.browser()
		page := b.get("/app/invite/" + token)
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(page.body, "<strong>acme</strong>"))
		is.True(strings.Contains(page.body, "for the client Globex"))
		r := b.postForm("/app/invite/"+token, url.Values{"password": {testPassword}, "confirm": {testPassword + "x"}}, page.csrf())
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "The two passwords differ."))
		r = b.postForm("/app/invite/"+token, url.Values{"password": {"short"}, "confirm": {"short"}}, page.csrf())
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "The password has 5 characters; it needs at least 12."))
		is.True(strings.Contains(r.body, "Choose a password of 12 characters or more"))
		r = b.postForm("/app/invite/"+token, url.Values{"password": {testPassword}, "confirm": {testPassword}}, page.csrf())
		is.Equal(r.code, http.StatusSeeOther)
		is.True(strings.Contains(b.get("/app/leads").body, "vera@globex.test · acme · client_viewer"))
		// Used: the link shows why it no longer works.
		r = e.browser().get("/app/invite/" + token)
		is.Equal(r.code, http.StatusNotFound)
		is.True(strings.Contains(r.body, "This invite link is not valid"))
		is.True(strings.Contains(r.body, "Ask a manager of the workspace for a new invite"))
	})
}

func TestMembersPage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		boss := e.member("boss@acme.test", apikit.RoleManager)
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		page := boss.get("/app/members")
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(page.body, "owner@acme.test"))
		is.True(!strings.Contains(page.body, `<option value="owner"`)) // above a manager
		is.True(!strings.Contains(sdr.get("/app/leads").body, `href="/app/members"`))
		r := sdr.get("/app/members")
		is.Equal(r.code, http.StatusForbidden)
		is.True(strings.Contains(r.body, "This needs the manager role; you are a member."))

		r = boss.post("/app/members", "/app/members/invite", url.Values{"email": {"Vera@Globex.test"}, "role": {"client_viewer"}, "client": {"Globex"}})
		is.Equal(r.code, http.StatusOK)
		link := regexp.MustCompile(`<output class="secret" id="invite-link">([^<]+)</output>`).FindStringSubmatch(r.body)
		is.True(link != nil)
		is.True(strings.HasPrefix(link[1], e.srv.URL+"/app/invite/"))
		is.True(regexp.MustCompile(`<tr><td>vera@globex.test</td><td>client_viewer</td><td>Globex</td><td>2026-11-03 10:15</td></tr>`).MatchString(r.body))
		is.True(strings.Contains(boss.get("/app/members").body, "<td>vera@globex.test</td>")) // pending
		v := e.browser()
		invite := v.get(strings.TrimPrefix(link[1], e.srv.URL))
		is.Equal(invite.code, http.StatusOK)
		is.True(strings.Contains(invite.body, "vera@globex.test"))

		// A refusal keeps what was typed and says why, with the remedy.
		r = boss.post("/app/members", "/app/members/invite", url.Values{"email": {"someone@acme.test"}, "role": {"owner"}})
		is.Equal(r.code, http.StatusForbidden)
		is.True(strings.Contains(r.body, "A manager cannot invite someone as owner."))
		is.True(strings.Contains(r.body, "Choose a role no higher than your own."))
		is.True(strings.Contains(r.body, `value="someone@acme.test"`))
		// The sdr's POST is refused by its role.
		r = sdr.post("/app/leads", "/app/members/invite", url.Values{"email": {"x@acme.test"}, "role": {"member"}})
		is.Equal(r.code, http.StatusForbidden)
	})
}

// TestSignInLimitsAcrossReplicas: two processes serving the console on
// one database count failed sign-ins together, on both engines.
func TestSignInLimitsAcrossReplicas(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		e.member("sdr@acme.test", apikit.RoleMember)
		other := platform.New(platform.Config{DB: d, Clock: e.clock, Logger: e.pl.Logger, SecretKey: secret.TestKey()})
		other.Workspaces.SetPasswordParams(workspace.PasswordParams{Time: 1, Memory: 256, Threads: 1})
		second := httptest.NewServer(newConsole(other, Options{}))
		defer second.Close()
		a, b := e.browser(), e.browser()
		viaSecond := func(br *browser) *browser { // the same browser, sent to the second process
			c := *br
			c.e = &env{t: t, pl: other, clock: e.clock, srv: second, c: nil}
			return &c
		}
		for i := range DefaultSignInLimits.PerAccount {
			br := a
			if i%2 == 1 {
				br = viaSecond(b)
			}
			is.Equal(br.signIn("sdr@acme.test", "wrong password").code, http.StatusUnauthorized)
		}
		is.Equal(a.signIn("sdr@acme.test", testPassword).code, http.StatusTooManyRequests)
		is.Equal(viaSecond(b).signIn("sdr@acme.test", testPassword).code, http.StatusTooManyRequests)
		e.clock.Advance(DefaultSignInLimits.Window)
		is.Equal(viaSecond(b).signIn("sdr@acme.test", testPassword).code, http.StatusSeeOther)
		// A success clears the account's count for both.
		for range DefaultSignInLimits.PerAccount - 1 {
			is.Equal(a.signIn("sdr@acme.test", "wrong password").code, http.StatusUnauthorized)
		}
		is.Equal(viaSecond(b).signIn("sdr@acme.test", testPassword).code, http.StatusSeeOther)
		is.Equal(a.signIn("sdr@acme.test", "wrong password").code, http.StatusUnauthorized)
		is.Equal(a.signIn("sdr@acme.test", testPassword).code, http.StatusSeeOther)
	})
}
