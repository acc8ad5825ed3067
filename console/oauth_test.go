package console

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/oauthtest"
	"github.com/leadline/leadline/oauth"
)

// oauthSender connects a mailbox whose servers sign in with the account
// connected at Google, as boss, and returns its id.
func (e *env) oauthSender(boss *browser, address, smtp, imap string) string {
	e.t.Helper()
	host, port := splitAddr(smtp)
	ihost, iport := splitAddr(imap)
	return e.connect(boss, url.Values{"name": {"Google box"}, "channel": {"email"}, "address": {address}, "transport": {"smtp"},
		"status": {"active"}, "timezone": {"UTC"}, "schedule.mon": {"00:00-24:00"},
		"smtp.host": {host}, "smtp.port": {port}, "smtp.security": {"none"}, "smtp.username": {address}, "smtp.auth": {"oauth"},
		"smtp.oauth_provider": {"google"}, "imap.host": {ihost}, "imap.port": {iport}, "imap.security": {"none"},
		"imap.username": {address}, "imap.auth": {"oauth"}, "imap.oauth_provider": {"google"}, "imap.inbox": {"INBOX"}, "imap.sent": {"Sent"}})
}

func splitAddr(a string) (string, string) {
	h, p, _ := strings.Cut(a, ":")
	return h, p
}

// registerApp registers as's client as the workspace's Google app on the
// Mail providers page.
func (e *env) registerApp(boss *browser, as *oauthtest.Server) response {
	e.t.Helper()
	return boss.post("/app/settings/mail", "/app/settings/mail", url.Values{"provider": {"google"}, "client_id": {as.ClientID},
		"secret": {as.ClientSecret}, "auth_url": {as.URL + "/authorize"}, "token_url": {as.URL + "/token"}})
}

// authorize follows a connect's redirect to the authorization server and
// returns where it sends the browser back (the callback, with the code).
func authorize(t *testing.T, connect response) string {
	t.Helper()
	if connect.code != http.StatusSeeOther {
		t.Fatalf("connect: %d %s", connect.code, connect.body)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(connect.header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %d", res.StatusCode)
	}
	return res.Header.Get("Location")
}

// TestMailProvidersAndConnect: a manager registers the Google app
// (refused input changes nothing, the typed secret is never shown), then
// connects a mailbox's account from its page; the callback finishes in
// the session that started it only, and once.
func TestMailProvidersAndConnect(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		logs := e.captureLogs()
		as := oauthtest.Start(t, e.clock)
		as.Approve("box@leadline.test")
		boss := e.member("boss@acme.test", apikit.RoleManager)
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		is.Equal(sdr.get("/app/settings/mail").code, http.StatusForbidden)

		page := boss.get("/app/settings/mail")
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(page.body, e.srv.URL+"/app/oauth/callback")) // the redirect URI to register
		r := boss.post("/app/settings/mail", "/app/settings/mail", url.Values{"provider": {"google"}, "client_id": {"id"}, "secret": {as.ClientSecret},
			"token_url": {"http://example.com/token"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "is not an https URL"))
		is.True(!strings.Contains(r.body, as.ClientSecret))
		apps, err := e.pl.OAuth.Apps(context.Background(), e.owner().WorkspaceID)
		is.NoErr(err)
		is.Equal(len(apps), 0) // nothing stored
		is.Equal(e.registerApp(boss, as).code, http.StatusSeeOther)
		page = boss.get("/app/settings/mail")
		is.True(strings.Contains(page.body, "stored sealed"))
		is.True(!strings.Contains(page.body, as.ClientSecret))

		id := e.oauthSender(boss, "box@leadline.test", "127.0.0.1:1", "127.0.0.1:1")
		page = boss.get("/app/senders/" + id)
		is.True(strings.Contains(page.body, "No account connected."))
		is.True(strings.Contains(page.body, `id="connect-google"`))
		is.True(!strings.Contains(page.body, `id="connect-microsoft"`)) // the settings name google
		is.Equal(boss.get("/app/senders/"+id+"/connect/yahoo").code, http.StatusUnprocessableEntity)
		is.Equal(sdr.get("/app/senders/"+id+"/connect/google").code, http.StatusForbidden)

		back := authorize(t, boss.get("/app/senders/"+id+"/connect/google"))
		is.True(strings.HasPrefix(back, e.srv.URL+"/app/oauth/callback?"))
		path := strings.TrimPrefix(back, e.srv.URL)
		is.Equal(sdr.get(path).code, http.StatusForbidden) // another session
		done := boss.get(path)
		is.Equal(done.code, http.StatusOK)
		is.True(strings.Contains(done.body, "Google account connected"))
		is.Equal(boss.get(path).code, http.StatusNotFound) // once
		page = boss.get("/app/senders/" + id)
		is.True(strings.Contains(page.body, "Connected with Google"))
		is.True(strings.Contains(page.body, "Reconnect Google account"))

		// A refused consent is said, and connects nothing new.
		as.Approve("")
		refused := boss.get(strings.TrimPrefix(authorize(t, boss.get("/app/senders/"+id+"/connect/google")), e.srv.URL))
		is.Equal(refused.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(refused.body, "access_denied"))

		var rows []string
		is.NoErr(d.NewSelect().Table("oauth_tokens").Column("refresh_token").Scan(context.Background(), &rows))
		is.Equal(len(rows), 1)
		is.True(strings.HasPrefix(rows[0], "sealed:"))
		is.True(!strings.Contains(logs.String(), as.ClientSecret))
	})
}

// TestOAuthCallbackAfterTheSweep: the callback of a connect whose link
// expired says so and what to do; once the runner's sweep deleted the
// connect, the callback says exactly the same.
func TestOAuthCallbackAfterTheSweep(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		as := oauthtest.Start(t, e.clock)
		as.Approve("box@leadline.test")
		boss := e.member("boss@acme.test", apikit.RoleManager)
		is.Equal(e.registerApp(boss, as).code, http.StatusSeeOther)
		id := e.oauthSender(boss, "box@leadline.test", "127.0.0.1:1", "127.0.0.1:1")
		path := strings.TrimPrefix(authorize(t, boss.get("/app/senders/"+id+"/connect/google")), e.srv.URL)

		e.clock.Advance(oauth.StateTTL)
		expired := boss.get(path)
		is.Equal(expired.code, http.StatusNotFound)
		is.True(strings.Contains(expired.body, "This connect link is unknown, was used already or expired (links last 15 minutes)."))
		is.True(strings.Contains(expired.body, "Start again from the sender&#39;s page (Connect account)"))
		is.NoErr(e.pl.Runner().Checks(context.Background()))
		var states int
		is.NoErr(d.NewSelect().Table("oauth_states").ColumnExpr("count(*)").Scan(context.Background(), &states))
		is.Equal(states, 0) // swept
		swept := boss.get(path)
		is.Equal(swept.code, expired.code)
		box := regexp.MustCompile(`(?s)<div class="error" role="alert">.*?</div>`)
		is.True(box.FindString(expired.body) != "")
		is.Equal(box.FindString(swept.body), box.FindString(expired.body))
	})
}
