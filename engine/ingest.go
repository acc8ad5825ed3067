package engine

import (
	"context"
	"errors"
	"hash/crc32"
	"strings"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
)

// ingestBatch is how many reports one ingest transaction records.
const ingestBatch = 64

// Ingest takes in what the transports report happened outside up to now:
// acceptances, replies, bounces and signals about senders. Each report is
// recorded with its consequences (reply-stop, a sender's health) in the
// transaction that records it; reports are taken in batches of
// ingestBatch per transaction, and a batch that fails is taken again one
// report per transaction, so that the reports before a failing one are
// kept. A report about an unknown sender or lead is logged and skipped.
// On Postgres, IngestWorkers take the reports in parallel, split by lead
// so that each lead's reports keep their order.
func (r *Runner) Ingest(ctx context.Context) error {
	now := r.svc.clock.Now()
	for name, t := range r.transports {
		in, err := t.Inbound(ctx, now)
		if err != nil {
			r.observer.TransportError(name, "inbound")
			return err
		}
		parts := make([][]senders.Inbound, max(1, r.IngestWorkers))
		for _, ev := range in {
			k := int(crc32.ChecksumIEEE([]byte(ev.LeadID+"|"+ev.SenderID)) % uint32(len(parts)))
			if ev.LeadID != "" {
				k = int(crc32.ChecksumIEEE([]byte(ev.LeadID)) % uint32(len(parts)))
			}
			parts[k] = append(parts[k], ev)
		}
		errs := make([]error, len(parts))
		var wg sync.WaitGroup
		for i, part := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = r.ingestPart(ctx, part, now)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for _, ev := range in {
			r.observer.Inbound(name, ev.Kind)
		}
		if src, ok := t.(BookingSource); ok {
			bs, err := src.Bookings(ctx, now)
			if err != nil {
				return err
			}
			for i := range bs {
				if err := r.svc.db.InTx(ctx, func(ctx context.Context) error { return r.take(ctx, "", Event{Booking: &bs[i]}, now) }); err != nil {
					return err
				}
				r.observer.Inbound(name, "booking")
			}
		}
	}
	return r.drain(ctx, now)
}

// ingestPart records reports in order, in batches.
func (r *Runner) ingestPart(ctx context.Context, in []senders.Inbound, now time.Time) error {
	for start := 0; start < len(in); start += ingestBatch {
		part := in[start:min(start+ingestBatch, len(in))]
		err := r.svc.db.InTx(ctx, func(ctx context.Context) error {
			r.svc.enrollments.BatchReplyStops(ctx, now)
			if err := r.prefetch(ctx, part); err != nil {
				return err
			}
			for _, ev := range part {
				if err := r.ingestOne(ctx, ev, now); err != nil {
					return err
				}
			}
			return r.svc.enrollments.FlushReplyStops(ctx)
		})
		if err == nil {
			continue
		}
		if len(part) == 1 {
			return err
		}
		for _, ev := range part {
			if err := r.svc.db.InTx(ctx, func(ctx context.Context) error {
				r.svc.enrollments.BatchReplyStops(ctx, now)
				if err := r.ingestOne(ctx, ev, now); err != nil {
					return err
				}
				return r.svc.enrollments.FlushReplyStops(ctx)
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// prefetch has the inbox read, in one query per workspace each, the
// leads of a batch's replies, their threads and their live enrollments,
// for the replies to take from the transaction's memo (each once: a second
// report of the same lead reads afresh, after the first changed it).
func (r *Runner) prefetch(ctx context.Context, batch []senders.Inbound) error {
	byWorkspace := map[string][]string{}
	sendersOf := map[string][]*senders.Sender{}
	for _, ev := range batch {
		if ev.Kind != senders.InboundReply || ev.LeadID == "" {
			continue
		}
		s, err := r.inboundSender(ctx, ev.SenderID)
		if db.IsNoRows(err) {
			continue
		} else if err != nil {
			return err
		}
		byWorkspace[s.WorkspaceID] = append(byWorkspace[s.WorkspaceID], ev.LeadID)
		sendersOf[s.WorkspaceID] = append(sendersOf[s.WorkspaceID], s)
	}
	for ws, ids := range byWorkspace {
		if err := r.svc.inbox.Prefetch(ctx, ws, sendersOf[ws], ids); err != nil {
			return err
		}
	}
	return nil
}

// senderKey is a sender an ingest transaction read, in its memo.
type senderKey string

// inboundSender reads a sender once per ingest transaction: a batch holds
// many reports of the same senders, and a signal changes the one read.
func (r *Runner) inboundSender(ctx context.Context, id string) (*senders.Sender, error) {
	memo := db.TxMemo(ctx)
	if memo == nil {
		return r.svc.senders.Sender(ctx, id)
	}
	if v, ok := memo.Load(senderKey(id)); ok {
		return v.(*senders.Sender), nil
	}
	s, err := r.svc.senders.Sender(ctx, id)
	if err == nil {
		memo.Store(senderKey(id), s)
	}
	return s, err
}

func (r *Runner) ingestOne(ctx context.Context, in senders.Inbound, now time.Time) error {
	svc := r.svc
	if pending, lead := svc.enrollments.ReplyStopsPending(ctx, in.LeadID); pending && (in.Kind != senders.InboundReply || lead) {
		// This report could read what the batch's replies changed.
		if err := svc.enrollments.FlushReplyStops(ctx); err != nil {
			return err
		}
	}
	if in.Kind != senders.InboundReply {
		// Whatever else happened to the lead makes what prefetch read stale.
		svc.inbox.Forget(ctx, in.LeadID)
	}
	s, err := r.inboundSender(ctx, in.SenderID)
	if db.IsNoRows(err) {
		r.logger.Warn("runner: inbound for an unknown sender", "sender_id", in.SenderID, "kind", in.Kind)
		return nil
	} else if err != nil {
		return err
	}
	if in.LeadID == "" && in.Match != nil {
		if in.LeadID, err = r.match(ctx, s, in.Match); err != nil {
			return err
		}
		if in.LeadID == "" {
			// Mail that is no answer to leadline and from no lead: left
			// alone, and counted.
			r.unmatched.Add(1)
			r.observer.Unmatched()
			r.logger.Debug("runner: inbound matches no lead", "sender_id", s.ID, "kind", in.Kind)
			return nil
		}
	}
	if m := in.Match.Member(); m != nil && in.Kind != senders.InboundSignal {
		// The report names the person: the lead keeps who they are, as it
		// does when an action resolves them.
		if changed, err := svc.leads.SetMember(ctx, s.WorkspaceID, in.LeadID, m); err != nil {
			return err
		} else if changed {
			svc.inbox.Forget(ctx, in.LeadID)
		}
	}
	ev := events.Event{WorkspaceID: s.WorkspaceID, LeadID: in.LeadID, SenderID: s.ID}
	emit := func(kind string, data map[string]any) error {
		ev.Kind, ev.Data = kind, data
		return svc.log.EmitMany(ctx, []events.Event{ev})
	}
	switch in.Kind {
	case senders.InboundSignal:
		if err := svc.senders.Signal(ctx, s, in.Signal, in.Message); err != nil {
			return err
		}
		if in.Signal == senders.SignalRecovered {
			return svc.enrollments.WakeWaiting(ctx, s.WorkspaceID, s.ID, recoverCodes, now)
		}
		return nil
	case senders.InboundAccepted:
		sentAt, err := svc.senders.InviteAccepted(ctx, s, in.LeadID)
		if err != nil || sentAt == nil {
			return err
		}
		// The acceptance counts for the enrollment that invited, and for
		// the day of the invitation in the acceptance rate.
		if err := r.sentBy(ctx, &ev, s); err != nil {
			return err
		}
		if err := emit(enrollments.EventInviteAccepted, map[string]any{"sender_id": s.ID, "invited_at": sentAt.UTC()}); err != nil {
			return err
		}
		return svc.enrollments.Wake(ctx, s.WorkspaceID, in.LeadID, "awaiting_acceptance", now)
	case senders.InboundBounce:
		if err := r.sentBy(ctx, &ev, s); err != nil {
			return err
		}
		if err := emit(enrollments.EventEmailBounced, map[string]any{"sender_id": s.ID, "message": in.Message}); err != nil {
			return err
		}
		if err := svc.senders.RecordBounce(ctx, s, in.LeadID, in.Message); err != nil {
			return err
		}
		live, err := svc.store.Live(ctx, s.WorkspaceID, []string{in.LeadID})
		if err != nil {
			return err
		}
		for i := range live {
			e := &live[i]
			if apikit.Deref(e.SenderID) != s.ID && apikit.Deref(e.EmailSenderID) != s.ID {
				continue
			}
			if err := r.svc.enrollments.Fail(ctx, e, "email_bounced", "The lead's email address bounced: "+in.Message, now); err != nil {
				return err
			}
			if _, err := svc.enrollments.Record(ctx, e, now); err != nil {
				return err
			}
		}
		return nil
	case senders.InboundReply:
		return r.reply(ctx, s, in, now)
	}
	return nil
}

// match finds the lead of a report its transport could not name: by the
// message it answers (leadline's sent messages), then by who wrote or was
// invited (the provider's id, the address, the public identifier), then
// by what leadline itself sent them through s (its invitation to that
// person, its messages in that conversation).
func (r *Runner) match(ctx context.Context, s *senders.Sender, m *senders.Match) (string, error) {
	lead, err := r.svc.inbox.LeadBySent(ctx, s.WorkspaceID, m.MessageIDs)
	if err != nil || lead != "" {
		return lead, err
	}
	lead, err = r.svc.leads.MatchInbound(ctx, s.WorkspaceID, m.Email, m.ProviderID, m.PublicIdentifier)
	if err != nil || lead != "" {
		return lead, err
	}
	if m.Invitation != "" || m.ProviderID != "" {
		if lead, err = r.svc.senders.InvitationLead(ctx, s, m.Invitation, m.ProviderID); err != nil || lead != "" {
			return lead, err
		}
	}
	return r.svc.inbox.LeadByConversation(ctx, s, m.Conversation)
}

// Unmatched is how many inbound reports matched no lead since the runner
// started.
func (r *Runner) Unmatched() int64 { return r.unmatched.Load() }

// isUnsubscribe reports whether a reply asks, by its subject, for no more
// mail: the mailto: List-Unsubscribe sends such a reply.
func isUnsubscribe(subject string) bool {
	s := strings.TrimSpace(strings.ToLower(subject))
	for _, p := range []string{"re:", "aw:", "sv:", "fw:"} {
		s = strings.TrimSpace(strings.TrimPrefix(s, p))
	}
	return s == "unsubscribe"
}

// reply hands a reply to the inbox, which keeps it once per provider
// message, reads it and applies reply-stop in this transaction.
func (r *Runner) reply(ctx context.Context, s *senders.Sender, in senders.Inbound, now time.Time) error {
	at := in.At
	if at.IsZero() {
		at = now
	}
	got, err := r.svc.inbox.Receive(ctx, inbox.Arrived{WorkspaceID: s.WorkspaceID, Sender: s, LeadID: in.LeadID, ProviderMessageID: in.ProviderMessageID,
		Subject: in.Subject, Body: in.Body, Headers: in.Headers, AutoReply: in.AutoReply, At: at})
	if errors.Is(err, inbox.ErrUnknownLead) {
		r.logger.Warn("runner: reply from an unknown lead", "sender_id", s.ID, "lead_id", in.LeadID)
		return nil
	}
	if err != nil {
		return err
	}
	if isUnsubscribe(in.Subject) {
		err = r.svc.leads.Unsubscribe(ctx, s.WorkspaceID, in.LeadID, leads.UnsubscribedByReply)
		if err != nil && apikit.ErrorCode(err) != apikit.ENotFound {
			return err
		}
	}
	if r.svc.rules == nil {
		return nil
	}
	// The rule of the sequence the reply answers, for its intent, once
	// per reply; after an unsubscribe, so that it finds the lead
	// do-not-contact.
	return r.svc.rules.Replied(ctx, got)
}

// sentBy names in ev the lead's enrollment that s works for, if one is
// live: the sequence, enrollment and client an acceptance or a bounce
// counts for in reports.
func (r *Runner) sentBy(ctx context.Context, ev *events.Event, s *senders.Sender) error {
	live, err := r.svc.store.Live(ctx, s.WorkspaceID, []string{ev.LeadID})
	if err != nil {
		return err
	}
	for _, e := range live {
		if apikit.Deref(e.SenderID) == s.ID || apikit.Deref(e.EmailSenderID) == s.ID {
			ev.SequenceID, ev.EnrollmentID, ev.ClientID = e.SequenceID, e.ID, apikit.Deref(e.ClientID)
			return nil
		}
	}
	return nil
}

// Rules is what the runner needs of the sequences' rules (package rules):
// what a reply or a booked meeting does beyond reply-stop. Both methods
// run in the transaction ctx carries, once per reply or booking, and
// return only the database's errors.
type Rules interface {
	// Replied runs the rule of the sequence the reply answers.
	Replied(ctx context.Context, got *inbox.Received) error
	// Booked runs the rule of the sequence a new booking came from.
	Booked(ctx context.Context, b *bookings.Booking) error
}

// Bookings is what the runner needs of bookings: the sandbox network books
// meetings through the inbound path.
type Bookings interface {
	// Book records a booking once per provider and booking id, and
	// reports whether it was new. Returns only the database's errors.
	Book(ctx context.Context, b *bookings.Booking) (bool, error)
}
