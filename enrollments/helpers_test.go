package enrollments_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sequences"
	setupfile "github.com/leadline/leadline/setup"
)

// world is the workspace every test of the enrollments' rules starts
// from: a LinkedIn and an email sender, three active sequences and a
// draft. Visit ends in a task step, so that both a task and the end of a
// sequence are one step away.
const world = `workspaces:
  - name: acme
    timezone: Europe/Berlin
    members: [{email: owner@acme.test, role: owner}]
    blacklist: {companies: [Umbrella]}
    senders:
      - {name: anna, channel: linkedin}
      - {name: mail, channel: email, address: sales@acme.test}
    sequences:
      - name: Visit
        senders: [anna]
        steps:
          - {id: visit, type: profile_view}
          - {id: call, type: task, title: "Call them", due_in_days: 1}
      - name: Other
        senders: [anna]
        steps:
          - {id: visit, type: profile_view}
      - name: Mail
        senders: [mail]
        steps:
          - {id: mail, type: email, subject: "Hello", body: "Hello {{first_name|there}}"}
      - name: Draft
        senders: [anna]
        steps:
          - {id: visit, type: profile_view}
`

// monday is 2 November 2026, 09:00 UTC: 10:00 in Berlin, inside the
// senders' default working hours.
var monday = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// bundle is a platform on a fresh database with world applied, its fake
// clock, the workspace owner and the ids of senders and sequences by name.
type bundle struct {
	t     *testing.T
	ctx   context.Context
	pl    *platform.Platform
	svc   *enrollments.Service
	clock *apikit.FakeClock
	p     apikit.Principal
	ids   map[string]string
}

// each runs fn in parallel on every engine (dbtest.Each), each with a
// bundle of its own.
func each(t *testing.T, fn func(t *testing.T, b *bundle)) {
	t.Helper()
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		fn(t, setup(t, d))
	})
}

// setup applies world on d and builds the platform on it.
func setup(t *testing.T, d *db.DB) *bundle {
	t.Helper()
	ctx := context.Background()
	clock := apikit.NewFakeClock(monday)
	f, err := setupfile.Decode(strings.NewReader(world))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setupfile.Apply(ctx, d, clock, secret.TestKey(), f); err != nil {
		t.Fatal(err)
	}
	pl := platform.New(platform.Config{DB: d, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	w, err := pl.Workspaces.ByName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{t: t, ctx: ctx, pl: pl, svc: pl.Enrollments, clock: clock, p: apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}, ids: map[string]string{}}
	ss, err := pl.Senders.All(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		b.ids[s.Name] = s.ID
	}
	for _, name := range []string{"Visit", "Other", "Mail", "Draft"} {
		q, err := pl.Sequences.ByName(ctx, w.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		b.ids[name] = q.ID
		if name != "Draft" {
			if err := pl.Sequences.ActivateByName(ctx, w.ID, name); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b
}

// lead creates a lead with a LinkedIn id and a work address; without
// "linkedin" or "email" among drop it lacks that, and company sets its
// company.
func (b *bundle) lead(name, company string, drop ...string) string {
	b.t.Helper()
	slug := strings.ToLower(strings.ReplaceAll(name, " ", "."))
	in := leads.LeadInput{Name: &name, LinkedInID: ptr("li-" + slug), EmailWork: ptr(slug + "@example.test")}
	if company != "" {
		in.Company = &company
	}
	if slices.Contains(drop, "linkedin") {
		in.LinkedInID = nil
	}
	if slices.Contains(drop, "email") {
		in.EmailWork = nil
	}
	res, err := b.pl.Leads.Upsert(b.ctx, b.p, in)
	if err != nil {
		b.t.Fatal(err)
	}
	return res.Lead.ID
}

// people creates four leads with LinkedIn and email: Ann, Ben, Cy and Dan.
func (b *bundle) people() (ann, ben, cy, dan string) {
	b.t.Helper()
	return b.lead("Ann Lee", ""), b.lead("Ben Ode", ""), b.lead("Cy Park", ""), b.lead("Dan Roe", "")
}

func ptr[T any](v T) *T { return &v }

// enrol commits leadIDs to the sequence named seq and returns the
// enrollment of each enrolled lead, by lead.
func (b *bundle) enrol(seq string, leadIDs ...string) map[string]*enrollments.Enrollment {
	b.t.Helper()
	res, err := b.svc.Commit(b.ctx, b.p, enrollments.EnrollInput{SequenceID: b.ids[seq], LeadIDs: leadIDs, Confirm: true})
	if err != nil {
		b.t.Fatal(err)
	}
	out := map[string]*enrollments.Enrollment{}
	for _, id := range res.EnrollmentIDs {
		e := b.get(id)
		out[e.LeadID] = e
	}
	return out
}

// get reads the enrollment with id back from the store.
func (b *bundle) get(id string) *enrollments.Enrollment {
	b.t.Helper()
	e, err := b.svc.Store().ByID(b.ctx, b.p.WorkspaceID, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return e
}

// change runs fn on the enrollment with id and its sequence in one
// transaction at the clock's time and saves what fn changed, as the
// runner and the hooks do; it returns the enrollment as read back.
func (b *bundle) change(id string, fn func(ctx context.Context, e *enrollments.Enrollment, q *sequences.Sequence, now time.Time) error) *enrollments.Enrollment {
	b.t.Helper()
	err := b.pl.DB.InTx(b.ctx, func(ctx context.Context) error {
		e, err := b.svc.Store().ByID(ctx, b.p.WorkspaceID, id)
		if err != nil {
			return err
		}
		q, err := b.pl.Sequences.ByID(ctx, b.p.WorkspaceID, e.SequenceID)
		if err != nil {
			return err
		}
		now := db.Now(ctx, b.clock)
		if err := fn(ctx, e, q, now); err != nil {
			return err
		}
		e.UpdatedAt = now
		return b.svc.Store().Save(ctx, e)
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return b.get(id)
}

// events returns the lead's events, oldest first.
func (b *bundle) events(leadID string) []events.Event {
	b.t.Helper()
	evs, _, err := b.pl.Log.ForLead(b.ctx, b.p.WorkspaceID, leadID, 100, 0)
	if err != nil {
		b.t.Fatal(err)
	}
	slices.Reverse(evs)
	return evs
}

// kinds returns the kinds of the lead's events about enrollments, oldest
// first.
func (b *bundle) kinds(leadID string) []string {
	b.t.Helper()
	var out []string
	for _, e := range b.events(leadID) {
		if strings.HasPrefix(e.Kind, "enrollment.") {
			out = append(out, e.Kind)
		}
	}
	return out
}

// last returns the lead's latest event of kind, failing the test when
// there is none.
func (b *bundle) last(leadID, kind string) events.Event {
	b.t.Helper()
	evs := b.events(leadID)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == kind {
			return evs[i]
		}
	}
	b.t.Fatalf("lead %s has no %s event", leadID, kind)
	return events.Event{}
}

// step returns the counters of a step of the sequence named seq.
func (b *bundle) step(seq, stepID string) enrollments.StepStats {
	b.t.Helper()
	st, err := b.svc.Stats(b.ctx, b.p, b.ids[seq])
	if err != nil {
		b.t.Fatal(err)
	}
	for _, s := range st.Steps {
		if s.StepID == stepID {
			return s
		}
	}
	b.t.Fatalf("sequence %s has no step %s", seq, stepID)
	return enrollments.StepStats{}
}

// why returns why-not-sending of the sequence named seq, its reasons by
// code.
func (b *bundle) why(seq string) (*enrollments.WhyNotSending, map[string]enrollments.StallReason) {
	b.t.Helper()
	w, err := b.svc.WhyNotSending(b.ctx, b.p, b.ids[seq])
	if err != nil {
		b.t.Fatal(err)
	}
	byCode := map[string]enrollments.StallReason{}
	for _, r := range w.Reasons {
		byCode[r.Code] = r
	}
	return w, byCode
}

// later moves the clock on by d and returns the new time.
func (b *bundle) later(d time.Duration) time.Time {
	b.clock.Advance(d)
	return b.clock.Now()
}

// same reports whether the optional time a is set and equal to b.
func same(a *time.Time, b time.Time) bool { return a != nil && a.Equal(b) }
