package senders

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// A sender's guards keep its account and its domain alive: habits of a
// careful person that no cap expresses. Each guard reads the sender's own
// recent history and answers, for one action at one moment, "now", "wait
// until T (its code)" or "stop (its code, with a health reason and a
// remedy)". The runner asks every guard before it reserves an action's
// budget (Service.Guard); budgets and capacity read their limits on a day
// (Sender.GuardCap); the health recheck asks those that stop a sender
// (Guard.Review); why-not-sending and the console show their waits by
// their codes, with the texts each guard gives (GuardText). A new guard is
// one type in a file of its own and one entry in Guards.
type Guard interface {
	// Code names the guard: the code of its waits, and of the health
	// reason of its stops.
	Code() string
	// Check rules on action a of s at now, inside the transaction ctx
	// carries: nil when the action may go. due is when the action was due
	// (the moment its enrollment was to run, now at the latest): a runner
	// ticks, so it acts a little after. A guard that counts takes its
	// unit here and returns how to give it back, should a later rule stop
	// the action (nil when it took nothing). A Blocked with a zero Until
	// is a stop: it lasts until a manager acts.
	Check(ctx context.Context, svc *Service, s *Sender, a Action, now, due time.Time) (*Blocked, func(context.Context) error, error)
	// DayCap is the most actions a of s the guard lets through on the
	// local date day, and true when it limits them at all: budgets and
	// capacity never promise more.
	DayCap(s *Sender, a Action, day string) (int, bool)
	// Review reads the recent history of ss at now and returns the health
	// reason the guard holds against each sender that should stop, by id:
	// the health recheck keeps it until a review no longer returns it.
	Review(ctx context.Context, svc *Service, ss []*Sender, now time.Time) (map[string]HealthReason, error)
	// Text is the why-not-sending message (a format with the count) and
	// the remedy of the guard's waits.
	Text() (message, remedy string)
}

// The guards' codes.
const (
	GuardSpacing        = "spacing"
	GuardHourlyCap      = "hourly_cap"
	GuardHoliday        = "holiday"
	GuardLowAcceptance  = "low_acceptance_rate"
	GuardHighBounceRate = "high_bounce_rate"
)

// Guards are every guard, in the order the runner asks them: those that
// count (and must give back what they took when a later one says no)
// last.
var Guards = []Guard{holidayGuard{}, acceptanceGuard{}, bounceGuard{}, hourlyGuard{}, spacingGuard{}}

// StopCodes are the codes of the guards that stop a sender until a
// manager resumes it (Service.Resume).
var StopCodes = []string{GuardLowAcceptance, GuardHighBounceRate}

// noStop is the part of a guard that never stops a sender.
type noStop struct{}

func (noStop) Review(context.Context, *Service, []*Sender, time.Time) (map[string]HealthReason, error) {
	return nil, nil
}

// noDayCap is the part of a guard that sets no limit on a day.
type noDayCap struct{}

func (noDayCap) DayCap(*Sender, Action, string) (int, bool) { return 0, false }

// Guard asks every guard about action a of s at now, due at due (see
// Guard.Check), in the transaction ctx carries, and returns the first that holds it back, or nil with how
// to give back what the guards took, should a later rule (the budget, the
// note quota) stop the action.
func (svc *Service) Guard(ctx context.Context, s *Sender, a Action, now, due time.Time) (*Blocked, func(context.Context) error, error) {
	if due.IsZero() || due.After(now) {
		due = now
	}
	var undos []func(context.Context) error
	release := func(ctx context.Context) error {
		var errs []error
		for i := len(undos) - 1; i >= 0; i-- {
			errs = append(errs, undos[i](ctx))
		}
		return errors.Join(errs...)
	}
	for _, g := range Guards {
		b, undo, err := g.Check(ctx, svc, s, a, now, due)
		if err == nil && b != nil {
			b.Action = a
			err = release(ctx)
		}
		if err != nil || b != nil {
			return b, nil, err
		}
		if undo != nil {
			undos = append(undos, undo)
		}
	}
	return nil, release, nil
}

// GuardCap returns the lowest limit the guards set on action a of s on
// the local date day, and the code of the guard that sets it; ok is false
// when none limits it.
func (s *Sender) GuardCap(a Action, day string) (limit int, code string, ok bool) {
	for _, g := range Guards {
		if n, limited := g.DayCap(s, a, day); limited && (!ok || n < limit) {
			limit, code, ok = n, g.Code(), true
		}
	}
	return limit, code, ok
}

// GuardText returns the why-not-sending message format and remedy of a
// guard's waits, and false for a code no guard gives.
func GuardText(code string) (message, remedy string, ok bool) {
	for _, g := range Guards {
		if g.Code() == code {
			message, remedy = g.Text()
			return message, remedy, true
		}
	}
	return "", "", false
}

// stopped returns the health reason of code among s's reasons.
func (s *Sender) stopped(code string) (HealthReason, bool) {
	for _, r := range s.HealthReasons {
		if r.Code == code {
			return r, true
		}
	}
	return HealthReason{}, false
}

// stopCheck is the Check of a guard that stops s: the action is held
// while s carries the guard's health reason.
func stopCheck(s *Sender, code string) *Blocked {
	if _, ok := s.stopped(code); ok {
		return &Blocked{Code: code}
	}
	return nil
}

// review asks every guard that stops senders about ss at now: the health
// reasons they hold, by sender.
func (svc *Service) review(ctx context.Context, ss []*Sender, now time.Time) (map[string][]HealthReason, error) {
	out := map[string][]HealthReason{}
	for _, g := range Guards {
		found, err := g.Review(ctx, svc, ss, now)
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			if r, ok := found[s.ID]; ok {
				out[s.ID] = append(out[s.ID], r)
			}
		}
	}
	return out, nil
}

// RecordEmail records that s emailed lead at the time of the clock,
// inside the transaction ctx carries: the bounce-rate guard's history.
func (svc *Service) RecordEmail(ctx context.Context, s *Sender, leadID string) error {
	return svc.store.InsertEmailSend(ctx, &EmailSend{ID: apikit.NewID(), SenderID: s.ID, LeadID: leadID, SentAt: db.Now(ctx, svc.clock)})
}

// RecordBounce records a bounce of s's latest email to lead with the
// receiver's message, inside the transaction ctx carries. A hard bounce
// (HardBounce) counts in the bounce rate, which is judged again at once:
// a mailbox past its max_bounce_rate stops before its next email.
func (svc *Service) RecordBounce(ctx context.Context, s *Sender, leadID, message string) error {
	if !HardBounce(message) {
		return nil
	}
	marked, err := svc.store.MarkHardBounce(ctx, s.ID, leadID, db.Now(ctx, svc.clock))
	if err != nil || !marked || s.MaxBounceRateOf() <= 0 {
		return err
	}
	return svc.recheck(ctx, []*Sender{s}, db.Now(ctx, svc.clock), false)
}

// Resume lifts the stop of the guard code from the sender with id: its
// window starts again now, so the rate is judged afresh on what the
// sender does from here on. The caller wakes the enrollments that wait
// for it (platform.ResumeSender).
// Returns E_NOT_FOUND if the sender is not visible to the principal,
// E_FORBIDDEN below the manager role and E_PAYLOAD_INVALID for a code that
// is not a stop of a guard.
func (svc *Service) Resume(ctx context.Context, p apikit.Principal, id, code string) (*Sender, error) {
	if !p.Role.AtLeast(apikit.RoleManager) {
		return nil, apikit.Forbidden("Resuming a sender's guard needs the manager role.", "Ask a manager of the workspace.")
	}
	if !slices.Contains(StopCodes, code) {
		return nil, apikit.Invalid(fmt.Sprintf("%q is not a guard that stops a sender.", code),
			"Resume one of "+strings.Join(StopCodes, ", ")+".")
	}
	s, err := svc.Visible(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return s, svc.db.InTx(ctx, func(ctx context.Context) error {
		now := db.Now(ctx, svc.clock)
		resumed := maps.Clone(s.GuardsResumed)
		if resumed == nil {
			resumed = map[string]time.Time{}
		}
		resumed[code] = now
		s.GuardsResumed = resumed
		s.HealthReasons = slices.DeleteFunc(slices.Clone(s.HealthReasons), func(r HealthReason) bool { return r.Code == code })
		return svc.recheck(ctx, []*Sender{s}, now, true)
	})
}
