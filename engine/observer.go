package engine

import (
	"context"
	"time"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
)

// Step outcomes an Observer hears.
const (
	OutcomeSent         = "sent"
	OutcomeNotPerformed = "not_performed" // a recovered action the transport never made: run again
	OutcomeUnknown      = "unknown"       // the transport's answer was lost: asked again after the lease
	// A failed step's outcome is "failed_" and its error kind: failed_transient,
	// failed_permanent, failed_sender.
)

// Observer hears what a runner does, for metrics. Its methods are called
// from the runner's workers at once and must be quick and safe for
// concurrent use. The engine knows no metrics library: the platform gives
// it one (platform.Metrics).
type Observer interface {
	// Step is one action's outcome, by action (senders.Action).
	Step(action, outcome string)
	// TransportError is a transport's failure, by transport name and kind
	// (a senders.ErrorKind, "unknown" for an answer that was lost, or
	// "inbound" for a failed read of what happened outside).
	TransportError(transport, kind string)
	// Inbound is one report taken in, by source (a transport's name, or
	// the inbound queue's source) and kind (senders.Inbound kinds,
	// "booking" or "event").
	Inbound(source, kind string)
	// Unmatched is one inbound report that matched no lead.
	Unmatched()
}

// nopObserver hears nothing.
type nopObserver struct{}

func (nopObserver) Step(string, string)           {}
func (nopObserver) TransportError(string, string) {}
func (nopObserver) Inbound(string, string)        {}
func (nopObserver) Unmatched()                    {}

// Observe sets what hears the runner's steps, transport errors and inbound
// reports (nil: nothing).
func (r *Runner) Observe(o Observer) *Runner {
	if o == nil {
		o = nopObserver{}
	}
	r.observer = o
	return r
}

// Backlog is the runner's due work as the database shows it, for every
// runner on it: what metrics read when scraped.
type Backlog struct {
	// Lag is how long the oldest due enrollment no lease holds has waited
	// (0: none is late).
	Lag time.Duration
	// Leases is how many enrollments a runner holds now.
	Leases int
	// Inbound is how many pushed events wait in the inbound queue.
	Inbound int
}

// Backlog reads the due work at now.
func (r *Runner) Backlog(ctx context.Context, now time.Time) (Backlog, error) {
	return ReadBacklog(ctx, r.svc.db, r.queue != nil, now)
}

// ReadBacklog reads the due work on d at now; inbound: also the inbound
// queue's depth.
func ReadBacklog(ctx context.Context, d *db.DB, inbound bool, now time.Time) (Backlog, error) {
	var b Backlog
	var oldest []time.Time
	if err := d.IDB(ctx).NewSelect().Model((*enrollments.Enrollment)(nil)).ColumnExpr("min(e.next_run_at)").
		Where("e.status = 'active' AND NOT e.held AND e.next_run_at <= ? AND (e.lease_until IS NULL OR e.lease_until <= ?)", now, now).
		Scan(ctx, &oldest); err != nil {
		return b, err
	}
	if len(oldest) > 0 && !oldest[0].IsZero() {
		b.Lag = max(0, now.Sub(oldest[0]))
	}
	n, err := d.IDB(ctx).NewSelect().Model((*enrollments.Enrollment)(nil)).Where("e.lease_until > ?", now).Count(ctx)
	if err != nil {
		return b, err
	}
	b.Leases = int(n)
	if inbound {
		if n, err = d.IDB(ctx).NewSelect().Model((*queued)(nil)).Count(ctx); err != nil {
			return b, err
		}
		b.Inbound = int(n)
	}
	return b, nil
}

// failedOutcome is a failed step's outcome for its error kind.
func failedOutcome(k senders.ErrorKind) string { return "failed_" + string(k) }
