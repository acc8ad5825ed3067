package email_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
)

// servers are the test mail servers: Postfix's submission port and
// Dovecot's IMAP, started by .ci/mail/start.
type servers struct {
	smtpHost, imapHost string
	smtpPort, imapPort int
	ca                 string
}

func testServers(t *testing.T) servers { return testServersB(t) }

func testServersB(t testing.TB) servers {
	t.Helper()
	smtpAddr, imapAddr := os.Getenv("LEADLINE_TEST_SMTP"), os.Getenv("LEADLINE_TEST_IMAP")
	if smtpAddr == "" || imapAddr == "" {
		t.Skip("no test mail servers: run eval \"$(.ci/mail/start)\" (as .ci/run does) to start Postfix and Dovecot on loopback")
	}
	split := func(a string) (string, int) {
		h, p, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(p)
		return h, n
	}
	var s servers
	s.smtpHost, s.smtpPort = split(smtpAddr)
	s.imapHost, s.imapPort = split(imapAddr)
	s.ca = os.Getenv("LEADLINE_TEST_MAIL_CA")
	return s
}

func address(testing.TB) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "t-" + hex.EncodeToString(b) + "@leadline.test"
}

// creds are secrets by name, as a test gives them.
type creds map[string]string

func (c creds) Secret(_ context.Context, s *senders.Sender, name string) (string, error) {
	if v, ok := c[name]; ok {
		return v, nil
	}
	return senders.EnvCredentials{}.Secret(context.Background(), s, name)
}

func mailSender(srv servers, addr string) *senders.Sender {
	return &senders.Sender{ID: "s-" + addr, WorkspaceID: "ws-1", Name: "globex-mail", Channel: senders.Email, Address: &addr, Transport: senders.TransportSMTP,
		Settings: senders.Settings{
			SMTP: &senders.MailServer{Host: srv.smtpHost, Port: srv.smtpPort, Security: "starttls", Username: addr, PasswordEnv: "MAIL_PW", CAFile: srv.ca, DisplayName: "Dana Whitfield"},
			IMAP: &senders.MailServer{Host: srv.imapHost, Port: srv.imapPort, Security: "starttls", Username: addr, PasswordEnv: "MAIL_PW", CAFile: srv.ca, Sent: "Sent"},
		}}
}

// mailbox reads a folder of a test mailbox over IMAP.
func mailbox(t *testing.T, srv servers, addr, folder string) []*imapclient.FetchMessageBuffer {
	t.Helper()
	c, err := imapclient.DialInsecure(net.JoinHostPort(srv.imapHost, strconv.Itoa(srv.imapPort)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(addr, "leadline").Wait(); err != nil {
		t.Fatal(err)
	}
	sel, err := c.Select(folder, nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	if sel.NumMessages == 0 {
		return nil
	}
	var all imap.SeqSet
	all.AddRange(1, 0) // 1:*
	msgs, err := c.Fetch(all, &imap.FetchOptions{Flags: true, UID: true, BodySection: []*imap.FetchItemBodySection{{Peek: true}}}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// waitDelivered waits for Postfix to deliver n messages to addr's inbox.
// Delivery is Postfix's own work, outside the test's clock.
func waitDelivered(t *testing.T, srv servers, addr string, n int) []*imapclient.FetchMessageBuffer {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		msgs := mailbox(t, srv, addr, "INBOX")
		if len(msgs) >= n || time.Now().After(deadline) {
			return msgs
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func raw(m *imapclient.FetchMessageBuffer) string {
	for _, b := range m.BodySection {
		return string(b.Bytes)
	}
	return ""
}

func TestSendThroughPostfix(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := testServers(t)
	ctx := context.Background()
	from, to := address(t), address(t)
	clock := apikit.NewFakeClock(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
	tr := email.New(email.Config{Credentials: creds{"MAIL_PW": "leadline"}, Clock: clock, PublicURL: "https://leadline.example.test",
		Token: func(ws, lead string) (string, error) { return "tok-" + ws + "-" + lead, nil }})
	defer tr.Close()
	s := mailSender(srv, from)
	lead := senders.Recipient{LeadID: "lead-1", Name: "Ann Lee", Email: to}

	res, err := tr.Perform(ctx, senders.Request{Key: "enr-1:step-1:1:0", Sender: s, Action: senders.SendEmail, Lead: lead,
		Subject: "Quick question, Ann", Body: "Hi Ann — é, ü, 日本.\n\nDana", Purpose: senders.PurposeSequence})
	is.NoErr(err)
	is.Equal(res.ProviderMessageID, email.MessageID("enr-1:step-1:1:0", from))

	// The same key makes the same Message-ID; a follow-up continues the
	// thread with Re: and the first subject.
	res2, err := tr.Perform(ctx, senders.Request{Key: "enr-1:step-3:2:0", Sender: s, Action: senders.SendEmail, Lead: lead,
		Body: "Following up.", Thread: senders.Thread{Earlier: []string{res.ProviderMessageID}, Subject: "Quick question, Ann"}, Purpose: senders.PurposeSequence})
	is.NoErr(err)

	got := waitDelivered(t, srv, to, 2)
	is.Equal(len(got), 2)
	first, second := raw(got[0]), raw(got[1])
	if strings.Contains(first, "Following up") {
		first, second = second, first
	}
	is.True(strings.Contains(first, "Message-ID: <"+res.ProviderMessageID+">"))
	is.True(strings.Contains(first, "From: \"Dana Whitfield\" <"+from+">"))
	is.True(strings.Contains(first, "List-Unsubscribe: <https://leadline.example.test/unsubscribe/tok-ws-1-lead-1>"))
	is.True(strings.Contains(first, "List-Unsubscribe-Post: List-Unsubscribe=One-Click"))
	is.True(strings.Contains(first, "Date: Wed, 25 Nov 2026 09:00:00"))
	is.True(strings.Contains(second, "In-Reply-To: <"+res.ProviderMessageID+">"))
	is.True(strings.Contains(second, "References: <"+res.ProviderMessageID+">"))
	is.True(strings.Contains(second, "Subject: Re: Quick question, Ann"))
	is.True(strings.Contains(second, "Message-ID: <"+res2.ProviderMessageID+">"))

	// The sent folder keeps both, with no pending mark.
	sent := mailbox(t, srv, from, "Sent")
	is.Equal(len(sent), 2)
	for _, m := range sent {
		for _, f := range m.Flags {
			is.True(f != email.PendingKeyword)
		}
	}
	// Lookup finds a key's message, and not another key's.
	r, found, err := tr.Lookup(ctx, senders.Request{Key: "enr-1:step-1:1:0", Sender: s, Action: senders.SendEmail})
	is.NoErr(err)
	is.True(found)
	is.Equal(r.ProviderMessageID, res.ProviderMessageID)
	_, found, err = tr.Lookup(ctx, senders.Request{Key: "enr-1:step-9:1:0", Sender: s, Action: senders.SendEmail})
	is.NoErr(err)
	is.True(!found)
}

func TestSenderLevelFailures(t *testing.T) {
	t.Parallel()
	srv := testServers(t)
	ctx := context.Background()
	from := address(t)
	lead := senders.Recipient{LeadID: "lead-1", Email: address(t)}
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
		te := try(t, creds{"MAIL_PW": "not-it"}, mailSender(srv, from))
		is.Equal(te.Kind, senders.SenderLevel)
		is.Equal(te.Code, senders.SignalAuthFailed)
		is.True(strings.Contains(te.Message, "MAIL_PW"))
		is.True(!strings.Contains(te.Message, "not-it")) // no secret in a message
	})
	t.Run("credentials missing", func(t *testing.T) {
		is := is.New(t)
		s := mailSender(srv, from)
		s.Settings.IMAP.PasswordEnv, s.Settings.SMTP.PasswordEnv = "LEADLINE_TEST_UNSET_PW", "LEADLINE_TEST_UNSET_PW"
		te := try(t, creds{}, s)
		is.Equal(te.Code, senders.SignalCredentialsMissing)
		is.True(strings.Contains(te.Message, "set LEADLINE_TEST_UNSET_PW in the server's environment and restart"))
	})
	t.Run("server down", func(t *testing.T) {
		is := is.New(t)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		is.NoErr(err)
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		s := mailSender(srv, from)
		s.Settings.IMAP.Port = port
		te := try(t, creds{"MAIL_PW": "leadline"}, s)
		is.Equal(te.Code, senders.SignalConnectionFailed)
		is.Equal(te.Kind, senders.SenderLevel)
	})
	t.Run("an LinkedIn action", func(t *testing.T) {
		is := is.New(t)
		tr := email.New(email.Config{})
		_, err := tr.Perform(ctx, senders.Request{Key: "k", Sender: mailSender(srv, from), Action: senders.Invite, Lead: lead})
		te, ok := senders.AsTransportError(err)
		is.True(ok)
		is.Equal(te.Kind, senders.Permanent)
	})
}
