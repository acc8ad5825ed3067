package enrollments

import (
	"context"
	"time"

	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// The enrollments area applies reply-stop for the inbox (the platform
// hands it to the inbox as its inbox.Stopper): the inbox keeps and reads a
// reply, then tells the lead's live enrollments what it means through a
// ReplyStop.

// liveKey is a lead's live enrollments as PrefetchLive read them, in the
// transaction's memo.
type liveKey string

// stopsKey is the transaction's batch of reply-stop writes.
type stopsKey struct{}

// PrefetchLive reads the live enrollments of leadIDs in one query, for
// ForReply to take each lead's once. Outside a transaction it does
// nothing. Returns only the database's errors.
func (svc *Service) PrefetchLive(ctx context.Context, workspaceID string, leadIDs []string) error {
	memo := db.TxMemo(ctx)
	if memo == nil {
		return nil
	}
	live, err := svc.store.Live(ctx, workspaceID, leadIDs)
	if err != nil {
		return err
	}
	byLead := map[string][]Enrollment{}
	for _, id := range leadIDs {
		byLead[id] = nil
	}
	for _, e := range live {
		byLead[e.LeadID] = append(byLead[e.LeadID], e)
	}
	for id, es := range byLead {
		memo.Store(liveKey(id), es)
	}
	return nil
}

// Forget drops what PrefetchLive read of a lead.
func (svc *Service) Forget(ctx context.Context, leadID string) {
	if memo := db.TxMemo(ctx); memo != nil {
		memo.Delete(liveKey(leadID))
	}
}

// ForReply returns the lead's live enrollments as a reply finds them: what
// PrefetchLive read, once, or else a read of the database. Returns only
// the database's errors.
func (svc *Service) ForReply(ctx context.Context, workspaceID, leadID string) (*ReplyStop, error) {
	if memo := db.TxMemo(ctx); memo != nil {
		if v, ok := memo.LoadAndDelete(liveKey(leadID)); ok {
			return &ReplyStop{svc: svc, workspaceID: workspaceID, leadID: leadID, live: v.([]Enrollment)}, nil
		}
	}
	live, err := svc.store.Live(ctx, workspaceID, []string{leadID})
	if err != nil {
		return nil, err
	}
	return &ReplyStop{svc: svc, workspaceID: workspaceID, leadID: leadID, live: live}, nil
}

// ReplyStop is one reply's stop of a lead's live enrollments.
type ReplyStop struct {
	svc         *Service
	workspaceID string
	leadID      string
	live        []Enrollment
}

// Answers returns the live enrollment senderID works for: the one the
// reply answers.
func (r *ReplyStop) Answers(senderID string) (sequenceID, enrollmentID string) {
	for _, e := range r.live {
		if deref(e.SenderID) == senderID || deref(e.EmailSenderID) == senderID {
			sequenceID, enrollmentID = e.SequenceID, e.ID
		}
	}
	return sequenceID, enrollmentID
}

// Ending ends every live enrollment of the lead as replied, in memory,
// and returns their events for the caller to write.
func (r *ReplyStop) Ending(now time.Time) []events.Event {
	evs := make([]events.Event, 0, len(r.live))
	for i := range r.live {
		evs = append(evs, r.svc.Ended(&r.live[i], Replied, "replied", now))
	}
	return evs
}

// Replied writes what Ending changed and marks the lead replied. In a
// transaction that batches reply-stops (BatchReplyStops) the enrollments'
// and the lead's rows are written together when the batch is flushed.
func (r *ReplyStop) Replied(ctx context.Context, now time.Time) error {
	svc := r.svc
	if b := stopsOf(ctx); b != nil {
		for _, e := range r.live {
			b.enrollments = append(b.enrollments, e.ID)
		}
		b.leads[r.workspaceID] = append(b.leads[r.workspaceID], r.leadID)
		b.touched[r.leadID] = true
		return nil
	}
	for i := range r.live {
		e := &r.live[i]
		e.UpdatedAt, e.LeaseUntil = now, nil
		if err := svc.store.Save(ctx, e); err != nil {
			return err
		}
	}
	return svc.leads.MarkReplied(ctx, r.workspaceID, r.leadID)
}

// AutoReplied holds the lead's active enrollments due before until, until
// then (an out-of-office answer).
func (r *ReplyStop) AutoReplied(ctx context.Context, until, now time.Time) error {
	for i := range r.live {
		e := &r.live[i]
		if e.Status == Active && e.NextRunAt != nil && e.NextRunAt.Before(until) {
			reason := "out_of_office"
			e.NextRunAt, e.WaitingFor, e.WaitingUntil, e.UpdatedAt = &until, &reason, &until, now
			if err := r.svc.store.Save(ctx, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// replyStops are the reply-stop writes of a batch of replies: the ended
// enrollments and the leads that replied, written in one statement each
// when the batch is flushed.
type replyStops struct {
	at          time.Time
	enrollments []string
	leads       map[string][]string // by workspace
	touched     map[string]bool
}

func stopsOf(ctx context.Context) *replyStops {
	if memo := db.TxMemo(ctx); memo != nil {
		if v, ok := memo.Load(stopsKey{}); ok {
			return v.(*replyStops)
		}
	}
	return nil
}

// BatchReplyStops makes the reply-stops of the transaction ctx carries wait
// for FlushReplyStops: a batch of replies then ends its enrollments and
// marks its leads in one statement each. The batch belongs to the
// transaction, which flushes what is still pending before it commits
// (db.BeforeCommit): a caller flushes earlier only where a later read must
// see the stops (ReplyStopsPending), and a batch nobody flushed is never
// lost.
func (svc *Service) BatchReplyStops(ctx context.Context, now time.Time) {
	if memo := db.TxMemo(ctx); memo != nil {
		memo.Store(stopsKey{}, &replyStops{at: now, leads: map[string][]string{}, touched: map[string]bool{}})
		db.BeforeCommit(ctx, "enrollments reply-stops", svc.FlushReplyStops)
	}
}

// ReplyStopsPending reports whether the transaction holds reply-stop
// writes not yet flushed, and whether one of them is leadID's.
func (svc *Service) ReplyStopsPending(ctx context.Context, leadID string) (pending, lead bool) {
	b := stopsOf(ctx)
	if b == nil || (len(b.enrollments) == 0 && len(b.leads) == 0) {
		return false, false
	}
	return true, b.touched[leadID]
}

// FlushReplyStops writes the transaction's pending reply-stop writes; the
// batch goes on for the replies after.
func (svc *Service) FlushReplyStops(ctx context.Context) error {
	b := stopsOf(ctx)
	if b == nil || (len(b.enrollments) == 0 && len(b.leads) == 0) {
		return nil
	}
	ids, byWorkspace := b.enrollments, b.leads
	b.enrollments, b.leads, b.touched = nil, map[string][]string{}, map[string]bool{}
	if err := svc.store.EndReplied(ctx, ids, b.at); err != nil {
		return err
	}
	for ws, leadIDs := range byWorkspace {
		if err := svc.leads.MarkReplied(ctx, ws, leadIDs...); err != nil {
			return err
		}
	}
	return nil
}
