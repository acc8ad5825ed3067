package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
)

// runGroup runs claimed enrollments (often just one) through as many
// steps as are due, each phase of all of them in one transaction: their
// first steps' phase one, then their actions through the transports, then
// together the actions' phase two and the next steps' phase one, and so
// on. When a shared transaction fails, its phase is run again for each
// enrollment alone, so that one enrollment's error holds back only that
// one, which keeps its lease and is looked at again when the lease ends.
//
// A run's transactions commit without waiting for the disk on Postgres:
// one lost in a crash is redone the same way, under the same idempotency
// key, which a transport performs at most once and answers from its record
// (the Transport contract).
func (r *Runner) runGroup(ctx context.Context, group []enrollments.Enrollment) error {
	calls := make([]*call, len(group))
	logErr := func(i int, err error) {
		r.logger.Error("runner: enrollment", "enrollment_id", group[i].ID, "error", err)
	}
	// phase runs fn for each of idx in one transaction, or in several
	// when one would hold the write lock longer than GroupHold; fn sets
	// calls[i].
	phase := func(idx []int, fn func(ctx context.Context, i int) error) error {
		var lastErr error
		for len(idx) > 0 {
			n := 0
			err := r.inTx(ctx, func(ctx context.Context) error {
				n = 0
				// Wall time, not the clock: this bounds how long API
				// writes wait behind the runner, and decides no outcome.
				start := time.Now()
				ctx, err := r.prefetchGroup(ctx, group, idx)
				if err != nil {
					return err
				}
				for _, i := range idx {
					if n > 0 && time.Since(start) >= r.GroupHold {
						break
					}
					if err := fn(ctx, i); err != nil {
						return err
					}
					n++
				}
				return nil
			})
			if err != nil {
				lastErr = err
				break
			}
			idx = idx[n:]
		}
		if len(idx) == 0 || ctx.Err() != nil {
			return ctx.Err()
		}
		if len(group) == 1 {
			// Alone already: it keeps its lease.
			calls[idx[0]] = nil
			logErr(idx[0], lastErr)
			return nil
		}
		for _, i := range idx {
			if err := r.inTx(ctx, func(ctx context.Context) error { return fn(ctx, i) }); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				calls[i] = nil
				logErr(i, err)
			}
		}
		return nil
	}
	all := make([]int, len(group))
	for i := range all {
		all[i] = i
	}
	err := phase(all, func(ctx context.Context, i int) error {
		var err error
		calls[i], err = r.next(ctx, group[i].WorkspaceID, group[i].ID, nil)
		return err
	})
	results := make([]senders.Result, len(group))
	perrs := make([]error, len(group))
	for steps := 1; err == nil; steps++ {
		done := slices.Clone(calls)
		// The group's calls go out DefaultWorkers at a time, as many as
		// the Postgres workers make, so that the last of them leaves soon
		// after its checks too.
		failed := make([]error, len(group))
		var wg sync.WaitGroup
		slots := make(chan struct{}, DefaultWorkers)
		for i, c := range done {
			if c != nil {
				slots <- struct{}{}
				wg.Go(func() {
					defer func() { <-slots }()
					results[i], perrs[i], failed[i] = r.perform(ctx, c)
				})
			}
		}
		wg.Wait()
		var idx []int
		for i, c := range done {
			if c == nil {
				continue
			}
			if failed[i] != nil {
				// The outcome is unknown: the enrollment keeps its lease.
				calls[i] = nil
				logErr(i, failed[i])
				continue
			}
			idx = append(idx, i)
		}
		if len(idx) == 0 {
			return nil
		}
		err = phase(idx, func(ctx context.Context, i int) error {
			calls[i] = nil
			e, again, err := r.finish(ctx, done[i], results[i], perrs[i])
			if err != nil || !again {
				return err
			}
			if steps >= maxStepsPerRun {
				return r.svc.enrollments.Save(ctx, e)
			}
			calls[i], err = r.next(ctx, group[i].WorkspaceID, group[i].ID, e)
			return err
		})
	}
	return err
}

// prefetchKey carries what a group transaction read for all its
// enrollments at once.
type prefetchKey struct{}

// prefetched are enrollments and leads a group transaction read together,
// each handed out once (a second look reads the database again).
type prefetched struct {
	enrollments map[string]*enrollments.Enrollment
	leads       map[string]*leads.Lead
}

// prefetchGroup reads the enrollments of group at idx and their leads, two
// statements for the group instead of two for each, and returns ctx
// carrying them. The enrollments are locked as ByID locks one.
func (r *Runner) prefetchGroup(ctx context.Context, group []enrollments.Enrollment, idx []int) (context.Context, error) {
	if len(idx) < 2 {
		return ctx, nil
	}
	ids := make([]string, len(idx))
	for k, i := range idx {
		ids[k] = group[i].ID
	}
	es, err := r.svc.store.ByIDsForRun(ctx, ids)
	if err != nil {
		return ctx, err
	}
	byWorkspace := map[string][]string{}
	for _, e := range es {
		byWorkspace[e.WorkspaceID] = append(byWorkspace[e.WorkspaceID], e.LeadID)
	}
	ls := map[string]*leads.Lead{}
	for ws, leadIDs := range byWorkspace {
		got, err := r.svc.leads.ByIDs(ctx, ws, slices.Compact(slices.Sorted(slices.Values(leadIDs))))
		if err != nil {
			return ctx, err
		}
		for i := range got {
			ls[got[i].ID] = &got[i]
		}
	}
	return context.WithValue(ctx, prefetchKey{}, &prefetched{enrollments: es, leads: ls}), nil
}

// enrollment returns the enrollment with id as the runner reads it: from
// the group's prefetch the first time, from the database after.
func (r *Runner) enrollment(ctx context.Context, workspaceID, id string) (*enrollments.Enrollment, error) {
	if p, ok := ctx.Value(prefetchKey{}).(*prefetched); ok {
		if e, ok := p.enrollments[id]; ok && e.WorkspaceID == workspaceID {
			delete(p.enrollments, id)
			return e, nil
		}
	}
	return r.svc.store.ByID(ctx, workspaceID, id)
}

// lead returns the enrollment's lead: from the group's prefetch the first
// time, from the database after.
func (r *Runner) lead(ctx context.Context, e *enrollments.Enrollment) (*leads.Lead, error) {
	if p, ok := ctx.Value(prefetchKey{}).(*prefetched); ok {
		if l, ok := p.leads[e.LeadID]; ok && l.WorkspaceID == e.WorkspaceID {
			delete(p.leads, e.LeadID)
			return l, nil
		}
	}
	ls, err := r.svc.leads.ByIDs(ctx, e.WorkspaceID, []string{e.LeadID})
	if err != nil || len(ls) == 0 {
		return nil, errors.Join(err, fmt.Errorf("lead %s of enrollment %s is gone", e.LeadID, e.ID))
	}
	return &ls[0], nil
}

// inTx runs fn in a transaction of the runner, again if Postgres rolled
// it back for a deadlock with another runner's: what fn does is read
// afresh each time, and an action's transport call is outside it.
func (r *Runner) inTx(ctx context.Context, fn func(ctx context.Context) error) error {
	// The runner reads each enrollment it saves once, at the start: its
	// saves can wait for the commit.
	ctx = enrollments.Batched(ctx)
	for attempt := 1; ; attempt++ {
		err := r.svc.db.InTxNoFlush(ctx, fn)
		if err == nil || attempt == 5 || !db.IsRetryable(err) {
			return err
		}
	}
}
