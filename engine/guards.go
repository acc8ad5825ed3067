package engine

import (
	"context"
	"slices"
	"time"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/senders"
)

// held parks an enrollment whose action a sender's guard holds back
// (senders/guards.go): until the sender's next slot after the moment the
// guard gives (deferTo), or, for a guard that stops the sender,
// until a manager resumes it. The tick remembers the hold, so that the
// sender's other enrollments due now are parked without a second look.
func (r *Runner) held(e *enrollments.Enrollment, s *senders.Sender, a senders.Action, b *senders.Blocked, now time.Time,
	save func() (*call, bool, error)) (*call, bool, error) {
	r.observer.Step(string(a), "held_"+b.Code)
	if b.Until.IsZero() {
		e.WaitOn(s.ID, a, b.Code, nil)
		return save()
	}
	r.tickMu.Lock()
	r.tick.blocked[deferKey{sender: s.ID, action: a}] = b
	r.tickMu.Unlock()
	until := r.deferTo(s, a, b)
	e.WaitOn(s.ID, a, b.Code, &until)
	return save()
}

// deferTo returns when an enrollment held by b should run again: the
// sender's next slot in the runner's plan at or after the guard's moment
// (pace.go), so that the sender's held enrollments wake one at a time,
// about when it can act again.
func (r *Runner) deferTo(s *senders.Sender, a senders.Action, b *senders.Blocked) time.Time {
	return r.wakeAt(s, a, b.Until)
}

// guardStops returns the codes of the guards that stop each of ss, by
// sender: what the health recheck may lift.
func guardStops(ss []*senders.Sender) map[string][]string {
	out := map[string][]string{}
	for _, s := range ss {
		for _, r := range s.HealthReasons {
			if slices.Contains(senders.StopCodes, r.Code) {
				out[s.ID] = append(out[s.ID], r.Code)
			}
		}
	}
	return out
}

// wakeLifted wakes the enrollments that wait for a guard's stop the health
// recheck lifted (a manager lowered the bar in the setup file).
func (r *Runner) wakeLifted(ctx context.Context, ss []*senders.Sender, before map[string][]string, now time.Time) error {
	after := guardStops(ss)
	for _, s := range ss {
		var lifted []string
		for _, code := range before[s.ID] {
			if !slices.Contains(after[s.ID], code) {
				lifted = append(lifted, code)
			}
		}
		if len(lifted) == 0 {
			continue
		}
		if err := r.svc.enrollments.WakeWaiting(ctx, s.WorkspaceID, s.ID, lifted, now); err != nil {
			return err
		}
	}
	return nil
}

// withdrawStale withdraws the senders' stale invitations (senders/
// guard_withdraw.go) through their transports, each outside any
// transaction, then records each one withdrawn and wakes the enrollment
// waiting at its invite_accepted condition, which takes its else branch.
// A transport that cannot withdraw leaves its senders' invitations
// pending.
func (r *Runner) withdrawStale(ctx context.Context, all []senders.Sender, now time.Time) error {
	var ss []*senders.Sender
	for i := range all {
		if _, ok := r.transports[all[i].Transport].(senders.Withdrawer); ok && all[i].Channel == senders.LinkedIn {
			ss = append(ss, &all[i])
		}
	}
	if len(ss) == 0 {
		return nil
	}
	stale, err := r.svc.senders.StaleInvitations(ctx, ss, now)
	if err != nil {
		return err
	}
	for _, s := range ss {
		w := r.transports[s.Transport].(senders.Withdrawer)
		for _, inv := range stale[s] {
			if err := w.Withdraw(ctx, s, inv); err != nil {
				if te, ok := senders.AsTransportError(err); !ok || te.Kind != senders.Permanent {
					r.logger.Warn("runner: withdrawing a stale invitation", "sender_id", s.ID, "lead_id", inv.LeadID, "error", err)
					continue
				}
			}
			if err := r.inTx(ctx, func(ctx context.Context) error {
				withdrawn, err := r.svc.senders.Withdrawn(ctx, s, inv)
				if err != nil || !withdrawn {
					return err
				}
				return r.svc.enrollments.Wake(ctx, s.WorkspaceID, inv.LeadID, "awaiting_acceptance", now)
			}); err != nil {
				return err
			}
		}
	}
	return nil
}
