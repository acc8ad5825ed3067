package email

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
)

// SourceIMAP is the inbound queue's source of what the reader reads.
const SourceIMAP = "imap"

// Reader reads the inboxes of the smtp senders over IMAP and queues what
// it finds (replies, bounces, auto-replies) in the inbound queue, each
// message once: the queue's dedupe key is the message's Message-ID.
//
// Messages are fetched with BODY.PEEK[] in a folder opened read-only
// (EXAMINE): the reader never marks a message \Seen, so the mailbox looks
// to its owner as it did. One reader at a time reads a sender's inbox,
// across replicas, under a lease (the mailboxes table), which also keeps
// where it is: the folder's UIDVALIDITY and the last UID taken in, saved
// in the transaction that queues what was read.
type Reader struct {
	// Senders lists the senders to read (senders.Service.ByTransport
	// with Name).
	Senders func(ctx context.Context) ([]*senders.Sender, error)
	Sink    senders.InboundSink
	States  *States
	Creds   senders.Credentials
	// Tokens give the access tokens of connected accounts (auth: oauth).
	Tokens senders.Tokens
	Clock  apikit.Clock
	Log    *slog.Logger
	// Owner names this reader in the leases; unique per process.
	Owner string

	// Lease is how long a lease lasts unrenewed (2 minutes).
	Lease time.Duration
	// PollEvery is how often a server without IDLE is asked (1 minute).
	PollEvery time.Duration
	// Polling asks every PollEvery also where the server has IDLE (for a
	// server whose IDLE is known to be unreliable).
	Polling bool
	// IdleFor is how long one IDLE lasts before the reader renews its
	// lease and looks again (1 minute; below Lease).
	IdleFor time.Duration
	// ListEvery is how often Run lists the senders again (1 minute).
	ListEvery time.Duration
	// FirstLook is how far back the first read of a mailbox goes (14
	// days): older mail was there before leadline read it.
	FirstLook time.Duration
	// Backoff is the wait before connecting again after the attempt-th
	// failure in a row (1s, 2s, 4s … at most 5 minutes).
	Backoff func(attempt int) time.Duration
	// After is the clock Run waits on (time.After); tests make it quick.
	After func(d time.Duration) <-chan time.Time
}

// NewReader returns a reader with the default intervals.
func NewReader(list func(ctx context.Context) ([]*senders.Sender, error), sink senders.InboundSink, states *States,
	creds senders.Credentials, clock apikit.Clock, log *slog.Logger) *Reader {
	return &Reader{Senders: list, Sink: sink, States: states, Creds: creds, Clock: clock, Log: log, Owner: "reader-" + apikit.NewID(),
		Lease: 2 * time.Minute, PollEvery: time.Minute, IdleFor: time.Minute, ListEvery: time.Minute, FirstLook: 14 * 24 * time.Hour,
		Backoff: func(n int) time.Duration { return min(time.Second<<min(n, 20), 5*time.Minute) }, After: time.After}
}

// ErrLeaseHeld is an inbox that another reader reads now.
var ErrLeaseHeld = errors.New("another reader reads this inbox")

// Once reads what arrived in s's inbox since the last read, queues it and
// returns how many reports were queued now. It takes the inbox's lease
// for the read and gives it up after (ErrLeaseHeld when another reader
// holds it). A server that cannot be reached or refuses the password is a
// sender-level *senders.TransportError (connection_failed, auth_failed,
// credentials_missing).
func (r *Reader) Once(ctx context.Context, s *senders.Sender) (int, error) {
	x, err := r.open(ctx, s)
	if err != nil {
		return 0, err
	}
	defer x.close()
	return x.catchUp(ctx)
}

// Poll reads every sender's inbox once (Once); the errors of the senders
// that failed are joined, the others are read all the same.
func (r *Reader) Poll(ctx context.Context) error {
	list, err := r.Senders(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range list {
		if imapOf(s) == nil {
			continue
		}
		if _, err := r.Once(ctx, s); err != nil && !errors.Is(err, ErrLeaseHeld) {
			errs = append(errs, fmt.Errorf("sender %s: %w", s.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Run follows every sender's inbox until ctx ends: it reads what is new,
// then waits in IDLE for more (or asks every PollEvery where the server
// has no IDLE), and connects again, after a backoff, when the connection
// fails or drops. The senders are listed again every ListEvery.
func (r *Reader) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	following := map[string]context.CancelFunc{}
	defer func() {
		for _, stop := range following {
			stop()
		}
		wg.Wait()
	}()
	for {
		list, err := r.Senders(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.Log.Error("email reader: list senders", "error", err)
		} else {
			seen := map[string]bool{}
			for _, s := range list {
				if imapOf(s) == nil {
					continue
				}
				seen[s.ID] = true
				if following[s.ID] != nil {
					continue
				}
				fctx, stop := context.WithCancel(ctx)
				following[s.ID] = stop
				wg.Add(1)
				go func() {
					defer wg.Done()
					r.follow(fctx, s)
				}()
			}
			for id, stop := range following {
				if !seen[id] {
					stop()
					delete(following, id)
				}
			}
		}
		if err := r.wait(ctx, r.ListEvery); err != nil {
			return err
		}
	}
}

// follow reads s's inbox until ctx ends, connecting again after a
// failure.
func (r *Reader) follow(ctx context.Context, s *senders.Sender) {
	failures := 0
	signalled := false // a sender-level failure was reported
	for ctx.Err() == nil {
		x, err := r.open(ctx, s)
		if err == nil {
			if signalled {
				signalled = false
				// The inbox connects again after failing: the sender goes
				// on (a failure of its SMTP server is the hourly probe's).
				r.signal(ctx, s, senders.SignalRecovered, "")
			}
			err = x.follow(ctx, func() { failures = 0 })
			x.close()
		}
		if ctx.Err() != nil {
			return
		}
		wait := r.Lease
		switch {
		case errors.Is(err, ErrLeaseHeld), errors.Is(err, ErrLeaseLost):
			r.Log.Debug("email reader: another reader has the inbox", "sender", s.Name)
		default:
			wait = r.Backoff(failures)
			failures++
			attrs := []any{"sender", s.Name, "attempt", failures, "retry_in", wait.String(), "error", err}
			if te, ok := senders.AsTransportError(err); ok {
				attrs = append(attrs, "code", te.Code)
				if te.Kind == senders.SenderLevel && !signalled {
					// The sender's health shows it, with what to fix.
					r.signal(ctx, s, te.Signal, te.Message)
					signalled = true
				}
			}
			r.Log.Warn("email reader: reading the inbox failed", attrs...)
		}
		if r.wait(ctx, wait) != nil {
			return
		}
	}
}

// signal queues a signal about s's account, at most once a minute per
// kind (the queue's dedupe key).
func (r *Reader) signal(ctx context.Context, s *senders.Sender, signal, message string) {
	now := r.Clock.Now()
	in := senders.Inbound{Kind: senders.InboundSignal, SenderID: s.ID, At: now, Signal: signal, Message: message}
	dedupe := "signal:" + s.ID + ":" + signal + ":" + now.UTC().Truncate(time.Minute).Format(time.RFC3339)
	if _, err := r.Sink.PushReport(ctx, s.WorkspaceID, SourceIMAP, dedupe, in); err != nil && ctx.Err() == nil {
		r.Log.Warn("email reader: could not queue a signal", "sender", s.Name, "signal", signal, "error", err)
	}
}

func (r *Reader) wait(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-r.After(d):
		return nil
	}
}

// mailboxConn is a connection to a sender's inbox, under the lease.
type mailboxConn struct {
	r      *Reader
	s      *senders.Sender
	c      *imapclient.Client
	folder string
	sel    *imap.SelectData
	// news is told of the server's unilateral EXISTS (new mail in IDLE).
	news chan struct{}
}

// open takes s's lease, connects and opens the inbox folder read-only.
func (r *Reader) open(ctx context.Context, s *senders.Sender) (*mailboxConn, error) {
	now := r.Clock.Now()
	if _, ok, err := r.States.Take(ctx, s.ID, r.Owner, now, now.Add(r.Lease)); err != nil {
		return nil, err
	} else if !ok {
		return nil, ErrLeaseHeld
	}
	x := &mailboxConn{r: r, s: s, folder: imapOf(s).Inbox, news: make(chan struct{}, 1)}
	if x.folder == "" {
		x.folder = "INBOX"
	}
	var err error
	x.c, err = dialIMAP(ctx, keys{creds: r.Creds, tokens: r.Tokens}, r.Log, s, &imapclient.Options{UnilateralDataHandler: &imapclient.UnilateralDataHandler{
		Mailbox: func(d *imapclient.UnilateralDataMailbox) {
			if d.NumMessages != nil {
				select {
				case x.news <- struct{}{}:
				default:
				}
			}
		},
	}})
	if err != nil {
		r.release(s)
		return nil, err
	}
	if x.sel, err = x.c.Select(x.folder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		x.close()
		return nil, fmt.Errorf("imap: open folder %q of %s: %w", x.folder, imapOf(s).Username, err)
	}
	return x, nil
}

func (r *Reader) release(s *senders.Sender) {
	if err := r.States.Release(context.Background(), s.ID, r.Owner); err != nil {
		r.Log.Warn("email reader: give up the inbox's lease", "sender", s.Name, "error", err)
	}
}

// close logs out (briefly: a dead connection is just closed) and gives
// the lease up.
func (x *mailboxConn) close() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = x.c.Logout().Wait()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	_ = x.c.Close()
	x.r.release(x.s)
}

// fetchBatch is how many messages one fetch and one transaction take.
const fetchBatch = 50

// catchUp queues what arrived since the last UID taken in (everything
// again when the folder's UIDVALIDITY changed: the queue's dedupe drops
// what was queued before), batch by batch, each batch's reports and the
// last UID in one transaction. It returns how many were queued now.
func (x *mailboxConn) catchUp(ctx context.Context) (int, error) {
	r, s := x.r, x.s
	st, err := r.States.Get(ctx, s.ID)
	if err != nil {
		return 0, err
	}
	validity := x.sel.UIDValidity
	criteria := &imap.SearchCriteria{}
	switch {
	case st.Folder == "" && st.UIDValidity == 0:
		// A mailbox read for the first time: its recent mail.
		criteria.Since = r.Clock.Now().Add(-r.FirstLook)
	case st.Folder != x.folder || st.UIDValidity != validity:
		r.Log.Info("email reader: the folder's UIDVALIDITY changed: reading it all again", "sender", s.Name,
			"folder", x.folder, "was", st.UIDValidity, "now", validity)
	default:
		criteria.UID = []imap.UIDSet{{imap.UIDRange{Start: imap.UID(st.LastUID + 1)}}}
	}
	found, err := x.c.UIDSearch(criteria, nil).Wait()
	if err != nil {
		return 0, fmt.Errorf("imap: search %s: %w", x.folder, err)
	}
	uids := found.AllUIDs()
	// "n:*" names the last message even below n.
	uids = slices.DeleteFunc(uids, func(u imap.UID) bool { return criteria.UID != nil && uint32(u) <= st.LastUID })
	slices.Sort(uids)
	last := st.LastUID
	if st.UIDValidity != validity || st.Folder != x.folder {
		last = 0
	}
	queued := 0
	for len(uids) > 0 || st.UIDValidity != validity || st.Folder != x.folder {
		batch := uids[:min(len(uids), fetchBatch)]
		uids = uids[len(batch):]
		var msgs []*imapclient.FetchMessageBuffer
		if len(batch) > 0 {
			msgs, err = x.c.Fetch(imap.UIDSetNum(batch...), &imap.FetchOptions{UID: true,
				BodySection: []*imap.FetchItemBodySection{{Peek: true}}}).Collect()
			if err != nil {
				return queued, fmt.Errorf("imap: fetch from %s: %w", x.folder, err)
			}
			slices.SortFunc(msgs, func(a, b *imapclient.FetchMessageBuffer) int { return int(a.UID) - int(b.UID) })
		}
		err = r.States.InTx(ctx, func(ctx context.Context) error {
			n := 0
			for _, m := range msgs {
				in, dedupe, ok := x.report(m)
				if ok {
					added, err := r.Sink.PushReport(ctx, s.WorkspaceID, SourceIMAP, dedupe, in)
					if err != nil {
						return err
					}
					if added {
						n++
					}
				}
				last = max(last, uint32(m.UID))
			}
			if err := r.States.Save(ctx, s.ID, r.Owner, x.folder, validity, last, r.Clock.Now()); err != nil {
				return err
			}
			queued += n
			return nil
		})
		if err != nil {
			return queued, err
		}
		st.Folder, st.UIDValidity = x.folder, validity
	}
	return queued, nil
}

// report is the report a fetched message makes and its dedupe key; false
// for a message with nothing to report (a delay) or one that cannot be
// read, which is logged and passed.
func (x *mailboxConn) report(m *imapclient.FetchMessageBuffer) (senders.Inbound, string, bool) {
	var raw []byte
	for _, b := range m.BodySection {
		raw = b.Bytes
	}
	p, err := Parse(raw)
	var in senders.Inbound
	if err == nil {
		in, err = p.Inbound()
	}
	if errors.Is(err, ErrNothingToReport) {
		return in, "", false
	} else if err != nil {
		x.r.Log.Warn("email reader: a message that cannot be read is passed", "sender", x.s.Name, "folder", x.folder, "uid", m.UID, "error", err)
		return in, "", false
	}
	in.SenderID = x.s.ID
	dedupe := p.MessageID
	if dedupe == "" {
		sum := sha256.Sum256(raw)
		dedupe = "sha256:" + hex.EncodeToString(sum[:])
	}
	return in, dedupe, true
}

// follow catches up, then waits for news and catches up again, renewing
// the lease each round, until the connection or the lease is lost or ctx
// ends. ok is called after each successful catch-up.
func (x *mailboxConn) follow(ctx context.Context, ok func()) error {
	r := x.r
	idle := x.c.Caps().Has(imap.CapIdle) && !r.Polling
	for {
		if _, err := x.catchUp(ctx); err != nil {
			return err
		}
		ok()
		if err := r.States.Renew(ctx, x.s.ID, r.Owner, r.Clock.Now().Add(r.Lease)); err != nil {
			return err
		}
		if !idle {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-x.c.Closed():
				return errors.New("imap: the server closed the connection")
			case <-r.After(r.PollEvery):
			}
			continue
		}
		if err := x.idle(ctx); err != nil {
			return err
		}
	}
}

// idle waits in IDLE for new mail, at most IdleFor.
func (x *mailboxConn) idle(ctx context.Context) error {
	cmd, err := x.c.Idle()
	if err != nil {
		return fmt.Errorf("imap: idle: %w", err)
	}
	select {
	case <-ctx.Done():
		_ = cmd.Close() // DONE, so that the logout that follows is answered
		return ctx.Err()
	case <-x.c.Closed():
		return errors.New("imap: the server closed the connection during IDLE")
	case <-x.news:
	case <-x.r.After(x.r.IdleFor):
	}
	if err := cmd.Close(); err != nil {
		return fmt.Errorf("imap: end idle: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("imap: idle: %w", err)
	}
	return nil
}
