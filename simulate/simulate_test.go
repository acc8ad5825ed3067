package simulate_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/reports"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/simulate"
	"github.com/leadline/leadline/workspace"
)

// TestSimulatedFortnight runs the sample setup for two weeks and checks the
// run against the sandbox's audit and an independent count of the export.
func TestSimulatedFortnight(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		t.Parallel() // the engines side by side
		is := is.New(t)
		ctx := context.Background()
		f, err := setup.ReadFile("../examples/setup.yaml")
		is.NoErr(err)
		var out bytes.Buffer
		res, err := simulate.Run(ctx, simulate.Config{DB: d, Setup: f, Days: 14, Seed: 7, Leads: 300, Start: "2026-03-02", Rates: sandbox.DefaultRates, Out: &out})
		is.NoErr(err)
		is.Equal(len(res.Violations), 0)
		is.True(res.Actions > 300)
		is.True(res.Accepted > 0)
		is.True(res.Replies > 0)
		is.True(strings.Contains(out.String(), "0 violations."))
		// The inbox has threads with replies of several intents, among them
		// out-of-office ones, and the task step left open tasks.
		is.True(res.Threads > 0)
		is.True(res.Intents["ooo"] > 0)
		is.True(len(res.Intents) >= 4)
		is.True(res.OpenTasks > 0)
		is.True(res.Meetings > 0) // some interested leads booked a meeting
		// The runner's wall time is split by part, within the run's.
		sp := res.Phases.Runner
		is.True(sp.Runs > 0 && sp.Checks > 0 && sp.Claims > 0 && sp.Ingest > 0)
		is.True(sp.Runs+sp.Checks+sp.Claims+sp.Ingest+sp.NextDue <= res.Phases.Run)
		is.True(strings.Contains(out.String(), "Inbox: "))

		// The export, counted by simple code, agrees with what the sandbox received.
		w, err := workspace.NewService(d, apikit.SystemClock{}).ByName(ctx, "agency")
		is.NoErr(err)
		var buf bytes.Buffer
		is.NoErr(events.NewLog(d, apikit.SystemClock{}).Export(ctx, w.ID, time.Time{}, &buf))
		sent, withNote, dnc := 0, 0, 0
		exported, err := events.ReadExport(&buf)
		is.NoErr(err)
		for _, e := range exported {
			is.True(e.ID != "" && !e.At.IsZero() && e.Kind != "")
			switch e.Kind {
			case "action.sent":
				sent++
				is.True(e.SenderID != nil && e.LeadID != nil && e.SequenceID != nil && e.EnrollmentID != nil && e.StepID != nil)
				if e.Data["with_note"] == true {
					withNote++
				}
			case "lead.suppressed":
				dnc++
			}
		}
		is.Equal(sent, res.Actions)
		notes := 0
		for _, p := range res.Performed {
			if p.WithNote {
				notes++
			}
		}
		is.Equal(withNote, notes)
		is.True(dnc > 0) // the run marked leads do-not-contact as it went
	})
}

// variantWorld is a workspace whose one sequence tests two invitation
// notes against each other, the winner picked by acceptance rate. Its
// senders invite 30 leads a day together, so that 200 leads take into the
// second week.
const variantWorld = `
workspaces:
  - name: ab
    timezone: UTC
    plan: pro
    members: [{email: owner@ab.test, role: owner}]
    clients: [Acme]
    senders:
      - {name: s1, channel: linkedin, client: Acme, premium: true, caps: {invite: 10}}
      - {name: s2, channel: linkedin, client: Acme, premium: true, caps: {invite: 10}}
      - {name: s3, channel: linkedin, client: Acme, premium: true, caps: {invite: 10}}
    sequences:
      - name: Notes
        client: Acme
        senders: [s1, s2, s3]
        steps:
          - id: invite
            type: invite
            variants:
              - {id: a, note: "Hi {{first_name|there}}, a note."}
              - {id: b, note: "Hello {{first_name|there}}, another note."}
            pick_winner: {metric: acceptance_rate, min_sends: 40, confidence: 0.95}
`

// TestSimulatedVariantTest: with --variant-rate making one note clearly
// better, it wins once the evidence reaches the confidence, no enrollment
// gets the other after the win, and the variants' numbers add up (the
// simulation's own audit, which finds nothing).
func TestSimulatedVariantTest(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		is := is.New(t)
		f, err := setup.Decode(strings.NewReader(variantWorld))
		is.NoErr(err)
		rates := sandbox.DefaultRates
		rates.Variants = map[string]sandbox.VariantRate{}
		is.NoErr(sandbox.ParseVariantRate("invite/a=accept:0.05", rates.Variants))
		is.NoErr(sandbox.ParseVariantRate("invite/b=accept:0.60", rates.Variants))
		var out bytes.Buffer
		res, err := simulate.Run(context.Background(), simulate.Config{DB: d, Setup: f, Days: 14, Seed: 3, Leads: 200, Start: "2026-03-02", Rates: rates, Out: &out})
		is.NoErr(err)
		is.Equal(len(res.Violations), 0) // no variant after the win, the numbers add up
		is.Equal(len(res.Variants), 2)
		sent := 0
		for _, v := range res.Variants {
			sent += v.Sent
			is.True(v.Sent >= 40)
		}
		a, b := res.Variants[0], res.Variants[1]
		is.Equal(a.VariantID, "a")
		is.True(a.WonAt == nil)
		is.True(b.WonAt != nil) // b won, by evidence
		is.True(b.Sent > a.Sent)
		invites := 0
		for _, p := range res.Performed {
			if p.StepID == "invite" {
				invites++
				is.True(p.VariantID == "a" || p.VariantID == "b")
			}
		}
		is.Equal(invites, sent) // the step's sends are the variants'
		is.True(strings.Contains(out.String(), "Variants (the sequence's stats):"))

		// The sequence's report over the fortnight has the same numbers per
		// variant, and the two over its first week add up to no more.
		ctx := context.Background()
		pl := platform.New(platform.Config{DB: d, Clock: apikit.NewFakeClock(res.End)})
		w, err := pl.Workspaces.ByName(ctx, "ab")
		is.NoErr(err)
		q, err := pl.Sequences.ByName(ctx, w.ID, "Notes")
		is.NoErr(err)
		p := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}
		rep, err := pl.Reports.Subject(ctx, p, reports.Sequences, q.ID, reports.Params{From: "2026-03-02", To: "2026-03-15"})
		is.NoErr(err)
		vs := rep.Steps[0].Variants
		is.Equal(len(vs), 2)
		is.Equal(vs[0].Sent, a.Sent)
		is.Equal(vs[1].Sent, b.Sent)
		is.Equal(vs[1].Accepted, b.Accepted)
		is.True(vs[1].Won)
		is.True(vs[0].ProbabilityBest == nil) // the test's evidence is the stats'
		week, err := pl.Reports.Subject(ctx, p, reports.Sequences, q.ID, reports.Params{From: "2026-03-02", To: "2026-03-08"})
		is.NoErr(err)
		wv := week.Steps[0].Variants
		is.True(wv[0].Sent+wv[1].Sent > 0 && wv[0].Sent+wv[1].Sent < sent)
	})
}

// TestParseVariantRate: a --variant-rate value names a step's variant and
// its rates; anything else is refused with what is expected.
func TestParseVariantRate(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := map[string]sandbox.VariantRate{}
	is.NoErr(sandbox.ParseVariantRate("mail/b=reply:0.10,accept:0.40", m))
	is.Equal(*m["mail/b"].Reply, 0.10)
	is.Equal(*m["mail/b"].Accept, 0.40)
	for _, bad := range []string{"mail=reply:0.1", "mail/b", "mail/b=reply:2", "mail/b=bounce:0.1", "/b=reply:0.1", "mail/b=reply"} {
		err := sandbox.ParseVariantRate(bad, m)
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), "--variant-rate"))
	}
}

// rulesWorld is a workspace whose outreach moves leads on by their
// replies: interested ones qualified and tagged, not-now ones to a nurture
// sequence, a wrong person's named colleague enrolled; the nurture
// sequence sends not-now leads back, which the bound on rules must stop.
const rulesWorld = `
workspaces:
  - name: rules
    timezone: UTC
    plan: pro
    members: [{email: owner@rules.test, role: owner}]
    clients: [Acme]
    stages: [New, Qualified]
    tags: [hot]
    blacklist: {companies: [Umbrella]}
    senders:
      - {name: m1, channel: email, client: Acme, address: m1@rules.test, caps: {email: 80}, max_bounce_rate: 0}
      - {name: m2, channel: email, client: Acme, address: m2@rules.test, caps: {email: 80}, max_bounce_rate: 0}
    sequences:
      - name: Outreach
        client: Acme
        senders: [m1, m2]
        on_reply:
          interested: {stage: Qualified, tag: hot, task: "Call within a day"}
          not_now: {enroll: Nurture, after_days: 2}
          wrong_person: {enroll_replacement: Nurture}
        steps:
          - {id: hi, type: email, subject: "Hello {{first_name|there}}", body: "A short note."}
      - name: Nurture
        client: Acme
        senders: [m1, m2]
        on_reply:
          not_now: {enroll: Outreach}
        steps:
          - {id: again, type: email, subject: "Checking in", body: "Another short note."}
`

// TestSimulatedRules: over a fortnight the rules run on the replies and
// enrol leads, and the audit finds no do-not-contact or blacklisted lead
// enrolled by a rule and no loop between the two sequences.
func TestSimulatedRules(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		is := is.New(t)
		f, err := setup.Decode(strings.NewReader(rulesWorld))
		is.NoErr(err)
		rates := sandbox.DefaultRates
		rates.Reply = 0.5
		var out bytes.Buffer
		res, err := simulate.Run(context.Background(), simulate.Config{DB: d, Setup: f, Days: 14, Seed: 5, Leads: 300, Start: "2026-03-02", Rates: rates, Out: &out})
		is.NoErr(err)
		if len(res.Violations) > 0 {
			t.Log(out.String())
		}
		is.Equal(len(res.Violations), 0)
		is.True(res.Rules.Runs > 0)
		is.True(res.Rules.Enrolled > 0)
		is.True(strings.Contains(out.String(), "Replies that moved leads on:"))
	})
}

// TestOneSeedOneMonth: the same setup and seed simulated twice give the
// same month, line for line (but for the wall time), though every id is
// new in each run: the sandbox draws by who a lead is and spacing by the
// sender's name. SQLite only: on Postgres the parallel runner's order
// varies run to run.
func TestOneSeedOneMonth(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f, err := setup.ReadFile("../examples/setup.yaml")
	is.NoErr(err)
	month := func() string {
		var out bytes.Buffer
		res, err := simulate.Run(context.Background(), simulate.Config{DB: dbtest.Open(t, db.SQLite), Setup: f, Days: 8, Seed: 9, Leads: 300,
			Start: "2026-03-02", Rates: sandbox.DefaultRates, Out: &out})
		is.NoErr(err)
		is.True(res.Actions > 50)
		var keep []string
		for _, line := range strings.Split(out.String(), "\n") {
			if !strings.HasPrefix(line, "Wall time:") {
				keep = append(keep, line)
			}
		}
		return strings.Join(keep, "\n")
	}
	is.Equal(month(), month())
}
