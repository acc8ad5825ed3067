package enrollments

import (
	"context"
	"errors"
	"hash/crc32"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
)

func newID() string { return apikit.NewID() }

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
	for _, t := range r.transports {
		in, err := t.Inbound(ctx, now)
		if err != nil {
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
	}
	return nil
}

// ingestPart records reports in order, in batches.
func (r *Runner) ingestPart(ctx context.Context, in []senders.Inbound, now time.Time) error {
	for start := 0; start < len(in); start += ingestBatch {
		part := in[start:min(start+ingestBatch, len(in))]
		err := r.svc.db.InTx(ctx, func(ctx context.Context) error {
			if err := r.prefetch(ctx, part); err != nil {
				return err
			}
			for _, ev := range part {
				if err := r.ingestOne(ctx, ev, now); err != nil {
					return err
				}
			}
			return r.flushStops(ctx)
		})
		if err == nil {
			continue
		}
		if len(part) == 1 {
			return err
		}
		for _, ev := range part {
			if err := r.svc.db.InTx(ctx, func(ctx context.Context) error {
				if err := r.ingestOne(ctx, ev, now); err != nil {
					return err
				}
				return r.flushStops(ctx)
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// prefetch reads, in one query per workspace each, the leads of a batch's
// replies, their live enrollments and their threads, for the replies to take from the
// transaction's memo (each once: a second report of the same lead reads
// afresh, after the first changed it).
func (r *Runner) prefetch(ctx context.Context, batch []senders.Inbound) error {
	memo := db.TxMemo(ctx)
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
		ls, err := r.svc.leads.ByIDs(ctx, ws, ids)
		if err != nil {
			return err
		}
		for i := range ls {
			memo.Store("lead:"+ls[i].ID, &ls[i])
		}
		live, err := r.svc.store.Live(ctx, ws, ids)
		if err != nil {
			return err
		}
		byLead := map[string][]Enrollment{}
		for _, id := range ids {
			byLead[id] = nil
		}
		for _, e := range live {
			byLead[e.LeadID] = append(byLead[e.LeadID], e)
		}
		for id, es := range byLead {
			memo.Store("live:"+id, es)
		}
	}
	return nil
}

// loadMemo returns what the transaction's memo holds under key.
func loadMemo(ctx context.Context, key string) (any, bool) {
	if memo := db.TxMemo(ctx); memo != nil {
		return memo.Load(key)
	}
	return nil, false
}

// take returns and forgets what prefetch read under key.
func take[T any](ctx context.Context, key string) (T, bool) {
	var zero T
	memo := db.TxMemo(ctx)
	if memo == nil {
		return zero, false
	}
	v, ok := memo.LoadAndDelete(key)
	if !ok {
		return zero, false
	}
	return v.(T), true
}

// inboundSender reads a sender once per ingest transaction: a batch holds
// many reports of the same senders, and a signal changes the one read.
func (r *Runner) inboundSender(ctx context.Context, id string) (*senders.Sender, error) {
	memo := db.TxMemo(ctx)
	if memo == nil {
		return r.svc.senders.Sender(ctx, id)
	}
	if v, ok := memo.Load("sender:" + id); ok {
		return v.(*senders.Sender), nil
	}
	s, err := r.svc.senders.Sender(ctx, id)
	if err == nil {
		memo.Store("sender:"+id, s)
	}
	return s, err
}

func (r *Runner) ingestOne(ctx context.Context, in senders.Inbound, now time.Time) error {
	svc := r.svc
	if p, ok := loadMemo(ctx, "stops"); ok && (in.Kind != senders.InboundReply || p.(*replyStops).touched[in.LeadID]) {
		// This report could read what the batch's replies changed.
		if err := r.flushStops(ctx); err != nil {
			return err
		}
	}
	if in.Kind != senders.InboundReply {
		// Whatever else happened to the lead makes what prefetch read stale.
		take[any](ctx, "live:"+in.LeadID)
		take[any](ctx, "lead:"+in.LeadID)
	}
	s, err := r.inboundSender(ctx, in.SenderID)
	if db.IsNoRows(err) {
		r.logger.Warn("runner: inbound for an unknown sender", "sender_id", in.SenderID, "kind", in.Kind)
		return nil
	} else if err != nil {
		return err
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
			return svc.store.WakeWaiting(ctx, s.WorkspaceID, s.ID, []string{"sender_disconnected", "sender_restricted"}, now)
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
		if err := emit(EventInviteAccepted, map[string]any{"sender_id": s.ID, "invited_at": sentAt.UTC()}); err != nil {
			return err
		}
		return svc.store.Wake(ctx, s.WorkspaceID, in.LeadID, "awaiting_acceptance", now)
	case senders.InboundBounce:
		if err := r.sentBy(ctx, &ev, s); err != nil {
			return err
		}
		if err := emit(EventEmailBounced, map[string]any{"sender_id": s.ID, "message": in.Message}); err != nil {
			return err
		}
		live, err := svc.store.Live(ctx, s.WorkspaceID, []string{in.LeadID})
		if err != nil {
			return err
		}
		for i := range live {
			e := &live[i]
			if deref(e.SenderID) != s.ID && deref(e.EmailSenderID) != s.ID {
				continue
			}
			if err := r.fail(ctx, e, "email_bounced", "The lead's email address bounced: "+in.Message, now); err != nil {
				return err
			}
			e.UpdatedAt, e.LeaseUntil = now, nil
			if err := svc.store.Save(ctx, e); err != nil {
				return err
			}
		}
		return nil
	case senders.InboundReply:
		return r.reply(ctx, s, in, now)
	case senders.InboundBooking:
		_, err := svc.bookings.Book(ctx, &bookings.Booking{WorkspaceID: s.WorkspaceID, Provider: bookings.Sandbox, BookingID: in.BookingID,
			LeadID: &in.LeadID, SenderID: &s.ID, StartsAt: in.StartsAt})
		return err
	}
	return nil
}

// reply records a reply through the inbox, which keeps it once per
// provider message and reads it. A person's reply stops every live
// enrollment of the lead (reply-stop) in this transaction; an auto-reply
// only delays the lead's next step, until the return date it gives or by
// OutOfOfficeDelay.
func (r *Runner) reply(ctx context.Context, s *senders.Sender, in senders.Inbound, now time.Time) error {
	svc := r.svc
	live, ok := take[[]Enrollment](ctx, "live:"+in.LeadID)
	if !ok {
		var err error
		if live, err = svc.store.Live(ctx, s.WorkspaceID, []string{in.LeadID}); err != nil {
			return err
		}
	}
	a := inbox.Arrived{WorkspaceID: s.WorkspaceID, Sender: s, LeadID: in.LeadID, ProviderMessageID: in.ProviderMessageID,
		Subject: in.Subject, Body: in.Body, Headers: in.Headers, AutoReply: in.AutoReply, At: in.At}
	if l, ok := take[*leads.Lead](ctx, "lead:"+in.LeadID); ok && l.WorkspaceID == s.WorkspaceID {
		a.Lead = l
	}
	if a.At.IsZero() {
		a.At = now
	}
	for _, e := range live {
		if deref(e.SenderID) == s.ID || deref(e.EmailSenderID) == s.ID {
			a.SequenceID, a.EnrollmentID = e.SequenceID, e.ID
		}
	}
	// reply.received and the enrollments' ends are written with
	// message.classified, in one statement.
	var until time.Time
	a.Also = func(th *inbox.Thread, m *inbox.Message, read inbox.Classification) []events.Event {
		data := map[string]any{"sender_id": s.ID, "auto_reply": read.AutoReply, "provider_message_id": in.ProviderMessageID,
			"thread_id": th.ID, "message_id": m.ID, "intent": string(read.Intent), "body": in.Body}
		if in.Subject != "" {
			data["subject"] = in.Subject
		}
		if read.AutoReply {
			until = now.Add(OutOfOfficeDelay)
			if read.ReturnsAt != nil && read.ReturnsAt.After(now) {
				until = *read.ReturnsAt
				data["returns_at"] = until
			}
		}
		out := []events.Event{{WorkspaceID: s.WorkspaceID, LeadID: in.LeadID, SenderID: s.ID, ClientID: apikit.Deref(th.ClientID),
			SequenceID: apikit.Deref(th.SequenceID), Kind: EventReplyReceived, Data: data}}
		if !read.AutoReply {
			for i := range live {
				out = append(out, r.ended(&live[i], Replied, "replied", now))
			}
		}
		return out
	}
	got, err := svc.inbox.Receive(ctx, a)
	if errors.Is(err, inbox.ErrUnknownLead) {
		r.logger.Warn("runner: reply from an unknown lead", "sender_id", s.ID, "lead_id", in.LeadID)
		return nil
	}
	if err != nil || got.Duplicate {
		return err
	}
	if got.Read.AutoReply {
		for i := range live {
			e := &live[i]
			if e.Status == Active && e.NextRunAt != nil && e.NextRunAt.Before(until) {
				reason := "out_of_office"
				e.NextRunAt, e.WaitingFor, e.WaitingUntil, e.UpdatedAt = &until, &reason, &until, now
				if err := svc.store.Save(ctx, e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if stops := pendingStops(ctx, now); stops != nil {
		for _, e := range live {
			stops.enrollments = append(stops.enrollments, e.ID)
		}
		stops.leads[s.WorkspaceID] = append(stops.leads[s.WorkspaceID], in.LeadID)
		stops.touched[in.LeadID] = true
		return nil
	}
	for i := range live {
		e := &live[i]
		e.UpdatedAt, e.LeaseUntil = now, nil
		if err := svc.store.Save(ctx, e); err != nil {
			return err
		}
	}
	return svc.leads.MarkReplied(ctx, s.WorkspaceID, in.LeadID)
}

// replyStops are the reply-stop writes of an ingest batch: the ended
// enrollments and the leads that replied, written in one statement each
// when the batch ends, or before a report that could read them.
type replyStops struct {
	at          time.Time
	enrollments []string
	leads       map[string][]string // by workspace
	touched     map[string]bool
}

// pendingStops returns the transaction's reply-stop writes (nil outside
// an ingest transaction).
func pendingStops(ctx context.Context, now time.Time) *replyStops {
	memo := db.TxMemo(ctx)
	if memo == nil {
		return nil
	}
	v, _ := memo.LoadOrStore("stops", &replyStops{at: now, leads: map[string][]string{}, touched: map[string]bool{}})
	return v.(*replyStops)
}

// flushStops writes the pending reply-stop writes.
func (r *Runner) flushStops(ctx context.Context) error {
	p, ok := take[*replyStops](ctx, "stops")
	if !ok {
		return nil
	}
	if err := r.svc.store.EndReplied(ctx, p.enrollments, p.at); err != nil {
		return err
	}
	for ws, ids := range p.leads {
		if err := r.svc.leads.MarkReplied(ctx, ws, ids...); err != nil {
			return err
		}
	}
	return nil
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
		if deref(e.SenderID) == s.ID || deref(e.EmailSenderID) == s.ID {
			ev.SequenceID, ev.EnrollmentID, ev.ClientID = e.SequenceID, e.ID, deref(e.ClientID)
			return nil
		}
	}
	return nil
}
