package senders_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/senders"
)

func ptr[T any](v T) *T { return &v }

// guard asks s's guards about a at the clock's time, in a transaction, and
// keeps what they took.
func (b *bundle) guard(t *testing.T, s *senders.Sender, a senders.Action) *senders.Blocked {
	t.Helper()
	var held *senders.Blocked
	if err := b.db.InTx(context.Background(), func(ctx context.Context) error {
		var err error
		held, _, err = b.svc.Guard(ctx, s, a, b.clock.Now(), b.clock.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return held
}

// TestSpacingKeepsAGapBetweenActions: after one action the sender's next,
// of any kind, waits for a gap drawn between the spacing's min and max;
// what a later rule stops gives the slot back.
func TestSpacingKeepsAGapBetweenActions(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
		b := setup(t, d, at)
		s := b.apply(t, senders.Spec{Name: "anna", Channel: senders.LinkedIn})
		is.Equal(*s.Guards.Spacing, senders.Spacing{Min: "45s", Max: "3m0s"}) // the default, filled in
		is.True(b.guard(t, s, senders.Invite) == nil)
		held := b.guard(t, s, senders.Message)
		is.True(held != nil)
		is.Equal(held.Code, senders.GuardSpacing)
		gap := held.Until.Sub(at)
		is.Equal(gap, senders.SpacingGap(s.Name, at, 45*time.Second, 3*time.Minute))
		is.True(gap >= 45*time.Second && gap < 3*time.Minute)
		b.clock.Set(held.Until.Add(-time.Second))
		is.True(b.guard(t, s, senders.Invite) != nil)
		b.clock.Set(held.Until)
		is.True(b.guard(t, s, senders.Invite) == nil)

		// A runner acts a tick after an action was due: the gap is drawn
		// from the due moment, never closer than the minimum to now.
		b.clock.Advance(time.Hour)
		due, now := b.clock.Now(), b.clock.Now().Add(20*time.Second)
		b.clock.Set(now)
		is.NoErr(b.db.InTx(context.Background(), func(ctx context.Context) error {
			held, _, err := b.svc.Guard(ctx, s, senders.Invite, now, due)
			is.True(held == nil)
			return err
		}))
		next := b.guard(t, s, senders.Message)
		is.True(next != nil)
		is.True(next.Until.Equal(senders.NextSlot(s.Name, due, now, 45*time.Second, 3*time.Minute)))
		is.True(next.Until.Equal(maxOf(due.Add(senders.SpacingGap(s.Name, due, 45*time.Second, 3*time.Minute)), now.Add(45*time.Second))))

		// A slot taken for an action a later rule stops is given back.
		b.clock.Advance(time.Hour)
		is.NoErr(b.db.InTx(context.Background(), func(ctx context.Context) error {
			held, release, err := b.svc.Guard(ctx, s, senders.Invite, b.clock.Now(), b.clock.Now())
			is.True(held == nil)
			is.NoErr(err)
			return release(ctx)
		}))
		is.True(b.guard(t, s, senders.Invite) == nil)

		// Spacing 0s is off; the budget shows what spacing fits in a day.
		mail := b.apply(t, senders.Spec{Name: "mail", Channel: senders.Email, Address: "m@acme.test", GuardSettings: senders.GuardSettings{
			Spacing: &senders.Spacing{Min: "0s", Max: "0s"}, HourlyCap: ptr(0)}})
		is.True(b.guard(t, mail, senders.SendEmail) == nil)
		is.True(b.guard(t, mail, senders.SendEmail) == nil)
		lim := s.Limits(senders.Message, "2026-11-02")
		// 8 working hours at a mean gap of 112.5 s.
		is.Equal(*lim.GuardCap, 256)
		is.Equal(lim.Guard, senders.GuardSpacing)
	})
}

// TestHourlyCapCountsEachLocalHour: a mailbox sends at most hourly_cap
// emails in a local hour, then waits for the next.
func TestHourlyCapCountsEachLocalHour(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d, time.Date(2026, 11, 2, 9, 10, 0, 0, time.UTC)) // 10:10 in Berlin
		s := b.apply(t, senders.Spec{Name: "mail", Channel: senders.Email, Address: "m@acme.test", GuardSettings: senders.GuardSettings{
			Spacing: &senders.Spacing{Min: "0s", Max: "0s"}, HourlyCap: ptr(3)}})
		for range 3 {
			is.True(b.guard(t, s, senders.SendEmail) == nil)
		}
		held := b.guard(t, s, senders.SendEmail)
		is.Equal(held.Code, senders.GuardHourlyCap)
		is.Equal(held.Until, time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)) // 11:00 local
		b.clock.Set(held.Until)
		is.True(b.guard(t, s, senders.SendEmail) == nil)
		// The budget never promises more than the hours hold: 8 hours of 3,
		// below the spacing's (off) and the daily cap.
		lim := s.Limits(senders.SendEmail, "2026-11-02")
		is.Equal(*lim.GuardCap, 24)
		is.Equal(lim.EffectiveCap, 24)
	})
}

// TestHolidaysHoldEveryAction: a country's public holidays, the sender's
// dates and the workspace's are days off in the sender's timezone; the
// wait ends at the first local midnight that is no day off.
func TestHolidaysHoldEveryAction(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		// 24 December 2026, 10:00 in Berlin.
		b := setup(t, d, time.Date(2026, 12, 24, 9, 0, 0, 0, time.UTC))
		b.owner.Holidays = &senders.Holidays{Dates: []string{"2026-12-28"}}
		s := b.apply(t, senders.Spec{Name: "anna", Channel: senders.LinkedIn, GuardSettings: senders.GuardSettings{
			Holidays: &senders.Holidays{Country: "de", Dates: []string{"2026-12-24"}}}})
		is.Equal(s.Guards.Holidays.Country, "DE")
		is.Equal(s.Guards.Holidays.Dates, []string{"2026-12-24", "2026-12-28"}) // the workspace's and its own
		held := b.guard(t, s, senders.Message)
		is.Equal(held.Code, senders.GuardHoliday)
		// 24 (own), 25 and 26 (Germany's Christmas), 27 is a Sunday but no
		// holiday, so the wait ends at midnight before it, Berlin time.
		is.Equal(held.Until, time.Date(2026, 12, 26, 23, 0, 0, 0, time.UTC))
		is.True(s.Holiday("2026-12-28")) // the workspace's day
		is.True(!s.Holiday("2026-12-29"))
		lim := s.Limits(senders.Invite, "2026-12-25")
		is.Equal(lim.EffectiveCap, 0)
		is.Equal(lim.Guard, senders.GuardHoliday)
	})
}

// TestBounceGuardStopsAMailbox: hard bounces above max_bounce_rate of the
// latest emails (at least 30) stop the mailbox with high_bounce_rate;
// soft bounces do not count; a manager resumes it and the window starts
// again.
func TestBounceGuardStopsAMailbox(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		ctx := context.Background()
		s := b.apply(t, senders.Spec{Name: "mail", Channel: senders.Email, Address: "m@acme.test"})
		ls := b.leads(t, 100)
		send := func(from, to int) {
			for _, l := range ls[from:to] {
				is.NoErr(b.svc.RecordEmail(ctx, s, l.ID))
				b.clock.Advance(time.Minute)
			}
		}
		send(0, 20)
		// Below 30 emails nothing is judged: 2 of 20 bounced hard.
		is.NoErr(b.svc.RecordBounce(ctx, s, ls[0].ID, "5.1.1 ann@example.com"))
		is.NoErr(b.svc.RecordBounce(ctx, s, ls[1].ID, "550 5.1.1 mailbox unavailable"))
		is.Equal(s.Health, senders.Healthy)
		send(20, 100)
		// Soft bounces never count, nor a second report of one email.
		for _, l := range ls[2:10] {
			is.NoErr(b.svc.RecordBounce(ctx, s, l.ID, "4.2.2 mailbox full"))
		}
		is.NoErr(b.svc.RecordBounce(ctx, s, ls[1].ID, "5.1.1 again"))
		is.NoErr(b.svc.RecordBounce(ctx, s, ls[50].ID, "5.7.1 rejected"))
		is.Equal(s.Health, senders.Healthy) // 3 of 100: 3 %, not above
		is.True(b.guard(t, s, senders.SendEmail) == nil)
		is.NoErr(b.svc.RecordBounce(ctx, s, ls[60].ID, "5.1.1 unknown user"))
		is.Equal(s.Health, senders.Warning) // 4 of 100
		is.Equal(s.HealthReasons[0].Code, senders.GuardHighBounceRate)
		is.True(s.HealthReasons[0].Remedy != "")
		held := b.guard(t, s, senders.SendEmail)
		is.Equal(held.Code, senders.GuardHighBounceRate)
		is.True(held.Until.IsZero()) // a stop: until a manager resumes
		n, err := b.db.NewSelect().Table("events").Where("kind = ? AND sender_id = ?", senders.EventHealthChanged, s.ID).Count(ctx)
		is.NoErr(err)
		is.Equal(int(n), 1)

		// A member may not resume it; a manager may, and the window starts
		// again from then.
		_, err = b.svc.Resume(ctx, apikit.Principal{WorkspaceID: b.ws.ID, Role: apikit.RoleMember}, s.ID, senders.GuardHighBounceRate)
		is.Equal(apikit.ErrorCode(err), apikit.EForbidden)
		_, err = b.svc.Resume(ctx, apikit.Principal{WorkspaceID: b.ws.ID, Role: apikit.RoleManager}, s.ID, "spacing")
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		s, err = b.svc.Resume(ctx, apikit.Principal{WorkspaceID: b.ws.ID, Role: apikit.RoleManager}, s.ID, senders.GuardHighBounceRate)
		is.NoErr(err)
		is.Equal(s.Health, senders.Healthy)
		b.clock.Advance(10 * time.Minute) // past the spacing of the email before
		is.True(b.guard(t, s, senders.SendEmail) == nil)
		is.NoErr(b.svc.Recheck(ctx, s))
		is.Equal(s.Health, senders.Healthy)
	})
}

// TestGuardSettingsAreChecked: what a setup gives its guards is checked
// and refused with the spec's envelope, changing nothing.
func TestGuardSettingsAreChecked(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		for name, spec := range map[string]senders.Spec{
			"spacing words":   {Name: "x", Channel: senders.LinkedIn, GuardSettings: senders.GuardSettings{Spacing: &senders.Spacing{Min: "a while", Max: "3m"}}},
			"spacing reverse": {Name: "x", Channel: senders.LinkedIn, GuardSettings: senders.GuardSettings{Spacing: &senders.Spacing{Min: "3m", Max: "1m"}}},
			"hourly linkedin": {Name: "x", Channel: senders.LinkedIn, GuardSettings: senders.GuardSettings{HourlyCap: ptr(5)}},
			"hourly negative": {Name: "x", Channel: senders.Email, Address: "x@acme.test", GuardSettings: senders.GuardSettings{HourlyCap: ptr(-1)}},
			"rate above one":  {Name: "x", Channel: senders.LinkedIn, GuardSettings: senders.GuardSettings{MinAcceptanceRate: ptr(15.0)}},
			"bounce linkedin": {Name: "x", Channel: senders.LinkedIn, GuardSettings: senders.GuardSettings{MaxBounceRate: ptr(0.05)}},
			"country":         {Name: "x", Channel: senders.LinkedIn, GuardSettings: senders.GuardSettings{Holidays: &senders.Holidays{Country: "Atlantis"}}},
			"date":            {Name: "x", Channel: senders.LinkedIn, GuardSettings: senders.GuardSettings{Holidays: &senders.Holidays{Dates: []string{"24.12.2026"}}}},
			"withdraw email":  {Name: "x", Channel: senders.Email, Address: "x@acme.test", GuardSettings: senders.GuardSettings{WithdrawAfterDays: ptr(10)}},
		} {
			_, err := b.svc.Apply(context.Background(), b.owner, []senders.Spec{spec})
			if apikit.ErrorCode(err) != apikit.EPayloadInvalid {
				t.Errorf("%s: got %v", name, err)
			}
		}
		all, err := b.svc.All(context.Background(), b.ws.ID)
		is.NoErr(err)
		is.Equal(len(all), 0)
	})
}

// TestNextSlotChainsFromTheDueMoment: a runner that acts a few seconds
// after an action was due draws the next gap from the due moment, as the
// plan of slots does; one that acts long after draws it from now; either
// way the next action is at least the minimum gap after this one.
func TestNextSlotChainsFromTheDueMoment(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	lo, hi := 45*time.Second, 3*time.Minute
	due := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	// On time: the gap drawn at the due moment.
	is.Equal(senders.NextSlot("anna", due, due, lo, hi), due.Add(senders.SpacingGap("anna", due, lo, hi)))
	for _, late := range []time.Duration{5 * time.Second, 30 * time.Second, 44 * time.Second} {
		now := due.Add(late)
		next := senders.NextSlot("anna", due, now, lo, hi)
		is.Equal(next, maxOf(due.Add(senders.SpacingGap("anna", due, lo, hi)), now.Add(lo)))
		is.True(next.Sub(now) >= lo)
	}
	// Idle longer than the minimum gap: drawn from now.
	now := due.Add(10 * time.Minute)
	is.Equal(senders.NextSlot("anna", due, now, lo, hi), now.Add(senders.SpacingGap("anna", now, lo, hi)))
}

func maxOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
