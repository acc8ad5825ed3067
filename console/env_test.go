package console

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dnstest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/transports/email"
	"github.com/leadline/leadline/workspace"
)

// The console's test world: a workspace on a fake clock, the console on
// a loopback server, and browsers (cookie jars) signed in as members. Page
// tests of every area start from newEnv; browser tests too
// (browser_test.go).

// t0 is when every test's clock starts: a Monday morning in Berlin.
var t0 = time.Date(2026, 11, 2, 9, 15, 0, 0, time.UTC)

const testSetup = `
workspaces:
  - name: acme
    timezone: Europe/Berlin
    plan: pro
    members:
      - {email: owner@acme.test, role: owner}
      - {email: boss@acme.test, role: manager}
      - {email: sdr@acme.test, role: member}
    clients: [Globex, Initech]
    stages: [New, Contacted]
    tags: [vip, cold]
    lists: [Berlin CTOs]
  - name: other
    timezone: UTC
    plan: pro
    members:
      - {email: owner@other.test, role: owner}
    clients: [Hooli]
`

// testPassword is every test member's password.
const testPassword = "correct horse battery"

type env struct {
	t     testing.TB
	pl    *platform.Platform
	clock *apikit.FakeClock
	srv   *httptest.Server
	c     *Console
	// dns answers the email senders' domain checks: no test asks the
	// real DNS.
	dns *dnstest.Server
}

func newEnv(t testing.TB, d *db.DB) *env {
	t.Helper()
	ctx := context.Background()
	clock := apikit.NewFakeClock(t0)
	f, err := setup.Decode(strings.NewReader(testSetup))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Apply(ctx, d, clock, secret.TestKey(), f); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pl := platform.New(platform.Config{DB: d, Clock: clock, Logger: logger, SecretKey: secret.TestKey()})
	// Cheap hashes: the tests sign in often, under the race detector.
	pl.Workspaces.SetPasswordParams(workspace.PasswordParams{Time: 1, Memory: 256, Threads: 1})
	dns := dnstest.Start(t)
	c := newConsole(pl, Options{DNS: email.ResolverAt(dns.Addr)})
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return &env{t: t, pl: pl, clock: clock, srv: srv, c: c, dns: dns}
}

// testLog shows the console's warnings in the test's output.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// invite invites email to workspace ws as the command line does and
// returns the invite token.
func (e *env) invite(ws, email string, role apikit.Role, clients ...string) string {
	e.t.Helper()
	_, token, err := e.pl.Workspaces.Invite(context.Background(), workspace.InviteInput{Workspace: ws, Email: email, Role: role, Clients: clients})
	if err != nil {
		e.t.Fatal(err)
	}
	return token
}

// browser is a cookie jar on the console's server.
type browser struct {
	e    *env
	http *http.Client
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// member is a browser signed in as a member of acme (or of ws, when it is
// given as "ws:email") with role and clients, through an invite link.
func (e *env) member(email string, role apikit.Role, clients ...string) *browser {
	e.t.Helper()
	ws := "acme"
	if w, em, ok := strings.Cut(email, ":"); ok {
		ws, email = w, em
	}
	token := e.invite(ws, email, role, clients...)
	b := e.browser()
	page := b.get("/app/invite/" + token)
	if page.code != http.StatusOK {
		e.t.Fatalf("invite page: %d %s", page.code, page.body)
	}
	res := b.postForm("/app/invite/"+token, url.Values{"password": {testPassword}, "confirm": {testPassword}}, page.csrf())
	if res.code != http.StatusSeeOther {
		e.t.Fatalf("accept invite: %d %s", res.code, res.body)
	}
	return b
}

// response is an answer, read whole.
type response struct {
	code   int
	header http.Header
	body   string
	t      testing.TB
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of the page's forms.
func (r response) csrf() string {
	m := csrfInput.FindStringSubmatch(r.body)
	if m == nil {
		r.t.Fatalf("no CSRF field in the page: %s", r.body)
	}
	return m[1]
}

func (b *browser) do(req *http.Request) response {
	b.e.t.Helper()
	res, err := b.http.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return response{code: res.StatusCode, header: res.Header, body: string(body), t: b.e.t}
}

func (b *browser) get(path string) response {
	b.e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.e.srv.URL+path, nil)
	return b.do(req)
}

// postForm posts form with the CSRF token csrf ("" sends none).
func (b *browser) postForm(path string, form url.Values, csrf string) response {
	b.e.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if csrf != "" {
		form.Set("csrf", csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, b.e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// post posts form to path with the CSRF token of the page at from.
func (b *browser) post(from, path string, form url.Values) response {
	b.e.t.Helper()
	return b.postForm(path, form, b.get(from).csrf())
}

// cookie is the value of the browser's cookie name, "" when it has none.
func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.e.srv.URL + "/app/")
	for _, c := range b.http.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}
