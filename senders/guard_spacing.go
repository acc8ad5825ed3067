package senders

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"time"
)

// spacingGuard keeps a random gap between two actions of one sender, of
// any kind: bursts are what providers read as automation. The gap is drawn
// between the sender's spacing min and max from the sender's name and the
// moment of the action, so that a simulated world stays the same run after
// run.
// The moment the next action may run is kept per sender (sender_pace) and
// taken under its row's lock, so two runners cannot both act inside one
// gap.
type spacingGuard struct{ noStop }

func (spacingGuard) Code() string { return GuardSpacing }

func (spacingGuard) Check(ctx context.Context, svc *Service, s *Sender, _ Action, now, due time.Time) (*Blocked, func(context.Context) error, error) {
	lo, hi := s.SpacingOf()
	if lo <= 0 {
		return nil, nil, nil
	}
	next := NextSlot(s.Name, due, now, lo, hi)
	taken, until, err := svc.store.Pace(ctx, s.ID, now, next)
	if err != nil || !taken {
		return &Blocked{Code: GuardSpacing, Until: until}, nil, err
	}
	return nil, func(ctx context.Context) error { return svc.store.Unpace(ctx, s.ID, next, now) }, nil
}

// NextSlot is when the sender named sender, acting at now on an action due at due,
// may act again: the spacing's gap (SpacingGap) after the moment the
// action was due when the runner acts on it within the minimum gap, and
// never closer to now than the minimum. A runner that ticks acts a little
// after an action's moment; drawing the gap from that moment rather than
// from the tick keeps the sender on the plan the runner made of its slots
// (engine/pace.go), which draws each gap from the slot before.
func NextSlot(sender string, due, now time.Time, lo, hi time.Duration) time.Time {
	base := now
	if due.Before(now) && now.Sub(due) < lo {
		base = due
	}
	next := base.Add(SpacingGap(sender, base, lo, hi))
	if least := now.Add(lo); next.Before(least) {
		return least
	}
	return next
}

// DayCap is what the day's working windows hold of actions a mean gap
// apart: the spacing is shared by every action of the sender, so no single
// action can be promised more.
func (spacingGuard) DayCap(s *Sender, _ Action, day string) (int, bool) {
	lo, hi := s.SpacingOf()
	if lo <= 0 {
		return 0, false
	}
	return int(s.workingTime(day) / ((lo + hi) / 2)), true
}

func (spacingGuard) Text() (string, string) {
	return "%d enrollments wait for the gap their sender keeps between two actions.",
		"Nothing to do: the sender acts again after a random gap (spacing in the setup file); add senders to send more at once."
}

// SpacingGap is the gap after an action of the sender named sender at t,
// in whole seconds between lo and hi: drawn from the sender's name (not
// its id, which is new in every simulated world) and the moment, so that
// the same world gives the same gaps run after run.
func SpacingGap(sender string, t time.Time, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	h := sha256.Sum256([]byte(sender + "|" + t.UTC().Format(time.RFC3339Nano)))
	f := float64(binary.BigEndian.Uint64(h[:8])>>11) / float64(1<<53)
	return (lo + time.Duration(f*float64(hi-lo))).Truncate(time.Second)
}

// workingTime is how long s's working windows last on the local date day.
func (s *Sender) workingTime(day string) time.Duration {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, w := range s.Schedule.windowsOn(d.Year(), d.Month(), d.Day(), s.Location()) {
		total += w[1].Sub(w[0])
	}
	return total
}
