package email_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/mailtest"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
)

// mailSender is an smtp sender of box; its SMTP and IMAP use STARTTLS with
// the test CA, as a real mailbox does.
func mailSender(box mailtest.Box) *senders.Sender {
	addr := box.Address
	smtp, imap := email.BoxSMTP(box, "MAIL_PW"), email.BoxIMAP(box, "MAIL_PW")
	smtp.Security, smtp.CAFile, smtp.DisplayName = "starttls", box.Servers.CAFile, "Dana Whitfield"
	imap.Security, imap.CAFile = "starttls", box.Servers.CAFile
	return &senders.Sender{ID: "s-" + addr, WorkspaceID: "ws-1", Name: "globex-mail", Channel: senders.Email, Address: &addr,
		Transport: email.Name, Settings: email.Settings(smtp, imap)}
}

// change changes s's servers with f.
func change(s *senders.Sender, f func(smtp, imap *email.Server)) {
	smtp, _ := senders.Section[email.Server](s.Settings, "smtp")
	imap, _ := senders.Section[email.Server](s.Settings, "imap")
	f(smtp, imap)
	s.Settings = email.Settings(smtp, imap)
}

var creds = mailtest.Secrets{"MAIL_PW": mailtest.Password}

func messageID(raw []byte) string {
	m := regexp.MustCompile(`(?m)^Message-ID: <([^>]+)>`).FindSubmatch(raw)
	if m == nil {
		return ""
	}
	return string(m[1])
}

func TestSendThroughPostfix(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	box, to := mailtest.Mailbox(t), mailtest.Mailbox(t)
	clock := apikit.NewFakeClock(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
	tr := email.New(email.Config{Credentials: creds, Clock: clock, PublicURL: "https://leadline.example.test",
		Token: func(ws, lead string) (string, error) { return "tok-" + ws + "-" + lead, nil }})
	defer tr.Close()
	s := mailSender(box)
	lead := senders.Recipient{LeadID: "lead-1", Name: "Ann Lee", Email: to.Address}
	first := senders.Request{Key: "enr-1:step-1:1:0", Sender: s, Action: senders.SendEmail, Lead: lead,
		Subject: "Quick question, Ann", Body: "Hi Ann — é, ü, 日本.\n\nDana", Purpose: senders.PurposeSequence}
	res, err := tr.Perform(ctx, first)
	is.NoErr(err)
	is.Equal(res.ProviderMessageID, email.MessageID("enr-1:step-1:1:0", box.Address))

	// A follow-up continues the thread with Re: and the first subject.
	res2, err := tr.Perform(ctx, senders.Request{Key: "enr-1:step-3:2:0", Sender: s, Action: senders.SendEmail, Lead: lead,
		Body: "Following up.", Thread: senders.Thread{Earlier: []string{res.ProviderMessageID}, Subject: "Quick question, Ann"}, Purpose: senders.PurposeSequence})
	is.NoErr(err)

	to.Wait(t, 2)
	got := to.Messages(t, "INBOX")
	firstRaw, second := string(got[0]), string(got[1])
	if strings.Contains(firstRaw, "Following up") {
		firstRaw, second = second, firstRaw
	}
	is.Equal(messageID([]byte(firstRaw)), res.ProviderMessageID)
	is.True(strings.Contains(firstRaw, "From: \"Dana Whitfield\" <"+box.Address+">"))
	is.True(strings.Contains(firstRaw, "List-Unsubscribe: <https://leadline.example.test/unsubscribe/tok-ws-1-lead-1>"))
	is.True(strings.Contains(firstRaw, "List-Unsubscribe-Post: List-Unsubscribe=One-Click"))
	is.True(strings.Contains(firstRaw, "Date: Wed, 25 Nov 2026 09:00:00"))
	is.True(strings.Contains(second, "In-Reply-To: <"+res.ProviderMessageID+">"))
	is.True(strings.Contains(second, "References: <"+res.ProviderMessageID+">"))
	is.True(strings.Contains(second, "Subject: Re: Quick question, Ann"))
	is.Equal(messageID([]byte(second)), res2.ProviderMessageID)

	// The sent folder keeps both, with no pending mark; Lookup finds a
	// key's message, and not another key's.
	is.Equal(len(box.Messages(t, "Sent")), 2)
	r, found, err := tr.Lookup(ctx, first)
	is.NoErr(err)
	is.True(found)
	is.Equal(r.ProviderMessageID, res.ProviderMessageID)
	other := first
	other.Key = "enr-1:step-9:1:0"
	_, found, err = tr.Lookup(ctx, other)
	is.NoErr(err)
	is.True(!found)
}

// TestSMTPFaults sends through in-process SMTP servers that fail on
// purpose, keeping the copies in the real Dovecot's sent folder.
func TestSMTPFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	send := func(t *testing.T, fault mailtest.SMTPFault) (*email.Transport, senders.Request, mailtest.Box, *mailtest.SMTP, error) {
		box := mailtest.Mailbox(t)
		srv := mailtest.NewSMTP(t, box.Address, mailtest.Password, fault)
		s := mailSender(box)
		s.Settings = s.Settings.With("smtp", &email.Server{Host: srv.Host, Port: srv.Port, Security: "none", Username: box.Address, PasswordEnv: "MAIL_PW"})
		tr := email.New(email.Config{Credentials: creds})
		t.Cleanup(tr.Close)
		req := senders.Request{Key: "k-1", Sender: s, Action: senders.SendEmail, Lead: senders.Recipient{LeadID: "l", Email: "ann@example.test"},
			Subject: "Hello", Body: "Hi", Purpose: senders.PurposeSequence}
		_, err := tr.Perform(ctx, req)
		return tr, req, box, srv, err
	}
	t.Run("cut after the data", func(t *testing.T) {
		is := is.New(t)
		tr, req, box, _, err := send(t, mailtest.SMTPCutAfterData)
		// The outcome is unknown: no transport error, so the runner keeps
		// the action as sending and looks it up later.
		_, isTE := senders.AsTransportError(err)
		is.True(err != nil && !isTE)
		// The pending copy is there, and the lookup counts it as sent:
		// nothing is sent twice.
		is.Equal(len(box.Messages(t, "Sent")), 1)
		res, found, err := email.New(email.Config{Credentials: creds}).Lookup(ctx, req)
		is.NoErr(err)
		is.True(found)
		is.Equal(res.ProviderMessageID, email.MessageID("k-1", box.Address))
		_ = tr
	})
	t.Run("recipient unknown", func(t *testing.T) {
		is := is.New(t)
		tr, req, box, srv, err := send(t, mailtest.SMTPRefuseRcpt)
		te, ok := senders.AsTransportError(err)
		is.True(ok)
		is.Equal(te.Kind, senders.Permanent)
		is.Equal(te.Code, senders.CodeBounced) // recorded as a bounce
		is.True(strings.Contains(te.Message, "550"))
		is.Equal(len(srv.Received()), 0)
		// The refused message's copy is gone: the lookup finds nothing.
		_, found, err := tr.Lookup(ctx, req)
		is.NoErr(err)
		is.True(!found)
		is.Equal(len(box.Messages(t, "Sent")), 0)
	})
	for name, c := range map[string]struct {
		fault  mailtest.SMTPFault
		kind   senders.ErrorKind
		signal string
	}{
		"greylisted":                 {mailtest.SMTPDeferRcpt, senders.Transient, ""},
		"policy block on the sender": {mailtest.SMTPRefuseSender, senders.SenderLevel, senders.SignalRestricted},
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			_, _, _, _, err := send(t, c.fault)
			te, ok := senders.AsTransportError(err)
			is.True(ok)
			is.Equal(te.Kind, c.kind)
			is.Equal(te.Signal, c.signal)
		})
	}
	t.Run("accepted", func(t *testing.T) {
		is := is.New(t)
		_, _, box, srv, err := send(t, mailtest.SMTPAccept)
		is.NoErr(err)
		is.Equal(len(srv.Received()), 1)
		is.Equal(len(box.Messages(t, "Sent")), 1)
	})
}

func TestSenderLevelFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	box := mailtest.Mailbox(t)
	lead := senders.Recipient{LeadID: "lead-1", Email: "ann@example.test"}
	try := func(t *testing.T, c senders.Credentials, s *senders.Sender) *senders.TransportError {
		tr := email.New(email.Config{Credentials: c})
		defer tr.Close()
		_, err := tr.Perform(ctx, senders.Request{Key: "k", Sender: s, Action: senders.SendEmail, Lead: lead, Subject: "s", Body: "b"})
		te, ok := senders.AsTransportError(err)
		if !ok {
			t.Fatalf("want a transport error, got %v", err)
		}
		return te
	}
	t.Run("wrong password", func(t *testing.T) {
		is := is.New(t)
		te := try(t, mailtest.Secrets{"MAIL_PW": "not-it"}, mailSender(box))
		is.Equal(te.Kind, senders.SenderLevel)
		is.Equal(te.Code, senders.SignalAuthFailed)
		is.True(strings.Contains(te.Message, "MAIL_PW"))
		is.True(!strings.Contains(te.Message, "not-it")) // no secret in a message
	})
	t.Run("credentials missing", func(t *testing.T) {
		is := is.New(t)
		s := mailSender(box)
		change(s, func(smtp, imap *email.Server) {
			imap.PasswordEnv, smtp.PasswordEnv = "LEADLINE_TEST_UNSET_PW", "LEADLINE_TEST_UNSET_PW"
		})
		te := try(t, mailtest.Secrets{}, s)
		is.Equal(te.Code, senders.SignalCredentialsMissing)
		is.True(strings.Contains(te.Message, "set LEADLINE_TEST_UNSET_PW in the server's environment and restart"))
	})
	t.Run("server down", func(t *testing.T) {
		is := is.New(t)
		s := mailSender(box)
		down := mailtest.Down(t)
		change(s, func(_, imap *email.Server) { imap.Port = down.Port })
		te := try(t, creds, s)
		is.Equal(te.Code, senders.SignalConnectionFailed)
		is.Equal(te.Kind, senders.SenderLevel)
	})
	t.Run("a LinkedIn action", func(t *testing.T) {
		is := is.New(t)
		_, err := email.New(email.Config{}).Perform(ctx, senders.Request{Key: "k", Sender: mailSender(box), Action: senders.Invite, Lead: lead})
		te, ok := senders.AsTransportError(err)
		is.True(ok)
		is.Equal(te.Kind, senders.Permanent)
	})
}
