package engine

import (
	"time"

	"github.com/leadline/leadline/senders"
)

// paceKey is one sender's local day.
type paceKey struct {
	sender string
	day    string
}

// pace is what wakeAt has handed out of one sender's local day: the latest
// slot, and how many slots of each action.
type pace struct {
	last time.Time
	n    map[senders.Action]int
}

// maxPaces bounds the runner's memory of handed-out slots; past it the
// plan starts afresh (a plan only saves runs, it decides nothing).
const maxPaces = 100_000

// wakeAt returns when an enrollment whose action a of sender s cannot run
// before from should look again: the sender's next free slot in its plan.
//
// The plan is the one thing every wait on a sender shares: a held action
// (spacing, the hourly cap, a holiday: guards.go), a spent budget
// (postpone) and a closed schedule. Within a working window the slots
// follow one another as the sender's own guards would let it act: each
// the spacing's gap after the one before (the same draw as the spacing
// guard, senders.NextSlot, so a sender that acts on its slot is free
// exactly at the next one), but at least the minimum gap and the
// runner's tick apart (a sender that acts a tick late is then free at
// the next slot all the same), and no closer than the hourly cap allows. A
// day holds no more slots of an action than its cap; past the window or
// the cap, the slots go on in the next window. So a sender's waiting
// enrollments wake one at a time, about when it can act, instead of all
// at the window's start only for most of them to wait again.
//
// The guards and the budget decide when the enrollment runs; this only
// saves runs, and several runners each keep their own plan.
func (r *Runner) wakeAt(s *senders.Sender, a senders.Action, from time.Time) time.Time {
	loc := s.Location()
	lo, hi := s.SpacingOf()
	var least time.Duration
	if h := s.HourlyCapOf(); h > 0 && a.Channel() == senders.Email {
		least = time.Hour / time.Duration(h)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.paces) > maxPaces {
		clear(r.paces)
	}
	t := from
	for range 120 {
		open, ok := s.Schedule.NextOpen(t, loc)
		if !ok {
			return from
		}
		day := senders.LocalDate(open, loc)
		k := paceKey{sender: s.ID, day: day}
		p := r.paces[k]
		if p == nil {
			p = &pace{n: map[senders.Action]int{}}
			r.paces[k] = p
		}
		if p.n[a] >= max(s.Limits(a, day).EffectiveCap, 1) {
			t = senders.NextMidnight(open, loc)
			continue
		}
		slot := open
		if !p.last.IsZero() {
			next := p.last.Add(least)
			if lo > 0 {
				// The runner acts on a slot up to a tick late, and the
				// guard keeps the minimum gap from then: no slot closer.
				gap := max(senders.SpacingGap(s.Name, p.last, lo, hi), lo+r.Cadence)
				next = maxTime(next, p.last.Add(gap))
			}
			slot = maxTime(slot, next)
		}
		if start, end, ok := s.Schedule.Window(slot, loc); !ok || start.After(slot) || !slot.Before(end) {
			t = slot
			if ok && !slot.Before(end) {
				t = end
			}
			continue
		}
		p.last = slot
		p.n[a]++
		return slot
	}
	return from
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
