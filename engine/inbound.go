package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
)

// Event is one thing that happened outside, as it enters leadline: a
// transport's report (an acceptance, a reply, a bounce, a signal about a
// sender) or a meeting booked with a scheduling provider. Whether it was
// polled by the runner or pushed to leadline over HTTP, it is taken in by
// one path (Runner.take).
type Event struct {
	Report  *senders.Inbound  `json:"report,omitempty"`
	Booking *bookings.Booking `json:"booking,omitempty"`
}

// BookingSource is a transport that also reports meetings booked: the
// sandbox network stands in for a scheduling provider.
type BookingSource interface {
	// Bookings returns the meetings booked up to until, each once, with
	// the lead and the sender that booked it set.
	Bookings(ctx context.Context, until time.Time) ([]bookings.Booking, error)
}

// Queue is the durable inbound queue. What a provider pushes is written to
// it in the request that receives it (Push), and taken in by the runner
// that claims it with a lease, so that API replicas and worker replicas
// never disagree about what arrived, and nothing pushed is lost when a
// worker stops.
type Queue struct {
	db    *db.DB
	clock apikit.Clock

	// pushed: this process pushed since its runner last looked, so the
	// next tick looks at once; otherwise a runner looks at most once a
	// second (of wall time: this bounds idle queries, and decides no
	// outcome).
	pushed atomic.Bool
	mu     sync.Mutex
	looked time.Time
}

// NewQueue returns the inbound queue on d.
func NewQueue(d *db.DB, clock apikit.Clock) *Queue { return &Queue{db: d, clock: clock} }

// queued is a row of the inbound queue.
type queued struct {
	bun.BaseModel `bun:"table:inbound,alias:ib"`

	ID          string          `bun:"id,pk"`
	WorkspaceID string          `bun:"workspace_id"`
	Source      string          `bun:"source"`
	Dedupe      string          `bun:"dedupe"`
	Payload     json.RawMessage `bun:"payload,type:jsonb"`
	ReceivedAt  time.Time       `bun:"received_at"`
	DueAt       time.Time       `bun:"due_at"`
	LeaseUntil  *time.Time      `bun:"lease_until"`
	Attempts    int             `bun:"attempts"`
	LastError   *string         `bun:"last_error"`
}

// MaxQueueAttempts is how many times a queued event is tried before it is
// kept aside (it stays in the table, with its last error, for an operator).
const MaxQueueAttempts = 10

// Push writes ev to the queue for a workspace, once per source and dedupe
// key (a provider's retry of the same event queues nothing): it reports
// whether ev was queued now. It joins the transaction ctx carries.
func (q *Queue) Push(ctx context.Context, workspaceID, source, dedupe string, ev Event) (bool, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, err
	}
	now := db.Now(ctx, q.clock)
	row := &queued{ID: apikit.NewID(), WorkspaceID: workspaceID, Source: source, Dedupe: dedupe, Payload: payload, ReceivedAt: now, DueAt: now}
	added, err := db.InsertIfAbsent(ctx, q.db.IDB(ctx), row, "workspace_id, source, dedupe")
	if added {
		q.pushed.Store(true)
	}
	return added, err
}

// PushReport queues a transport's report for a workspace (see Push): the
// queue is the senders.InboundSink a mailbox reader or a provider's
// webhook writes to.
func (q *Queue) PushReport(ctx context.Context, workspaceID, source, dedupe string, in senders.Inbound) (bool, error) {
	return q.Push(ctx, workspaceID, source, dedupe, Event{Report: &in})
}

var _ senders.InboundSink = (*Queue)(nil)

// due reports whether a runner should look at the queue now.
func (q *Queue) due() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.pushed.Swap(false) && time.Since(q.looked) < time.Second {
		return false
	}
	q.looked = time.Now()
	return true
}

// claim leases up to limit due events (SKIP LOCKED on Postgres, so that
// several runners share them).
func (q *Queue) claim(ctx context.Context, now, leaseUntil time.Time, limit int) ([]queued, error) {
	var out []queued
	err := q.db.InTx(ctx, func(ctx context.Context) error {
		return q.db.IDB(ctx).NewRaw(`UPDATE inbound SET lease_until = ? WHERE id IN (
			SELECT id FROM inbound WHERE due_at <= ? AND attempts < ? AND (lease_until IS NULL OR lease_until <= ?)
			ORDER BY received_at LIMIT ?`+q.db.SkipLocked()+`) RETURNING id, workspace_id, source, dedupe, payload, received_at, due_at, attempts`,
			q.db.TimeArg(&leaseUntil), q.db.TimeArg(&now), MaxQueueAttempts, q.db.TimeArg(&now), limit).Scan(ctx, &out)
	})
	return out, err
}

// done deletes a taken event, in the transaction that took it in.
func (q *Queue) done(ctx context.Context, id string) error {
	_, err := q.db.IDB(ctx).NewDelete().Model((*queued)(nil)).Where("id = ?", id).Exec(ctx)
	return err
}

// failed records a failed attempt: the event waits (2, 4, 8… minutes, at
// most an hour) and is tried again.
func (q *Queue) failed(ctx context.Context, row queued, cause error, now time.Time) error {
	msg := cause.Error()
	due := now.Add(min(time.Duration(1<<min(row.Attempts+1, 6))*time.Minute, time.Hour))
	_, err := q.db.NewUpdate().Model((*queued)(nil)).Set("attempts = attempts + 1").Set("last_error = ?", msg).
		Set("due_at = ?", q.db.TimeArg(&due)).Set("lease_until = NULL").Where("id = ?", row.ID).Exec(ctx)
	return err
}

// drain takes in the queue's due events, each in a transaction of its
// own that also deletes it. An event that fails is logged and tried again
// later; the others go on.
func (r *Runner) drain(ctx context.Context, now time.Time) error {
	if r.queue == nil || !r.queue.due() {
		return nil
	}
	for {
		rows, err := r.queue.claim(ctx, now, now.Add(r.Lease), ingestBatch)
		if err != nil {
			return err
		}
		for _, row := range rows {
			var ev Event
			err := json.Unmarshal(row.Payload, &ev)
			if err == nil {
				err = r.svc.db.InTx(ctx, func(ctx context.Context) error {
					r.svc.enrollments.BatchReplyStops(ctx, now)
					if err := r.take(ctx, row.WorkspaceID, ev, now); err != nil {
						return err
					}
					if err := r.svc.enrollments.FlushReplyStops(ctx); err != nil {
						return err
					}
					return r.queue.done(ctx, row.ID)
				})
			}
			if err == nil {
				r.observer.Inbound(row.Source, ev.kind())
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				r.logger.Error("runner: inbound event", "source", row.Source, "dedupe", row.Dedupe, "attempt", row.Attempts+1, "error", err)
				if err := r.queue.failed(ctx, row, err, now); err != nil {
					return err
				}
			}
		}
		if len(rows) < ingestBatch {
			return nil
		}
	}
}

// take is the one entry point of what happened outside, polled or pushed,
// inside the transaction ctx carries. workspaceID is the workspace a
// pushed event was received for ("" for a polled one: its sender's).
func (r *Runner) take(ctx context.Context, workspaceID string, ev Event, now time.Time) error {
	switch {
	case ev.Report != nil:
		return r.ingestOne(ctx, *ev.Report, now)
	case ev.Booking != nil:
		b := *ev.Booking
		if workspaceID != "" {
			b.WorkspaceID = workspaceID
		}
		if b.WorkspaceID == "" && b.SenderID != nil {
			s, err := r.inboundSender(ctx, *b.SenderID)
			if db.IsNoRows(err) {
				r.logger.Warn("runner: booking for an unknown sender", "sender_id", *b.SenderID)
				return nil
			} else if err != nil {
				return err
			}
			b.WorkspaceID = s.WorkspaceID
		}
		added, err := r.svc.bookings.Book(ctx, &b)
		if err != nil || !added || r.svc.rules == nil {
			return err
		}
		// A new booking runs its sequence's on_meeting_booked rule.
		return r.svc.rules.Booked(ctx, &b)
	}
	return fmt.Errorf("an inbound event with nothing in it")
}

// kind names what an event holds, for the runner's Observer.
func (ev Event) kind() string {
	switch {
	case ev.Report != nil:
		return ev.Report.Kind
	case ev.Booking != nil:
		return "booking"
	}
	return "event"
}
