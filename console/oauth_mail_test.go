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

// TestOAuthMailboxOnRealServers connects a mailbox's account in the
// console against the test authorization server, then signs in to the
// real Postfix (submission, SASL through Dovecot) and Dovecot (IMAP) with
// XOAUTH2 tokens that Dovecot checks by introspection at that server: a
// message goes out, the reply is read over IMAP with a token refreshed
// mid-run (the fake clock passes its hour), a token the server stops
// honouring is replaced once, and a revoked grant turns the sender
// auth_failed with the remedy to reconnect, without asking the provider
// again until it is reconnected.
func TestOAuthMailboxOnRealServers(t *testing.T) {
	t.Parallel()
	box, lead := mailtest.Mailbox(t), mailtest.Mailbox(t) // skips without the servers
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEnv(t, d)
		logs := e.captureLogs()
		as := oauthtest.StartForDovecot(t, e.clock)
		as.Approve(box.Address)
		boss := e.member("boss@acme.test", apikit.RoleManager)
		is.Equal(e.registerApp(boss, as).code, http.StatusSeeOther)
		id := e.oauthSender(boss, box.Address, box.Servers.SMTP.Addr(), box.Servers.IMAP.Addr())
		back := authorize(t, boss.get("/app/senders/"+id+"/connect/google"))
		is.Equal(boss.get(strings.TrimPrefix(back, e.srv.URL)).code, http.StatusOK)
		s, err := e.pl.Senders.Sender(ctx, id)
		is.NoErr(err)

		ts := e.pl.Transports(platform.Outside{PublicURL: "https://leadline.example.test"})
		tr := ts[email.Name].(*email.Transport)
		defer tr.Close()
		to := senders.Recipient{LeadID: "lead-1", Name: "Ann Lee", Email: lead.Address}
		res, err := tr.Perform(ctx, senders.Request{Key: "enr-1:step-1:1:0", Sender: s, Action: senders.SendEmail, Lead: to,
			Subject: "Quick question, Ann", Body: "Hi Ann", Purpose: senders.PurposeSequence})
		is.NoErr(err) // Postfix took it, signed in with XOAUTH2
		lead.Wait(t, 1)
		is.Equal(as.Refreshes(), 0)

		// Ann answers; the hour of the first token passes.
		lead.Deliver(t, lead.Address, []string{box.Address}, []byte("From: Ann Lee <"+lead.Address+">\r\nTo: "+box.Address+
			"\r\nSubject: Re: Quick question, Ann\r\nIn-Reply-To: <"+res.ProviderMessageID+">\r\nMessage-ID: <reply-1@example.test>\r\n\r\nYes, tell me more.\r\n"), 0)
		box.Wait(t, 1)
		e.clock.Advance(56 * time.Minute)
		var reader *email.Reader
		for _, r := range e.pl.Readers(nil) {
			if x, ok := r.(*email.Reader); ok {
				reader = x
			}
		}
		is.True(reader != nil)
		n, err := reader.Once(ctx, s)
		is.NoErr(err) // read over IMAP with a refreshed token
		is.Equal(n, 1)
		is.Equal(as.Refreshes(), 1)

		// The server stops honouring the token in hand: replaced once.
		tr.Close()
		as.ExpireAccess()
		is.NoErr(tr.Probe(ctx, s))
		is.Equal(as.Refreshes(), 2)

		// The grant is revoked: auth_failed, reconnect; nothing retried.
		tr.Close()
		as.RevokeAccount(box.Address)
		err = tr.Probe(ctx, s)
		te, ok := senders.AsTransportError(err)
		is.True(ok)
		is.Equal(te.Signal, senders.SignalAuthFailed)
		is.True(strings.Contains(te.Message, "reconnect"))
		is.Equal(as.Refreshes(), 3)                                  // the refused refresh
		is.NoErr(e.pl.Senders.Signal(ctx, s, te.Signal, te.Message)) // as the runner records it
		_, err = reader.Once(ctx, s)
		te, ok = senders.AsTransportError(err)
		is.True(ok && te.Signal == senders.SignalAuthFailed)
		is.Equal(as.Refreshes(), 3) // not asked again
		page := boss.get("/app/senders/" + id)
		is.True(strings.Contains(page.body, "disconnected"))
		is.True(strings.Contains(page.body, "Reconnect Google account"))

		// Reconnected: usable again at once.
		as.Approve(box.Address)
		back = authorize(t, boss.get("/app/senders/"+id+"/connect/google"))
		is.Equal(boss.get(strings.TrimPrefix(back, e.srv.URL)).code, http.StatusOK)
		s, err = e.pl.Senders.Sender(ctx, id)
		is.NoErr(err)
		for _, r := range s.HealthReasons {
			is.True(r.Code != senders.SignalAuthFailed) // only the domain check's warning may stay
		}
		is.True(s.Health != senders.Disconnected)
		tr.Close()
		is.NoErr(tr.Probe(ctx, s))
		is.True(!strings.Contains(logs.String(), "Bearer"))
	})
}
