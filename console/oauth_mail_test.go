package console

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/mailtest"
	"github.com/leadline/leadline/internal/oauthtest"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
)

// oauthMail is the world of the tests that connect a mailbox's account
// and mail with it on the real servers: a mailbox of its own on the test
// Postfix and Dovecot (box) and a lead's (lead), the test authorization
// server on the fixed port where Dovecot checks the XOAUTH2 tokens by
// introspection (approving as the box), a manager (ops, a cookie jar)
// and the box's sender, whose servers sign in with the account. The
// sender's domain passes its checks, so that its health is about the
// account.
type oauthMail struct {
	e         *env
	logs      *logs
	as        *oauthtest.Server
	box, lead mailtest.Box
	ops       *browser
	id        string // the sender
	tr        *email.Transport
	reader    *email.Reader
}

// newOAuthMail builds the world; it skips, saying why, without the test
// mail servers.
func newOAuthMail(t *testing.T, d *db.DB) *oauthMail {
	t.Helper()
	m := &oauthMail{box: mailtest.Mailbox(t), lead: mailtest.Mailbox(t)}
	m.e = newEnv(t, d)
	m.logs = m.e.captureLogs()
	m.as = oauthtest.StartForDovecot(t, m.e.clock)
	m.as.Approve(m.box.Address)
	m.e.passDomainChecks()
	m.ops = m.e.member("ops@acme.test", apikit.RoleManager)
	m.id = m.e.oauthSender(m.ops, m.box.Address, m.box.Servers.SMTP.Addr(), m.box.Servers.IMAP.Addr())
	m.tr = m.e.pl.Transports(platform.Outside{PublicURL: "https://leadline.example.test"})[email.Name].(*email.Transport)
	t.Cleanup(m.tr.Close)
	for _, r := range m.e.pl.Readers(nil) {
		if x, ok := r.(*email.Reader); ok {
			m.reader = x
		}
	}
	if m.reader == nil {
		t.Fatal("no email reader")
	}
	return m
}

// sender is the box's sender as it is stored now.
func (m *oauthMail) sender(t *testing.T) *senders.Sender {
	t.Helper()
	s, err := m.e.pl.Senders.Sender(context.Background(), m.id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sendAndReadReply sends the lead a message through Postfix (signed in
// with XOAUTH2, with the token the connect obtained), has the lead
// answer, lets the fake clock pass the first token's hour and reads the
// reply over IMAP with a refreshed token.
func (m *oauthMail) sendAndReadReply(t *testing.T) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := context.Background()
	s := m.sender(t)
	to := senders.Recipient{LeadID: "lead-1", Name: "Ann Lee", Email: m.lead.Address}
	res, err := m.tr.Perform(ctx, senders.Request{Key: "enr-1:step-1:1:0", Sender: s, Action: senders.SendEmail, Lead: to,
		Subject: "Quick question, Ann", Body: "Hi Ann", Purpose: senders.PurposeSequence})
	is.NoErr(err) // Postfix took it, signed in with XOAUTH2
	m.lead.Wait(t, 1)
	is.Equal(m.as.Refreshes(), 0)

	// Ann answers; the hour of the first token passes.
	m.lead.Deliver(t, m.lead.Address, []string{m.box.Address}, []byte("From: Ann Lee <"+m.lead.Address+">\r\nTo: "+m.box.Address+
		"\r\nSubject: Re: Quick question, Ann\r\nIn-Reply-To: <"+res.ProviderMessageID+">\r\nMessage-ID: <reply-1@example.test>\r\n\r\nYes, tell me more.\r\n"), 0)
	m.box.Wait(t, 1)
	m.e.clock.Advance(56 * time.Minute)
	n, err := m.reader.Once(ctx, s)
	is.NoErr(err) // read over IMAP with a refreshed token
	is.Equal(n, 1)
	is.Equal(m.as.Refreshes(), 1)
}

// replacedOnce: the server stops honouring the token in hand, which is
// replaced once.
func (m *oauthMail) replacedOnce(t *testing.T) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	before := m.as.Refreshes()
	m.tr.Close()
	m.as.ExpireAccess()
	is.NoErr(m.tr.Probe(context.Background(), m.sender(t)))
	is.Equal(m.as.Refreshes(), before+1)
}

// revoke revokes the box's grant: the transport's sign-in fails with
// auth_failed and the remedy to reconnect, recorded on the sender as the
// runner records it; the reader then fails alike without asking the
// provider again.
func (m *oauthMail) revoke(t *testing.T) {
	t.Helper()
	before, s := m.as.Refreshes(), m.sender(t)
	m.tr.Close()
	m.as.RevokeAccount(m.box.Address)
	is := is.New(t)
	is.Helper()
	ctx := context.Background()
	err := m.tr.Probe(ctx, s)
	te, ok := senders.AsTransportError(err)
	is.True(ok)
	is.Equal(te.Signal, senders.SignalAuthFailed)
	is.True(strings.Contains(te.Message, "reconnect"))
	is.Equal(m.as.Refreshes(), before+1) // the refused refresh
	is.NoErr(m.e.pl.Senders.Signal(ctx, s, te.Signal, te.Message))
	_, err = m.reader.Once(ctx, s)
	te, ok = senders.AsTransportError(err)
	is.True(ok && te.Signal == senders.SignalAuthFailed)
	is.Equal(m.as.Refreshes(), before+1) // not asked again
}

// reconnected: after the account is connected again the sender is usable
// at once, and no token was logged.
func (m *oauthMail) reconnected(t *testing.T) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	s := m.sender(t)
	for _, r := range s.HealthReasons {
		is.True(r.Code != senders.SignalAuthFailed)
	}
	is.True(s.Health != senders.Disconnected)
	m.tr.Close()
	is.NoErr(m.tr.Probe(context.Background(), s))
	is.True(!strings.Contains(m.logs.String(), "Bearer"))
}

// TestOAuthMailboxOnRealServers connects a mailbox's account in the
// console against the test authorization server, then signs in to the
// real Postfix (submission, SASL through Dovecot) and Dovecot (IMAP) with
// XOAUTH2 tokens that Dovecot checks by introspection at that server: a
// message goes out, the reply is read over IMAP with a token refreshed
// mid-run (the fake clock passes its hour), a token the server stops
// honouring is replaced once, and a revoked grant turns the sender
// auth_failed with the remedy to reconnect, without asking the provider
// again until it is reconnected. TestBrowserOAuthMailboxOnRealServers
// runs the same with the connect in Chromium.
func TestOAuthMailboxOnRealServers(t *testing.T) {
	t.Parallel()
	mailtest.Servers(t) // skips without the servers
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		m := newOAuthMail(t, d)
		is.Equal(m.e.registerApp(m.ops, m.as).code, http.StatusSeeOther)
		connect := func() {
			back := authorize(t, m.ops.get("/app/senders/"+m.id+"/connect/google"))
			is.Equal(m.ops.get(strings.TrimPrefix(back, m.e.srv.URL)).code, http.StatusOK)
		}
		connect()
		m.sendAndReadReply(t)
		m.replacedOnce(t)
		m.revoke(t)
		page := m.ops.get("/app/senders/" + m.id)
		is.True(strings.Contains(page.body, "disconnected"))
		is.True(strings.Contains(page.body, "Reconnect Google account"))

		// Reconnected: usable again at once.
		m.as.Approve(m.box.Address)
		connect()
		m.reconnected(t)
	})
}
