package engine

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/senders"
)

// TestWakeAtFollowsTheSendersPace: the waits on one sender share one plan
// of slots. Within a window each slot is the spacing's gap after the one
// before, as the guard draws it; an action gets no more slots in a day than
// its cap, and the rest go on in the next window; past the window's end the
// plan goes on in the next one.
func TestWakeAtFollowsTheSendersPace(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := &Runner{paces: map[paceKey]*pace{}}
	s := &senders.Sender{ID: "anna", Channel: senders.LinkedIn, Timezone: "UTC", Schedule: senders.DefaultSchedule(),
		Caps:   senders.Caps{"invite": 3, "profile_view": 100},
		Guards: senders.GuardSettings{Spacing: &senders.Spacing{Min: "1m", Max: "3m"}}}
	lo, hi := s.SpacingOf()
	mon := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) // a Monday, the window's start

	// Three invitations held from 10:00: the first at 10:00, each next one
	// the guard's own gap later.
	at := mon.Add(time.Hour)
	first := r.wakeAt(s, senders.Invite, at)
	is.Equal(first, at)
	second := r.wakeAt(s, senders.Invite, at)
	is.Equal(second, first.Add(senders.SpacingGap(s.Name, first, lo, hi)))
	third := r.wakeAt(s, senders.Invite, at)
	is.Equal(third, second.Add(senders.SpacingGap(s.Name, second, lo, hi)))
	// The day's cap of three is handed out: the fourth goes to Tuesday's
	// window, where it is the first.
	is.Equal(r.wakeAt(s, senders.Invite, at), mon.AddDate(0, 0, 1))
	// A profile view shares the sender's spacing: it comes after the third
	// invitation, not at 10:00.
	view := r.wakeAt(s, senders.ProfileView, at)
	is.Equal(view, third.Add(senders.SpacingGap(s.Name, third, lo, hi)))

	// From 16:59 the plan runs past 17:00: the slot after goes to the next
	// window, Tuesday 09:00, after the invitation already there.
	late := mon.Add(7*time.Hour + 59*time.Minute)
	is.Equal(r.wakeAt(s, senders.ProfileView, late), late)
	tue := r.wakeAt(s, senders.ProfileView, late)
	is.Equal(tue, mon.AddDate(0, 0, 1).Add(senders.SpacingGap(s.Name, mon.AddDate(0, 0, 1), lo, hi)))

	// Outside the schedule (Saturday), the wait begins at Monday's window.
	sat := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
	is.Equal(r.wakeAt(s, senders.ProfileView, sat), time.Date(2026, 3, 9, 9, 0, 0, 0, time.UTC))

	// Without spacing the day's slots are all at the window's start, up to
	// the cap.
	off := *s
	off.ID = "ben"
	off.Guards = senders.GuardSettings{Spacing: &senders.Spacing{Min: "0s", Max: "0s"}}
	for range 3 {
		is.Equal(r.wakeAt(&off, senders.Invite, sat), time.Date(2026, 3, 9, 9, 0, 0, 0, time.UTC))
	}
	is.Equal(r.wakeAt(&off, senders.Invite, sat), time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC))
}

// TestWakeAtKeepsTheHourlyCap: a mailbox's slots are no closer than its
// hourly cap allows, even when its spacing would let them be.
func TestWakeAtKeepsTheHourlyCap(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := &Runner{paces: map[paceKey]*pace{}}
	perHour := 4 // 15 minutes apart, more than the spacing's 1 to 2 minutes
	s := &senders.Sender{ID: "mail", Channel: senders.Email, Timezone: "UTC", Schedule: senders.DefaultSchedule(),
		Caps:   senders.Caps{"email": 50},
		Guards: senders.GuardSettings{Spacing: &senders.Spacing{Min: "1m", Max: "2m"}, HourlyCap: &perHour}}
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	prev := r.wakeAt(s, senders.SendEmail, at)
	is.Equal(prev, at)
	for range 5 {
		next := r.wakeAt(s, senders.SendEmail, at)
		is.Equal(next.Sub(prev), 15*time.Minute)
		prev = next
	}
}

// TestAPlanAllowsForTheTick: a runner that ticks every 30 s acts on a slot
// up to 30 s late. The spacing guard then frees the sender no later than
// the plan's next slot (senders.NextSlot draws the gap from the slot, and
// keeps the minimum from the late action), so that the enrollment woken
// for that slot is not held again.
func TestAPlanAllowsForTheTick(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	tick := 30 * time.Second
	r := &Runner{paces: map[paceKey]*pace{}, Cadence: tick}
	s := &senders.Sender{ID: "anna", Channel: senders.LinkedIn, Timezone: "UTC", Schedule: senders.DefaultSchedule(),
		Caps:   senders.Caps{"profile_view": 150},
		Guards: senders.GuardSettings{Spacing: &senders.Spacing{Min: "45s", Max: "3m"}}}
	lo, hi := s.SpacingOf()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	slot := r.wakeAt(s, senders.ProfileView, at)
	for i := range 60 {
		next := r.wakeAt(s, senders.ProfileView, at)
		is.True(next.Sub(slot) >= lo+tick) // never closer than a late tick needs
		late := slot.Add(time.Duration(i%4) * 10 * time.Second)
		free := senders.NextSlot(s.Name, slot, late, lo, hi)
		is.True(!free.After(next))    // the sender is free at the next slot
		is.True(free.Sub(late) >= lo) // and never closer than the minimum
		slot = next
	}
}
