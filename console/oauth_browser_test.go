package console

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/browsertest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/oauthtest"
)

// passDomainChecks makes the test mail domain (leadline.test) pass the
// senders' domain checks (MX, SPF, DMARC, DKIM), so that a mailbox's
// health is about its account.
func (e *env) passDomainChecks() {
	e.t.Helper()
	e.dns.Add(e.t, "leadline.test. 300 IN MX 10 mx.leadline.test.", "mx.leadline.test. 300 IN A 192.0.2.25")
	e.dns.TXT("leadline.test", "v=spf1 ip4:192.0.2.0/24 -all")
	e.dns.TXT("_dmarc.leadline.test", "v=DMARC1; p=quarantine")
	e.dns.TXT("google._domainkey.leadline.test", "v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")
}

// registerAppInChromium registers as's client as the workspace's Google
// app in Settings › Mail providers, the secret typed in, with the
// authorization endpoint on another site (localhost) than the console
// (127.0.0.1), as a provider's is: the session cookie comes back with a
// cross-site redirect.
func registerAppInChromium(t *testing.T, p *browsertest.Page, e *env, as *oauthtest.Server) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	base := e.srv.URL + "/app"
	authURL := strings.Replace(as.URL, "127.0.0.1", "localhost", 1) + "/authorize"
	p.Do(chromedp.Navigate(base+"/settings/mail"), chromedp.WaitVisible(chromedp.ID("google-client-id")),
		chromedp.SendKeys(chromedp.ID("google-client-id"), as.ClientID), chromedp.SendKeys(chromedp.ID("google-secret"), as.ClientSecret),
		chromedp.SendKeys(chromedp.ID("google-auth-url"), authURL), chromedp.SendKeys(chromedp.ID("google-token-url"), as.URL+"/token"),
		chromedp.Click(chromedp.ID("save-google")), chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	is.Equal(text(p, ".flash"), "The Google app is saved.")
	is.Equal(text(p, "#callback"), base+"/oauth/callback") // the redirect URI to register
	is.True(strings.Contains(text(p, "#h-google + p"), "client id leadline-test-client, secret stored sealed"))
	is.True(!strings.Contains(browsertest.Get(p, chromedp.Evaluate[string](`document.documentElement.outerHTML`)), as.ClientSecret))
}

// connectInChromium presses the Connect (or Reconnect) button on the page
// of sender id (the page that is open), which the authorization server
// approves as address; it sees the account connected on the callback's
// page, follows its link to the sender's page and sees it there, healthy.
func connectInChromium(t *testing.T, p *browsertest.Page, e *env, id, address string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	base := e.srv.URL + "/app"
	p.Do(chromedp.Click(chromedp.ID("connect-google")), chromedp.WaitVisible(chromedp.ID("connected")))
	is.True(strings.HasPrefix(location(p), base+"/oauth/callback?"))
	is.Equal(text(p, "h1"), "Google account connected")
	is.True(strings.Contains(text(p, "#connected"), "Sender Google box ("+address+") now signs in to its mail servers with the Google account."))
	p.Do(chromedp.Click(chromedp.CSS(`main a[href$="/senders/`+id+`"]`)), chromedp.WaitVisible(chromedp.ID("connect-google")))
	is.Equal(location(p), base+"/senders/"+id)
	is.True(strings.Contains(text(p, "#account"), "Connected with Google on "))
	is.Equal(text(p, "#connect-google"), "Reconnect Google account")
	is.Equal(text(p, "h1 .badge"), "healthy")
}

// TestBrowserConnectMailboxWithOAuth is issue 39's flow in Chromium: a
// manager registers the workspace's Google app in Settings › Mail
// providers, opens a mailbox whose servers sign in with the account
// (auth: oauth) and presses Connect Google account; the browser goes to
// the test authorization server, which answers at once for the account
// (it has no consent page), and comes back to the console's callback.
// Refused there first (access_denied), the manager reads what happened
// and what to do, and nothing is stored; allowed, the manager sees the
// account connected, then on the sender's page. The authorization server
// is another site than the console (localhost against 127.0.0.1), as
// Google is, so the session cookie comes back with a cross-site redirect.
// On both engines, unlike the other browser tests: the connect writes
// through the oauth package's own SQL.
func TestBrowserConnectMailboxWithOAuth(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEnv(t, d)
		as := oauthtest.Start(t, e.clock)
		e.passDomainChecks() // so that the mailbox's page is about the account
		id := e.oauthSender(e.member("ops@acme.test", apikit.RoleManager), "box@leadline.test", "127.0.0.1:1", "127.0.0.1:1")
		base := e.srv.URL + "/app"
		p := browsertest.Open(t)
		signIn(p, e, "boss@acme.test", apikit.RoleManager)

		registerAppInChromium(t, p, e, as)
		p.Screenshot("settings-mail")

		// The mailbox: no account yet.
		p.Do(chromedp.Navigate(base+"/senders/"+id), chromedp.WaitVisible(chromedp.ID("connect-google")))
		is.True(strings.Contains(text(p, "#account"), "No account connected."))
		is.Equal(text(p, "#connect-google"), "Connect Google account")

		// Refused at the provider: said, with the remedy; nothing stored.
		as.Approve("")
		p.Allow("status of 422")
		p.Do(chromedp.Click(chromedp.ID("connect-google")), chromedp.WaitNotPresent(chromedp.ID("connect-google")),
			chromedp.WaitVisible(chromedp.CSS(`.error[role="alert"]`)))
		is.True(strings.HasPrefix(location(p), base+"/oauth/callback?"))
		refusal := text(p, `.error[role="alert"]`)
		is.True(strings.Contains(refusal, "Access to the account was refused at Google (access_denied), so nothing was connected."))
		is.True(strings.Contains(refusal, "Start again from the sender's page (Connect account) and allow leadline to read and send the mailbox's mail"))
		conn, err := e.pl.OAuth.Connection(ctx, id)
		is.NoErr(err)
		is.True(conn == nil)
		tokens, err := d.NewSelect().Table("oauth_tokens").Count(ctx)
		is.NoErr(err)
		is.Equal(tokens, int64(0))
		p.Do(chromedp.Navigate(base+"/senders/"+id), chromedp.WaitVisible(chromedp.ID("connect-google")))
		is.True(strings.Contains(text(p, "#account"), "No account connected."))

		// Allowed: connected, and the sender's page says so.
		as.Approve("box@leadline.test")
		connectInChromium(t, p, e, id, "box@leadline.test")
		p.ScreenshotTop("sender-oauth")
		conn, err = e.pl.OAuth.Connection(ctx, id)
		is.NoErr(err)
		is.True(conn != nil && conn.Provider == "google" && conn.RefusedAt == nil)
	})
}
