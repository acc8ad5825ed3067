package email

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/leadline/leadline/senders"
)

// PendingKeyword marks the copy in the sent folder of a message whose
// SMTP transaction has not been confirmed.
const PendingKeyword imap.Flag = "$LeadlinePending"

// capGmail is the capability of Gmail's IMAP, which files sent mail
// itself: its copy is kept, and leadline's removed.
const capGmail imap.Cap = "X-GM-EXT-1"

// DefaultSent is the sent folder when the settings name none.
const DefaultSent = "Sent"

func sentFolder(s *senders.Sender) string {
	if m := imapOf(s); m != nil && m.Sent != "" {
		return m.Sent
	}
	return DefaultSent
}

// imapConn connects b to sender s's IMAP server, signs in and selects the
// sent folder, unless it is connected.
func (t *Transport) imapConn(ctx context.Context, b *box, s *senders.Sender) (*imapclient.Client, error) {
	if b.imap != nil {
		select {
		case <-b.imap.Closed():
			b.imap = nil
		default:
			return b.imap, nil
		}
	}
	c, err := dialIMAP(ctx, t.keys(), t.cfg.Logger, s, nil)
	if err != nil {
		return nil, err
	}
	if _, err := c.Select(sentFolder(s), nil).Wait(); err != nil {
		c.Close()
		return nil, &senders.TransportError{Kind: senders.SenderLevel, Code: CodeConnectionFailed, Signal: CodeConnectionFailed,
			Message: fmt.Sprintf("imap: the sent folder %q cannot be opened (%v). Set imap.sent to the folder the mailbox files sent mail in (Gmail: \"[Gmail]/Sent Mail\").", sentFolder(s), err)}
	}
	b.imap = c
	return c, nil
}

// imapOp runs op on b's IMAP connection, connecting again once when the
// connection was found closed.
func (t *Transport) imapOp(ctx context.Context, b *box, s *senders.Sender, op func(c *imapclient.Client) error) error {
	for try := 0; ; try++ {
		c, err := t.imapConn(ctx, b, s)
		if err != nil {
			return err
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		err = op(c)
		stop()
		if err == nil {
			return nil
		}
		var imapErr *imap.Error
		if errors.As(err, &imapErr) || ctx.Err() != nil {
			return err
		}
		// The connection failed: another one, once.
		b.closeIMAP()
		if try > 0 {
			return &senders.TransportError{Kind: senders.Transient, Code: CodeConnectionFailed, Message: "imap: " + err.Error()}
		}
	}
}

// appendPending appends l to the sent folder, seen and marked pending,
// and returns its UID (0 when the server does not say: the copy is then
// found by its Message-ID).
func (t *Transport) appendPending(ctx context.Context, b *box, s *senders.Sender, l *letter, at time.Time) (imap.UID, error) {
	var uid imap.UID
	err := t.imapOp(ctx, b, s, func(c *imapclient.Client) error {
		cmd := c.Append(sentFolder(s), int64(len(l.raw)), &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen, PendingKeyword}, Time: at})
		if _, err := cmd.Write(l.raw); err != nil {
			cmd.Close()
			return err
		}
		if err := cmd.Close(); err != nil {
			return err
		}
		data, err := cmd.Wait()
		if err != nil {
			return err
		}
		uid = data.UID
		return nil
	})
	if te, ok := senders.AsTransportError(err); ok || err == nil {
		if ok {
			return 0, te
		}
		return uid, nil
	}
	return 0, &senders.TransportError{Kind: senders.Transient, Code: "sent_copy_failed",
		Message: fmt.Sprintf("imap: the copy could not be kept in %q (%v); nothing was sent", sentFolder(s), err)}
}

// copies returns the UIDs of the sent folder's messages with Message-ID
// id, and those of them still marked pending.
func copies(c *imapclient.Client, id string) (all, pending []imap.UID, err error) {
	found, err := c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: bracket(id)}},
		NotFlag: []imap.Flag{imap.FlagDeleted}}, nil).Wait()
	if err != nil {
		return nil, nil, err
	}
	all = found.AllUIDs()
	if len(all) == 0 {
		return nil, nil, nil
	}
	msgs, err := c.Fetch(imap.UIDSetNum(all...), &imap.FetchOptions{UID: true, Flags: true}).Collect()
	if err != nil {
		return nil, nil, err
	}
	for _, m := range msgs {
		if slices.Contains(m.Flags, PendingKeyword) {
			pending = append(pending, m.UID)
		}
	}
	return all, pending, nil
}

// confirm clears the pending mark of the copy of an accepted message.
// Where the provider files sent mail itself (Gmail), its own copy is kept
// and leadline's is removed.
func (t *Transport) confirm(ctx context.Context, b *box, s *senders.Sender, l *letter, uid imap.UID) error {
	return t.imapOp(ctx, b, s, func(c *imapclient.Client) error {
		clear := func(uid imap.UID) error {
			return c.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: imap.StoreFlagsDel, Silent: true, Flags: []imap.Flag{PendingKeyword}}, nil).Close()
		}
		if uid != 0 && !c.Caps().Has(capGmail) {
			return clear(uid)
		}
		all, pending, err := copies(c, l.id)
		if err != nil {
			return err
		}
		if uid == 0 && len(pending) > 0 {
			uid = pending[0]
		}
		if uid == 0 {
			return nil
		}
		if len(all) > 1 {
			return remove(c, uid)
		}
		return clear(uid)
	})
}

// dropCopy removes the copy of a message the server refused.
func (t *Transport) dropCopy(ctx context.Context, b *box, s *senders.Sender, uid imap.UID) error {
	if uid == 0 {
		return nil
	}
	return t.imapOp(ctx, b, s, func(c *imapclient.Client) error { return remove(c, uid) })
}

func remove(c *imapclient.Client, uid imap.UID) error {
	set := imap.UIDSetNum(uid)
	if err := c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
		return err
	}
	if c.Caps().Has(imap.CapUIDPlus) {
		return c.UIDExpunge(set).Close()
	}
	return nil // the server expunges it with the next EXPUNGE or CLOSE
}

// findSent reports whether the sent folder holds the message with
// Message-ID id, sent or pending.
func (t *Transport) findSent(ctx context.Context, b *box, s *senders.Sender, id string) (bool, error) {
	var found bool
	err := t.imapOp(ctx, b, s, func(c *imapclient.Client) error {
		// A NOOP first: the folder may have changed since it was selected.
		if err := c.Noop().Wait(); err != nil {
			return err
		}
		all, _, err := copies(c, id)
		found = len(all) > 0
		return err
	})
	return found, err
}
