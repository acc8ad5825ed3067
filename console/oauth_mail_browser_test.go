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
	"github.com/leadline/leadline/internal/mailtest"
)

// TestBrowserOAuthMailboxOnRealServers is issue 39's whole flow, in
// Chromium and on the real servers, everything on loopback: a manager
// registers the Google app in Settings › Mail providers and connects a
// mailbox of the test Postfix and Dovecot with Connect Google account on
// the sender's page; the browser goes to the test authorization server
// on the fixed port where Dovecot checks the XOAUTH2 tokens by
// introspection (on another site, localhost, as a provider is), comes
// back to the callback and on to the connected sender's page. With the
// token that connect obtained, a message goes out through Postfix; the
// lead's reply is read over IMAP with a token refreshed mid-run (the
// fake clock passes the first token's hour); a token the server stops
// honouring is replaced once. The grant is revoked: the sender's page
// shows it disconnected, auth_failed with the remedy to reconnect; the
// manager reconnects there and the mailbox is usable again at once. On
// both engines. Skipped, saying why, without the test mail servers or
// Chromium.
func TestBrowserOAuthMailboxOnRealServers(t *testing.T) {
	t.Parallel()
	mailtest.Servers(t) // skips without the servers
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		m := newOAuthMail(t, d)
		base := m.e.srv.URL + "/app"
		p := browsertest.Open(t)
		signIn(p, m.e, "boss@acme.test", apikit.RoleManager)
		registerAppInChromium(t, p, m.e, m.as)

		// The mailbox's page: Connect, the provider's redirect back, the
		// connected sender.
		p.Do(chromedp.Navigate(base+"/senders/"+m.id), chromedp.WaitVisible(chromedp.ID("connect-google")))
		is.True(strings.Contains(text(p, "#account"), "No account connected."))
		is.Equal(text(p, "#connect-google"), "Connect Google account")
		connectInChromium(t, p, m.e, m.id, m.box.Address)
		conn, err := m.e.pl.OAuth.Connection(context.Background(), m.id)
		is.NoErr(err)
		is.True(conn != nil && conn.Provider == "google" && conn.RefusedAt == nil)

		// Mail with the connected account's tokens.
		m.sendAndReadReply(t)
		m.replacedOnce(t)

		// Revoked: the sender's page says auth_failed and how to recover.
		m.revoke(t)
		p.Do(chromedp.Navigate(base+"/senders/"+m.id), chromedp.WaitVisible(chromedp.ID("connect-google")))
		is.Equal(text(p, "h1 .badge"), "disconnected")
		health := text(p, `section[aria-labelledby="h-sender"] h3 + ul`)
		is.True(strings.Contains(health, "(auth_failed)"))
		is.True(strings.Contains(health, "reconnect"))
		is.True(strings.HasPrefix(text(p, "#account"), "The provider refused the connection on "))
		is.True(strings.HasSuffix(text(p, "#account"), ": reconnect it."))
		is.Equal(text(p, "#connect-google"), "Reconnect Google account")

		// Reconnected in the browser: healthy, and usable at once.
		m.as.Approve(m.box.Address)
		connectInChromium(t, p, m.e, m.id, m.box.Address)
		m.reconnected(t)
	})
}
