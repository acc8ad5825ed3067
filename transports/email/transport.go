package email

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/wneessen/go-mail"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
)

// Config is what the email transport is built with.
type Config struct {
	// Credentials give the secrets the senders' settings name; default:
	// the process's environment.
	Credentials senders.Credentials
	// Tokens give the access tokens of the mailboxes connected with
	// Google or Microsoft (auth: oauth); nil: none can be.
	Tokens senders.Tokens
	Clock  apikit.Clock
	Logger *slog.Logger
	// PublicURL is the base of unsubscribe links; without one,
	// List-Unsubscribe is a mailto: of the sender's address.
	PublicURL string
	// Token returns the token of a lead's unsubscribe link.
	Token func(workspaceID, leadID string) (string, error)
	// Idle is how long a sender's connections stay open with no work
	// (default 30 seconds).
	Idle time.Duration
	// Timeout bounds each exchange with a mail server (default 60 s).
	Timeout time.Duration
}

// Transport sends the email actions of the senders whose transport is
// smtp. It keeps one SMTP and one IMAP connection per sender while work is
// queued. Replies, bounces and auto-replies are read by the Reader, which
// pushes them to the inbound queue: Inbound reports nothing.
type Transport struct {
	cfg   Config
	mu    sync.Mutex
	boxes map[string]*box
}

// box is one sender's connections; its lock makes one send at a time.
type box struct {
	mu   sync.Mutex
	smtp *mail.Client
	imap *imapclient.Client
	// timer closes the connections when idle; Transport.mu guards it.
	timer *time.Timer
}

// New returns the email transport.
func New(cfg Config) *Transport {
	if cfg.Credentials == nil {
		cfg.Credentials = senders.EnvCredentials{}
	}
	if cfg.Clock == nil {
		cfg.Clock = apikit.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Idle <= 0 {
		cfg.Idle = 30 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	return &Transport{cfg: cfg, boxes: map[string]*box{}}
}

// keys are where t's secrets come from.
func (t *Transport) keys() keys { return keys{creds: t.cfg.Credentials, tokens: t.cfg.Tokens} }

var _ senders.Transport = (*Transport)(nil)
var _ senders.Prober = (*Transport)(nil)

// Perform sends one email. Before the SMTP transaction a copy is appended
// to the sender's sent folder, marked pending; when the server accepts
// the message the mark is cleared. A refusal removes the copy. When the
// outcome is unknown (the connection dropped after DATA) the copy stays,
// and Lookup treats it as sent: leadline may then lose one email, but it
// never writes twice to a person.
func (t *Transport) Perform(ctx context.Context, req senders.Request) (senders.Result, error) {
	if req.Action != senders.SendEmail {
		return senders.Result{}, &senders.TransportError{Kind: senders.Permanent, Code: "unsupported_action",
			Message: "an smtp sender sends email only; use a LinkedIn sender for " + string(req.Action)}
	}
	now := t.cfg.Clock.Now()
	l, err := t.compose(req, now)
	if err != nil {
		return senders.Result{}, err
	}
	b := t.box(req.Sender.ID)
	b.mu.Lock()
	defer b.mu.Unlock()
	defer t.idle(req.Sender.ID, b)
	copyUID, err := t.appendPending(ctx, b, req.Sender, l, now)
	if err != nil {
		return senders.Result{}, err
	}
	if err := t.send(ctx, b, req.Sender, l); err != nil {
		if _, ok := senders.AsTransportError(err); ok {
			// Refused: nothing was sent, and the copy must not say so.
			if derr := t.dropCopy(ctx, b, req.Sender, copyUID); derr != nil {
				t.cfg.Logger.Warn("email: could not remove the copy of a refused message", "sender", req.Sender.Name, "error", derr)
			}
		}
		return senders.Result{}, err
	}
	if err := t.confirm(ctx, b, req.Sender, l, copyUID); err != nil {
		// Sent; only the mark stays. Lookup reads a pending copy as sent.
		t.cfg.Logger.Warn("email: sent, but the pending mark of the copy was not cleared", "sender", req.Sender.Name, "error", err)
	}
	return senders.Result{ProviderMessageID: l.id, At: now}, nil
}

// Lookup finds the email sent under req.Key in req.Sender's sent folder,
// by its Message-ID. A copy still marked pending is treated as sent.
func (t *Transport) Lookup(ctx context.Context, req senders.Request) (senders.Result, bool, error) {
	s := req.Sender
	if s == nil || s.Address == nil {
		return senders.Result{}, false, errors.New("email: lookup needs the sender")
	}
	id := MessageID(req.Key, *s.Address)
	b := t.box(s.ID)
	b.mu.Lock()
	defer b.mu.Unlock()
	defer t.idle(s.ID, b)
	found, err := t.findSent(ctx, b, s, id)
	if err != nil || !found {
		return senders.Result{}, false, err
	}
	return senders.Result{ProviderMessageID: id, At: t.cfg.Clock.Now()}, true, nil
}

// Inbound reports nothing: the Reader pushes what the mailboxes receive
// to the inbound queue.
func (t *Transport) Inbound(context.Context, time.Time) ([]senders.Inbound, error) { return nil, nil }

// NextInbound reports no inbound event of simulated time.
func (t *Transport) NextInbound() (time.Time, bool) { return time.Time{}, false }

// Probe connects to the sender's SMTP and IMAP servers and signs in.
func (t *Transport) Probe(ctx context.Context, s *senders.Sender) error {
	b := t.box(s.ID)
	b.mu.Lock()
	defer b.mu.Unlock()
	defer t.idle(s.ID, b)
	if err := t.smtpConn(ctx, b, s); err != nil {
		return err
	}
	_, err := t.imapConn(ctx, b, s)
	return err
}

// Close closes every connection.
func (t *Transport) Close() {
	t.mu.Lock()
	boxes := t.boxes
	t.boxes = map[string]*box{}
	t.mu.Unlock()
	for _, b := range boxes {
		b.mu.Lock()
		b.close()
		b.mu.Unlock()
	}
}

func (t *Transport) box(senderID string) *box {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.boxes[senderID]
	if !ok {
		b = &box{}
		t.boxes[senderID] = b
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	return b
}

// idle closes b's connections when no work came for a while (wall time:
// it bounds open connections and decides no outcome).
func (t *Transport) idle(senderID string, b *box) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b.timer = time.AfterFunc(t.cfg.Idle, func() {
		t.mu.Lock()
		if t.boxes[senderID] == b {
			delete(t.boxes, senderID)
		}
		t.mu.Unlock()
		b.mu.Lock()
		b.close()
		b.mu.Unlock()
	})
}

func (b *box) close() {
	if b.smtp != nil {
		_ = b.smtp.Close()
		b.smtp = nil
	}
	b.closeIMAP()
}

func (b *box) closeIMAP() {
	if b.imap != nil {
		_ = b.imap.Logout().Wait()
		_ = b.imap.Close()
		b.imap = nil
	}
}
