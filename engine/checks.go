package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

// Alert kinds the runner's checks write.
const (
	EventRunningDry = "sender.running_dry"
	// StallAfter is how long due work may wait on a closed door before its
	// sequence counts as stalled.
	StallAfter = 24 * time.Hour
	// checkEvery is how often the runner's checks run, on the clock.
	checkEvery = time.Hour
)

// stallCodes are the waits that stop due work until something changes: a
// sequence whose work waits on them for StallAfter with nothing sent has
// stalled. Caps and schedules only pace work that is being sent, and a
// weekend without sending is no stall.
var stallCodes = slices.Concat([]string{"sender_paused", "sender_restricted", "sender_disconnected", "note_quota", "workspace_suspended"},
	senders.TransportSignals, senders.StopCodes)

// Checks are the runner's periodic duties, at most once an hour of the
// clock: senders' health, the withdrawal of stale invitations,
// running-dry and stall alerts, and enrichment with the profile views
// senders have left.
func (r *Runner) Checks(ctx context.Context) error {
	now := r.svc.clock.Now()
	r.mu.Lock()
	due := !now.Before(r.nextChecks)
	if due {
		r.nextChecks = now.Truncate(checkEvery).Add(checkEvery)
	}
	r.mu.Unlock()
	if !due {
		return nil
	}
	// Every sender's health and running-dry alert in one transaction, and
	// every running sequence's stall in another: a few statements an hour
	// for all of them.
	var all []senders.Sender
	var alerted []dryKey
	err := r.inTx(ctx, func(ctx context.Context) error {
		var err error
		if all, err = r.svc.senders.Every(ctx); err != nil {
			return err
		}
		ss := make([]*senders.Sender, len(all))
		for i := range all {
			ss[i] = &all[i]
		}
		stops := guardStops(ss)
		if err := r.svc.senders.RecheckAll(ctx, ss); err != nil {
			return fmt.Errorf("senders' health: %w", err)
		}
		if err := r.wakeLifted(ctx, ss, stops, now); err != nil {
			return err
		}
		alerted, err = r.runningDry(ctx, ss, now)
		return err
	})
	if err != nil {
		return err
	}
	// The day's alerts are written: later checks that day need not count
	// those senders' waiting work again.
	r.mu.Lock()
	if len(r.dry) > 10000 {
		clear(r.dry)
	}
	for _, k := range alerted {
		r.dry[k] = true
	}
	r.mu.Unlock()
	if err := r.probe(ctx, all, now); err != nil {
		return err
	}
	if err := r.withdrawStale(ctx, all, now); err != nil {
		return fmt.Errorf("stale invitations: %w", err)
	}
	if err := r.inTx(ctx, func(ctx context.Context) error { return r.checkStalls(ctx, now) }); err != nil {
		return fmt.Errorf("stalled sequences: %w", err)
	}
	// Only workspaces with queued enrichment requests need their senders'
	// budgets and plans.
	queued := map[string]bool{}
	for i := range all {
		ws := all[i].WorkspaceID
		has, seen := queued[ws]
		if !seen {
			jobs, err := r.svc.leads.QueuedEnrichment(ctx, ws, 1)
			if err != nil {
				return err
			}
			has = len(jobs) > 0
			queued[ws] = has
		}
		if !has {
			continue
		}
		if err := r.enrich(ctx, &all[i], now); err != nil {
			return fmt.Errorf("enrichment by sender %s: %w", all[i].ID, err)
		}
	}
	for _, fn := range r.housekeeping {
		if err := fn(ctx, now); err != nil {
			return err
		}
	}
	return nil
}

// runningDry writes sender.running_dry, once a sender's local day, for
// each of ss whose due work waits for its spent budget. It returns the
// senders' days whose alert is written (by this call or an earlier one),
// for the caller to remember once the transaction committed.
func (r *Runner) runningDry(ctx context.Context, ss []*senders.Sender, now time.Time) ([]dryKey, error) {
	// A sender this runner already found alerted today needs no count.
	var ids []string
	r.mu.Lock()
	for _, s := range ss {
		if !r.dry[dryKey{sender: s.ID, day: senders.LocalDate(now, s.Location())}] {
			ids = append(ids, s.ID)
		}
	}
	r.mu.Unlock()
	waiting, err := r.svc.store.WaitingOnBudget(ctx, ids)
	if err != nil || len(waiting) == 0 {
		return nil, err
	}
	var alerted []dryKey
	var evs []events.Event
	for _, s := range ss {
		n := waiting[s.ID]
		if n == 0 {
			continue
		}
		first, err := r.svc.senders.Once(ctx, s, EventRunningDry, now)
		if err != nil {
			return nil, err
		}
		day := senders.LocalDate(now, s.Location())
		alerted = append(alerted, dryKey{sender: s.ID, day: day})
		if first {
			evs = append(evs, events.Event{WorkspaceID: s.WorkspaceID, SenderID: s.ID, Kind: EventRunningDry,
				Data: map[string]any{"sender_id": s.ID, "name": s.Name, "waiting": n, "date": day}})
		}
	}
	if len(evs) == 0 {
		return alerted, nil
	}
	return alerted, r.svc.log.EmitMany(ctx, evs)
}

// dryKey is a sender's local day, on which its running-dry alert was
// written.
type dryKey struct{ sender, day string }

// checkStalls writes sequence.stalled when a running sequence has had due
// work it could not send for StallAfter, and sequence.recovered when it
// sends again.
func (r *Runner) checkStalls(ctx context.Context, now time.Time) error {
	qs, err := r.svc.sequences.Running(ctx)
	if err != nil || len(qs) == 0 {
		return err
	}
	ids := make([]string, len(qs))
	for i := range qs {
		ids[i] = qs[i].ID
	}
	last, err := r.svc.store.LastActionAt(ctx, ids)
	if err != nil {
		return err
	}
	for i := range qs {
		if err := r.checkStall(ctx, &qs[i], last[qs[i].ID], now); err != nil {
			return fmt.Errorf("sequence %s: %w", qs[i].ID, err)
		}
	}
	return nil
}

// checkStall checks one sequence, whose latest action was recorded at
// last (zero for none).
func (r *Runner) checkStall(ctx context.Context, q *sequences.Sequence, last, now time.Time) error {
	since := q.CreatedAt
	if q.ActivatedAt != nil {
		since = *q.ActivatedAt
	}
	if last.After(since) {
		since = last
	}
	if q.StalledAt != nil {
		if since.After(*q.StalledAt) {
			return r.svc.sequences.SetStalled(ctx, q, nil, map[string]any{"stalled_at": *q.StalledAt})
		}
		return nil
	}
	if now.Sub(since) < StallAfter {
		return nil
	}
	reasons, err := r.svc.store.Waiting(ctx, q.ID, stallCodes)
	if err != nil || len(reasons) == 0 {
		return err
	}
	return r.svc.sequences.SetStalled(ctx, q, &now, map[string]any{"reasons": reasons, "last_action_at": since})
}

// enrich serves queued enrichment requests of the sender's workspace with
// the profile views the sender has left today after the views its due
// steps need, inside its schedule.
func (r *Runner) enrich(ctx context.Context, s *senders.Sender, now time.Time) error {
	t, ok := r.transports[s.Transport]
	if !ok || s.Channel != senders.LinkedIn || s.Status != senders.Active || !s.Schedule.Open(now, s.Location()) {
		return nil
	}
	b, err := r.svc.senders.Budgets(ctx, principalOf(s.WorkspaceID), s.ID)
	if err != nil {
		return err
	}
	left := 0
	for _, a := range b.Actions {
		if a.Action == senders.ProfileView {
			left = a.Remaining
		}
	}
	if left == 0 {
		return nil
	}
	days, err := r.svc.enrollments.Capacity(ctx, principalOf(s.WorkspaceID), s)
	if err != nil {
		return err
	}
	for _, a := range days[0].Actions {
		if a.Action == senders.ProfileView {
			left -= a.Planned
		}
	}
	if left <= 0 {
		return nil
	}
	jobs, err := r.svc.leads.QueuedEnrichment(ctx, s.WorkspaceID, left)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if err := r.enrichOne(ctx, t, s, j, now); err != nil {
			return err
		}
	}
	return nil
}

func (r *Runner) enrichOne(ctx context.Context, t senders.Transport, s *senders.Sender, j leads.EnrichmentJob, now time.Time) error {
	var req *senders.Request
	err := r.svc.db.InTx(ctx, func(ctx context.Context) error {
		ls, err := r.svc.leads.ByIDs(ctx, s.WorkspaceID, []string{j.LeadID})
		if err != nil || len(ls) == 0 {
			return errors.Join(err, r.svc.leads.FinishEnrichment(ctx, j.ID, leads.EnrichRefused))
		}
		l := &ls[0]
		if l.ClientID != nil && s.ClientID != nil && *l.ClientID != *s.ClientID {
			return nil // another client's sender serves it
		}
		if l.DoNotContact {
			return r.svc.leads.FinishEnrichment(ctx, j.ID, leads.EnrichRefused)
		}
		if s.Holiday(senders.LocalDate(now, s.Location())) {
			return nil // nothing runs on a day off: it stays queued
		}
		blocked, err := r.svc.senders.Reserve(ctx, s, senders.ProfileView, now)
		if err != nil || blocked != nil {
			return err
		}
		req = &senders.Request{Key: "enrich:" + j.ID, Sender: s, Action: senders.ProfileView, Purpose: senders.PurposeEnrichment,
			Lead: l.Recipient()}
		return nil
	})
	if err != nil || req == nil {
		return err
	}
	res, perr := t.Perform(ctx, *req)
	return r.svc.db.InTx(ctx, func(ctx context.Context) error {
		if perr != nil {
			if _, known := senders.AsTransportError(perr); known {
				return r.svc.senders.GiveBack(ctx, s, senders.ProfileView, now)
			}
			return nil // unknown outcome: the request stays queued and is looked up by its key next time
		}
		profile := res.Profile
		if profile == nil {
			profile = map[string]any{}
		}
		if err := r.svc.leads.SetProfile(ctx, s.WorkspaceID, j.LeadID, profile); err != nil {
			return err
		}
		if err := r.svc.leads.FinishEnrichment(ctx, j.ID, leads.EnrichDone); err != nil {
			return err
		}
		return r.svc.log.EmitMany(ctx, []events.Event{{WorkspaceID: s.WorkspaceID, LeadID: j.LeadID, SenderID: s.ID, Kind: enrollments.EventActionSent,
			Data: map[string]any{"action": string(senders.ProfileView), "purpose": senders.PurposeEnrichment}}})
	})
}

// OnChecks registers fn to run with the runner's hourly checks: upkeep of
// other areas that a worker should do, such as folding the reports'
// counter shards.
func (r *Runner) OnChecks(fn func(ctx context.Context, now time.Time) error) {
	r.housekeeping = append(r.housekeeping, fn)
}

// probe asks the transports whether the senders they stopped (a refused
// password, a server down, a secret missing) connect again; a sender that
// does is recovered, and what waited for it goes on.
func (r *Runner) probe(ctx context.Context, all []senders.Sender, now time.Time) error {
	for i := range all {
		s := &all[i]
		p, ok := r.transports[s.Transport].(senders.Prober)
		if !ok || !s.StoppedByTransport() {
			continue
		}
		if err := p.Probe(ctx, s); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.logger.Info("runner: sender still stopped by its transport", "sender_id", s.ID, "error", err)
			continue
		}
		err := r.inTx(ctx, func(ctx context.Context) error {
			if err := r.svc.senders.Signal(ctx, s, senders.SignalRecovered, ""); err != nil {
				return err
			}
			return r.svc.enrollments.WakeWaiting(ctx, s.WorkspaceID, s.ID, recoverCodes, now)
		})
		if err != nil {
			return fmt.Errorf("sender %s recovered: %w", s.ID, err)
		}
	}
	return nil
}

// recoverCodes are the waits a sender's recovery ends.
var recoverCodes = append([]string{"sender_disconnected", "sender_restricted"}, senders.TransportSignals...)
