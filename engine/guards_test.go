package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
)

// guarded applies spec over the world's sender of its name (a spec is the
// sender's whole configuration) and gives the network the new one.
func (e *rig) guarded(spec senders.Spec) *senders.Sender {
	e.t.Helper()
	ctx := context.Background()
	w, err := e.ws.WorkspaceByID(ctx, e.p.WorkspaceID)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.senders.Apply(ctx, senders.Owner{WorkspaceID: w.ID, Timezone: w.Timezone, Clients: map[string]string{"Globex": e.ids["Globex"]}},
		[]senders.Spec{spec}); err != nil {
		e.t.Fatal(err)
	}
	s, err := e.senders.ByName(ctx, w.ID, spec.Name)
	if err != nil {
		e.t.Fatal(err)
	}
	e.net.Register(*s)
	return s
}

// TestSpacingPacesASendersActions: with its default spacing a LinkedIn
// sender's invitations go out one by one, 45 s to 3 min apart, not at
// once; the waiting ones say so, and the day still sends them all. The
// slot is found by the sender's key on both engines.
func TestSpacingPacesASendersActions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "")
		ben := e.guarded(senders.Spec{Name: "ben", Channel: senders.LinkedIn, Client: "Globex"})
		ids := e.due("Fallback", 6) // Monday 12:00 in Berlin
		e.runUntil(monday.Add(2*time.Hour + time.Second))
		is.Equal(len(e.net.Performed()), 1)
		held := 0
		for _, id := range ids {
			en := e.enrollment(id)
			if en.WaitingFor != nil && *en.WaitingFor == senders.GuardSpacing {
				held++
				is.True(en.NextRunAt.After(e.clock.Now()))
			}
		}
		is.Equal(held, 5)
		why, reasons := e.why("Fallback")
		is.True(why.Sending) // spacing lifts by itself
		is.Equal(*reasons[senders.GuardSpacing].Count, 5)

		e.runUntil(monday.Add(4 * time.Hour))
		// The slot is taken by an upsert on its key; when it is taken
		// already, its time is read by the same key.
		dbtest.AssertNoScan(t, d, "sender_pace", "", []string{"SELECT next_at FROM sender_pace WHERE sender_id = '" + ben.ID + "'"})
		perf := e.net.Performed()
		is.Equal(len(perf), 6)
		for i := 1; i < len(perf); i++ {
			gap := perf[i].At.Sub(perf[i-1].At)
			is.True(gap >= 45*time.Second && gap <= 3*time.Minute+time.Minute)
		}
		e.noViolations() // the sandbox's own spacing audit
		is.Equal(ben.Guards.Spacing.Min, "45s")
	})
}

// TestHolidayHoldsEverything: on a sender's day off nothing runs; the
// wait shows holiday with the day it ends, and the work goes on after.
func TestHolidayHoldsEverything(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "")
		e.guarded(senders.Spec{Name: "ben", Channel: senders.LinkedIn, Client: "Globex",
			GuardSettings: senders.GuardSettings{Holidays: &senders.Holidays{Dates: []string{"2026-11-02"}}}})
		ids := e.due("Fallback", 2)
		e.runUntil(monday.Add(3 * time.Hour))
		is.Equal(len(e.net.Performed()), 0)
		en := e.enrollment(ids[0])
		is.Equal(*en.WaitingFor, senders.GuardHoliday)
		// The day off ends at midnight; the work goes on in Tuesday's
		// working hours, 09:00 in Berlin.
		_, reasons := e.why("Fallback")
		is.True(reasons[senders.GuardHoliday].Until.Equal(time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC)))
		e.runUntil(monday.Add(30 * time.Hour))
		perf := e.net.Performed()
		is.Equal(len(perf), 2)
		is.Equal(perf[0].Day, "2026-11-03")
		e.noViolations()
	})
}

// TestBounceGuardStopsTheMailbox: hard bounces past max_bounce_rate stop
// the mailbox with high_bounce_rate (sender.health_changed); its
// enrollments wait until a manager resumes it, then go on.
func TestBounceGuardStopsTheMailbox(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, mailSequences)
		mail := e.guarded(senders.Spec{Name: "mail", Channel: senders.Email, Address: "sales@acme.test", Caps: map[string]int{"email": 100},
			GuardSettings: senders.GuardSettings{Spacing: &senders.Spacing{Min: "0s", Max: "0s"}, HourlyCap: ptr(0)}})
		ids := e.due("Mail only", 30)
		// Three of the first 30 bounce hard: 10 %, above 3 %.
		for _, id := range ids[:3] {
			e.net.Script(id, sandbox.Outcome{Bounce: true})
		}
		e.runUntil(monday.Add(3 * time.Hour))
		s, err := e.senders.ByID(context.Background(), e.p.WorkspaceID, mail.ID)
		is.NoErr(err)
		is.Equal(s.Health, senders.Warning)
		is.Equal(s.HealthReasons[0].Code, senders.GuardHighBounceRate)
		sent := len(e.net.Performed())
		is.Equal(sent, 30)
		var more []string
		for _, name := range []string{"Zoe Zhu", "Yan Yu", "Xia Xu"} {
			more = append(more, e.lead(name, nil))
		}
		e.enrol("Mail only", more...)
		e.runUntil(monday.Add(5 * time.Hour))
		is.Equal(len(e.net.Performed()), sent) // stopped
		for _, id := range more {
			en := e.enrollment(id)
			is.Equal(*en.WaitingFor, senders.GuardHighBounceRate)
			is.True(en.NextRunAt == nil) // until a manager acts
		}
		ids = append(ids, more...)

		_, err = e.pl.ResumeSender(context.Background(), apikit.Principal{WorkspaceID: e.p.WorkspaceID, Role: apikit.RoleManager}, mail.ID,
			senders.GuardHighBounceRate)
		is.NoErr(err)
		e.runUntil(monday.Add(9 * time.Hour))
		is.True(len(e.net.Performed()) > sent)
		for _, id := range ids[3:] {
			is.True(e.enrollment(id).Status != enrollments.Failed)
		}
	})
}

// TestStaleInvitationsAreWithdrawn: an invitation pending 21 days is
// withdrawn through the transport (invite.withdrawn), and the enrollment
// waiting at its invite_accepted condition takes the else branch at once,
// long before the condition's own 30 days.
func TestStaleInvitationsAreWithdrawn(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, `      - name: Patient
        client: Globex
        senders: [ben]
        steps:
          - {id: invite, type: invite}
          - {id: accepted, type: condition, if: invite_accepted, within_days: 30, then: hello, else: bye}
          - {id: hello, type: message, body: "Thanks!", next: end}
          - {id: bye, type: wait, days: 1}
`)
		q, err := e.seqs.ByName(context.Background(), e.p.WorkspaceID, "Patient")
		is.NoErr(err)
		e.ids["Patient"] = q.ID
		ids := e.due("Patient", 2)
		e.runUntil(monday.Add(20 * 24 * time.Hour))
		is.Equal(e.net.Withdrawals(), 0)
		is.Equal(*e.enrollment(ids[0]).WaitingFor, "awaiting_acceptance")
		e.runUntil(monday.Add(23 * 24 * time.Hour))
		is.Equal(e.net.Withdrawals(), 2)
		for _, id := range ids {
			is.Equal(e.count(senders.EventInviteWithdrawn, id), 1)
			en := e.enrollment(id)
			is.True(en.StepID == "bye" || en.Status == enrollments.Finished)
		}
		e.noViolations() // the sandbox judged each withdrawal's age
	})
}
