package email

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/mailtest"
	"github.com/leadline/leadline/senders"
)

// recorder is an InboundSink that keeps what was pushed, once per
// workspace, source and dedupe key as the queue does, and passes it on to
// next when set (the real queue, in the same transaction).
type recorder struct {
	next senders.InboundSink

	mu     sync.Mutex
	calls  int
	keys   map[string]bool
	pushed []senders.Inbound
}

func (r *recorder) PushReport(ctx context.Context, workspaceID, source, dedupe string, in senders.Inbound) (bool, error) {
	if r.next != nil {
		if _, err := r.next.PushReport(ctx, workspaceID, source, dedupe, in); err != nil {
			return false, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.keys == nil {
		r.keys = map[string]bool{}
	}
	k := workspaceID + "|" + source + "|" + dedupe
	if r.keys[k] {
		return false, nil
	}
	r.keys[k] = true
	r.pushed = append(r.pushed, in)
	return true, nil
}

func (r *recorder) reports() []senders.Inbound {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]senders.Inbound(nil), r.pushed...)
}

// waitFor waits until the recorder holds n reports, at most 20 seconds.
func (r *recorder) waitFor(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(r.reports()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d reports after 20s, want %d", len(r.reports()), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func testReader(d *db.DB, s *senders.Sender, sink senders.InboundSink, creds senders.Credentials) *Reader {
	r := NewReader(func(context.Context) ([]*senders.Sender, error) { return []*senders.Sender{s}, nil },
		sink, NewStates(d), creds, apikit.SystemClock{}, quiet)
	// Quick retries, and IDLE that waits for news alone.
	r.IdleFor = time.Hour
	r.After = func(d time.Duration) <-chan time.Time {
		if d >= time.Hour {
			return nil
		}
		return time.After(10 * time.Millisecond)
	}
	return r
}

func rawMail(from, to, id, headers, body string) []byte {
	return []byte("From: " + from + "\r\nTo: " + to + "\r\nSubject: Re: Quick question\r\nDate: " + time.Now().Format(time.RFC1123Z) +
		"\r\nMessage-ID: <" + id + ">\r\n" + headers + "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n")
}

// TestReaderRealServers reads a reply, a bounce and an auto-reply that
// Postfix delivered to Dovecot, into the real inbound queue; a second
// reader resumes where the first stopped; nothing is marked seen.
func TestReaderRealServers(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	box, lead := mailtest.Mailbox(t), mailtest.Mailbox(t)
	d := dbtest.Open(t, db.SQLite)
	s := newSender(t, d, apikit.SystemClock{}, box.Address, boxIMAP(box, "LEADLINE_IMAP_PASSWORD"))
	creds := mailtest.Secrets{"LEADLINE_IMAP_PASSWORD": box.Password}

	// A reply, a bounce (Postfix's own, for mail to bounce.test), an
	// auto-reply and a delay report (nothing to report).
	box.Deliver(t, lead.Address, []string{box.Address}, rawMail(lead.Address, box.Address, "reply.1@"+mailtest.Domain,
		"In-Reply-To: <sent.2@leadline.test>\r\nReferences: <sent.1@leadline.test> <sent.2@leadline.test>\r\n", "Yes, let's talk on Friday."), 1)
	box.Deliver(t, box.Address, []string{"nobody@bounce.test"}, rawMail(box.Address, "nobody@bounce.test", "sent.3@leadline.test", "", "Hello"), 2)
	box.Deliver(t, lead.Address, []string{box.Address}, rawMail(lead.Address, box.Address, "auto.4@"+mailtest.Domain,
		"In-Reply-To: <sent.2@leadline.test>\r\nAuto-Submitted: auto-replied\r\n", "I am away until Monday."), 3)
	box.Deliver(t, "", []string{box.Address}, readEML(t, "postfix-delay.eml"), 4)

	sink := &recorder{next: engine.NewQueue(d, apikit.SystemClock{})}
	n, err := testReader(d, s, sink, creds).Once(ctx, s)
	is.NoErr(err)
	is.Equal(n, 3)
	got := sink.reports()
	is.Equal(len(got), 3)
	reply, bounce, auto := got[0], got[1], got[2]
	is.Equal(reply.Kind, senders.InboundReply)
	is.Equal(reply.SenderID, s.ID)
	is.Equal(reply.LeadID, "")
	is.Equal(reply.ProviderMessageID, "reply.1@"+mailtest.Domain)
	is.Equal(reply.Subject, "Re: Quick question")
	is.Equal(reply.Body, "Yes, let's talk on Friday.")
	is.Equal(reply.Match.MessageIDs, []string{"sent.2@leadline.test", "sent.1@leadline.test"})
	is.Equal(reply.Match.Email, lead.Address)
	is.True(!reply.AutoReply)
	is.Equal(bounce.Kind, senders.InboundBounce)
	is.Equal(bounce.Match.MessageIDs, []string{"sent.3@leadline.test"})
	is.Equal(bounce.Match.Email, "nobody@bounce.test")
	is.True(strings.HasPrefix(bounce.Message, "5.1.1 nobody@bounce.test"))
	is.Equal(auto.Kind, senders.InboundReply)
	is.True(auto.AutoReply)
	is.Equal(auto.Headers["Auto-Submitted"], "auto-replied")

	// The queue holds them, once per Message-ID.
	var queued int64
	queued, err = d.NewSelect().Table("inbound").Where("source = ?", SourceIMAP).Count(ctx)
	is.NoErr(err)
	is.Equal(queued, int64(3))

	// Restarted, a reader resumes: nothing is fetched again.
	calls := sink.calls
	again := testReader(d, s, sink, creds)
	n, err = again.Once(ctx, s)
	is.NoErr(err)
	is.Equal(n, 0)
	is.Equal(sink.calls, calls) // not even offered to the queue
	box.Deliver(t, lead.Address, []string{box.Address}, rawMail(lead.Address, box.Address, "reply.5@"+mailtest.Domain,
		"In-Reply-To: <sent.2@leadline.test>\r\n", "One more thing."), 5)
	n, err = again.Once(ctx, s)
	is.NoErr(err)
	is.Equal(n, 1)
	is.Equal(sink.reports()[3].ProviderMessageID, "reply.5@"+mailtest.Domain)

	// The owner's mailbox is as it was: nothing marked \Seen.
	c, err := imapclient.DialInsecure(box.Servers.IMAP.Addr(), nil)
	is.NoErr(err)
	defer c.Close()
	is.NoErr(c.Login(box.Address, box.Password).Wait())
	_, err = c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	is.NoErr(err)
	var all imap.SeqSet
	all.AddRange(1, 0)
	msgs, err := c.Fetch(all, &imap.FetchOptions{Flags: true}).Collect()
	is.NoErr(err)
	is.Equal(len(msgs), 5)
	for _, m := range msgs {
		for _, f := range m.Flags {
			is.True(f != imap.FlagSeen) // the reader peeks
		}
	}
}

// TestReaderFollowsRealServer: Run waits in IDLE on Dovecot and takes a
// reply in as it arrives.
func TestReaderFollowsRealServer(t *testing.T) {
	is := is.New(t)
	box, lead := mailtest.Mailbox(t), mailtest.Mailbox(t)
	d := dbtest.Open(t, db.SQLite)
	s := newSender(t, d, apikit.SystemClock{}, box.Address, boxIMAP(box, "PW"))
	sink := &recorder{}
	r := testReader(d, s, sink, mailtest.Secrets{"PW": box.Password})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	time.Sleep(300 * time.Millisecond) // in IDLE by now, most likely; if not, the catch-up takes it
	box.Deliver(t, lead.Address, []string{box.Address}, rawMail(lead.Address, box.Address, "live.1@"+mailtest.Domain, "", "Hi"), 0)
	sink.waitFor(t, 1)
	is.Equal(sink.reports()[0].ProviderMessageID, "live.1@"+mailtest.Domain)
	cancel()
	is.True(errors.Is(<-done, context.Canceled))
}

// faultInbox is a database and a sender whose inbox is on a new
// in-process IMAP server, whose password is password.
func faultInbox(t *testing.T, password string) (*db.DB, *mailtest.IMAP, *senders.Sender) {
	d := dbtest.Open(t, db.SQLite)
	srv := mailtest.NewIMAP(t, "anna@leadline.test", password)
	return d, srv, newSender(t, d, apikit.SystemClock{}, srv.Username, &Server{Host: srv.Host, Port: srv.Port, Security: "none",
		Username: srv.Username, PasswordEnv: "PW", Inbox: "INBOX"})
}

func TestReaderWrongPassword(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	d, _, s := faultInbox(t, "right")
	_, err := testReader(d, s, &recorder{}, mailtest.Secrets{"PW": "wrong"}).Once(ctx, s)
	te, ok := senders.AsTransportError(err)
	is.True(ok)
	is.Equal(te.Kind, senders.SenderLevel)
	is.Equal(te.Code, CodeAuthFailed)
	is.True(!strings.Contains(te.Error(), "wrong")) // the secret is not in the error
	// The lease was given up: another reader may try at once.
	_, ok, err = NewStates(d).Take(ctx, s.ID, "other", time.Now(), time.Now().Add(time.Minute))
	is.NoErr(err)
	is.True(ok)

	_, err = testReader(d, s, &recorder{}, mailtest.Secrets{}).Once(ctx, s)
	is.True(errors.Is(err, ErrLeaseHeld)) // "other" holds it
}

func TestReaderServerDown(t *testing.T) {
	is := is.New(t)
	d := dbtest.Open(t, db.SQLite)
	down := mailtest.Down(t)
	s := newSender(t, d, apikit.SystemClock{}, "anna@leadline.test", &Server{Host: down.Host, Port: down.Port,
		Security: "none", Username: "anna@leadline.test", PasswordEnv: "PW"})
	_, err := testReader(d, s, &recorder{}, mailtest.Secrets{"PW": "x"}).Once(context.Background(), s)
	te, ok := senders.AsTransportError(err)
	is.True(ok)
	is.Equal(te.Code, CodeConnectionFailed)
	_, err = testReader(d, s, &recorder{}, mailtest.Secrets{}).Once(context.Background(), s)
	te, ok = senders.AsTransportError(err)
	is.True(ok)
	is.Equal(te.Code, CodeCredentialsMissing)
}

// TestReaderUIDValidity: when the folder's UIDVALIDITY changes the reader
// reads it all again, and the queue's dedupe keeps each message once.
func TestReaderUIDValidity(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	d, srv, s := faultInbox(t, "pw")
	for i := range 2 {
		srv.Deliver(t, rawMail("bob@acme.test", srv.Username, fmt.Sprintf("r%d@acme.test", i), "", "reply"))
	}
	sink := &recorder{}
	r := testReader(d, s, sink, mailtest.Secrets{"PW": "pw"})
	n, err := r.Once(ctx, s)
	is.NoErr(err)
	is.Equal(n, 2)
	before, err := NewStates(d).Get(ctx, s.ID)
	is.NoErr(err)

	srv.ResetUIDValidity(t)
	srv.Deliver(t, rawMail("bob@acme.test", srv.Username, "r2@acme.test", "", "reply"))
	n, err = r.Once(ctx, s)
	is.NoErr(err)
	is.Equal(n, 1)          // the new message alone is queued
	is.Equal(sink.calls, 5) // the first two were offered again
	is.Equal(len(sink.reports()), 3)
	after, err := NewStates(d).Get(ctx, s.ID)
	is.NoErr(err)
	is.True(after.UIDValidity != before.UIDValidity)
	is.Equal(after.LastUID, uint32(3))
	n, err = r.Once(ctx, s)
	is.NoErr(err)
	is.Equal(n, 0)
	is.Equal(sink.calls, 5) // and now it resumes
}

// TestReaderReconnectsAfterIdleCut: the connection dropped during IDLE,
// Run connects again and reads what arrived meanwhile.
func TestReaderReconnectsAfterIdleCut(t *testing.T) {
	is := is.New(t)
	d, srv, s := faultInbox(t, "pw")
	srv.Deliver(t, rawMail("bob@acme.test", srv.Username, "a@acme.test", "", "one"))
	sink := &recorder{}
	r := testReader(d, s, sink, mailtest.Secrets{"PW": "pw"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	sink.waitFor(t, 1)
	srv.WaitIdle(t)
	srv.Cut()
	srv.Deliver(t, rawMail("bob@acme.test", srv.Username, "b@acme.test", "", "two"))
	sink.waitFor(t, 2)
	is.Equal(sink.reports()[1].ProviderMessageID, "b@acme.test")
	is.True(srv.Logins() >= 2) // it signed in again
	// New mail while in IDLE is taken at once.
	srv.WaitIdle(t)
	srv.Deliver(t, rawMail("bob@acme.test", srv.Username, "c@acme.test", "", "three"))
	sink.waitFor(t, 3)
	cancel()
	is.True(errors.Is(<-done, context.Canceled))
	is.Equal(len(sink.reports()), 3)
}

// TestReaderPolls: without IDLE, Run asks again every PollEvery.
func TestReaderPolls(t *testing.T) {
	is := is.New(t)
	d, srv, s := faultInbox(t, "pw")
	sink := &recorder{}
	r := testReader(d, s, sink, mailtest.Secrets{"PW": "pw"})
	r.Polling = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	srv.Deliver(t, rawMail("bob@acme.test", srv.Username, "p1@acme.test", "", "one"))
	sink.waitFor(t, 1)
	srv.Deliver(t, rawMail("bob@acme.test", srv.Username, "p2@acme.test", "", "two"))
	sink.waitFor(t, 2)
	cancel()
	is.True(errors.Is(<-done, context.Canceled))
	is.Equal(srv.Logins(), 1) // one connection, asked again and again
	select {
	case <-srv.Idling():
		t.Fatal("the reader went into IDLE")
	default:
	}
}

// TestReaderSignalsTheSendersHealth: a refused password is queued once as
// a signal for the sender's health, and when the inbox connects again
// the sender is reported recovered.
func TestReaderSignalsTheSendersHealth(t *testing.T) {
	is := is.New(t)
	d, srv, s := faultInbox(t, "pw")
	sink := &recorder{}
	secrets := mailtest.Secrets{"PW": "wrong"}
	var mu sync.Mutex
	creds := credsFunc(func(ctx context.Context, sn *senders.Sender, name string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		return secrets.Secret(ctx, sn, name)
	})
	r := testReader(d, s, sink, creds)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	sink.waitFor(t, 1)
	got := sink.reports()[0]
	is.Equal(got.Kind, senders.InboundSignal)
	is.Equal(got.Signal, senders.SignalAuthFailed)
	is.True(!strings.Contains(got.Message, "wrong"))
	// The password is fixed: the next connection recovers the sender.
	mu.Lock()
	secrets["PW"] = "pw"
	mu.Unlock()
	sink.waitFor(t, 2)
	is.Equal(sink.reports()[1].Signal, senders.SignalRecovered)
	is.True(srv.Logins() >= 1)
	cancel()
	<-done
}

type credsFunc func(ctx context.Context, s *senders.Sender, name string) (string, error)

func (f credsFunc) Secret(ctx context.Context, s *senders.Sender, name string) (string, error) {
	return f(ctx, s, name)
}
