package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/simulate"
	"github.com/leadline/leadline/workspace"
)

// rig is a workspace with senders and sequences, the services, a
// sandbox network and a runner, on one database and a fake clock.
type rig struct {
	t       testing.TB
	db      *db.DB
	clock   *apikit.FakeClock
	p       apikit.Principal
	ws      *workspace.Service
	leads   *leads.Service
	senders *senders.Service
	seqs    *sequences.Service
	svc     *enrollments.Service
	net     *sandbox.Network
	runner  *engine.Runner
	pl      *platform.Platform
	ids     map[string]string // senders, sequences, clients by name
}

// monday is 2 November 2026, 07:00 UTC: 08:00 in Berlin, before work.
var monday = time.Date(2026, 11, 2, 7, 0, 0, 0, time.UTC)

const engineSetup = `workspaces:
  - name: acme
    timezone: Europe/Berlin
    members: [{email: owner@acme.test, role: owner}]
    clients: [Globex, Initech]
    blacklist: {companies: [Umbrella]}
    senders:
      # Spacing is off here, so that a test sees several actions of a
      # sender at one moment; guards_test.go holds the guards.
      - {name: anna, channel: linkedin, client: Globex, premium: true, caps: {invite: 3, profile_view: 10, message: 10}, spacing: {min: 0s, max: 0s}}
      - {name: mail, channel: email, address: sales@acme.test, caps: {email: 5}, spacing: {min: 0s, max: 0s}}
      - {name: ben, channel: linkedin, client: Globex, spacing: {min: 0s, max: 0s}}
    sequences:
      - name: Berlin CTOs
        client: Globex
        senders: [anna, mail]
        steps:
          - {id: visit, type: profile_view}
          - {id: invite, type: invite, note: "Hi {{first_name}}"}
          - {id: accepted, type: condition, if: invite_accepted, within_days: 7, then: hello, else: gap}
          - {id: hello, type: message, body: "Thanks, {{first_name|there}}!", next: end}
          - {id: gap, type: wait, days: 1, working_days: true}
          - {id: mail, type: email, subject: "{{company|Your team}} and us", body: "Hello {{first_name|there}}"}
      - name: Plain
        client: Globex
        senders: [anna]
        steps:
          - {id: visit, type: profile_view}
      - name: Notes
        client: Globex
        senders: [ben]
        steps:
          - {id: invite, type: invite, note: "Hi {{first_name}}"}
      - name: Fallback
        client: Globex
        senders: [ben]
        steps:
          - {id: invite, type: invite, note: "Hi {{first_name}}", note_fallback: without_note}
      - name: Spread
        client: Globex
        senders: [anna, ben]
        steps:
          - {id: visit, type: profile_view}
`

// newEngine sets up the engine's world on d: the workspace, its clients
// and blacklist, and of engineSetup's senders and sequences only those
// named in only (all when none is) with the senders their sequences use,
// plus the sequences of extra (the test's own, kept whole).
func newEngine(t testing.TB, d *db.DB, extra string, only ...string) *rig {
	t.Helper()
	ctx := context.Background()
	clock := apikit.NewFakeClock(monday)
	f, err := setup.Decode(strings.NewReader(engineSetup + extra))
	if err != nil {
		t.Fatal(err)
	}
	if len(only) > 0 {
		base, err := setup.Decode(strings.NewReader(engineSetup))
		if err != nil {
			t.Fatal(err)
		}
		w, ours := &f.Workspaces[0], map[string]bool{}
		for _, q := range base.Workspaces[0].Sequences {
			ours[q.Name] = true
		}
		keep := map[string]bool{}
		for _, name := range only {
			keep[name] = true
		}
		w.Sequences = slices.DeleteFunc(w.Sequences, func(q sequences.Spec) bool { return ours[q.Name] && !keep[q.Name] })
		for _, q := range w.Sequences {
			for _, s := range q.Senders {
				keep[s] = true
			}
		}
		w.Senders = slices.DeleteFunc(w.Senders, func(s senders.Spec) bool { return !keep[s.Name] })
	}
	if _, err := setup.Apply(ctx, d, clock, secret.TestKey(), f); err != nil {
		t.Fatal(err)
	}
	pl := platform.New(platform.Config{DB: d, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	e := &rig{t: t, db: d, clock: clock, pl: pl, ids: map[string]string{}}
	e.ws, e.leads, e.senders, e.seqs, e.svc = pl.Workspaces, pl.Leads, pl.Senders, pl.Sequences, pl.Enrollments
	e.net = sandbox.New(1, clock, sandbox.Rates{})
	pl.UseTransports(map[string]senders.Transport{senders.TransportSandbox: e.net})
	e.runner = pl.Runner()
	w, err := e.ws.ByName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	e.p = apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}
	all, _ := e.senders.All(ctx, w.ID)
	for _, s := range all {
		e.ids[s.Name] = s.ID
		e.net.Register(s)
	}
	var seqs []struct{ ID, Name string }
	if err := d.NewSelect().Table("sequences").Column("id", "name").Where("workspace_id = ?", w.ID).Scan(ctx, &seqs); err != nil {
		t.Fatal(err)
	}
	for _, q := range seqs {
		e.ids[q.Name] = q.ID
	}
	c, _ := e.ws.Catalog(ctx, e.p)
	for _, n := range c.Clients {
		e.ids[n.Name] = n.ID
	}
	return e
}

// lead creates a lead of Globex with a LinkedIn id and an email, with the
// fields in extra.
func (e *rig) lead(name string, extra map[string]any) string {
	e.t.Helper()
	slug := strings.ToLower(strings.ReplaceAll(name, " ", "."))
	if slug == "" {
		slug = "anonymous"
	}
	in := leads.LeadInput{Name: ptr(name), LinkedInID: ptr("li-" + slug), EmailWork: ptr(slug + "@example.test"), ClientID: ptr(e.ids["Globex"])}
	for k, v := range extra {
		switch k {
		case "company":
			in.Company = ptr(v.(string))
		case "client_id":
			in.ClientID = ptr(v.(string))
		case "no_email":
			in.EmailWork = nil
		case "no_linkedin":
			in.LinkedInID = nil
		}
	}
	res, err := e.leads.Upsert(context.Background(), e.p, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Lead.ID
}

func ptr[T any](v T) *T { return &v }

func (e *rig) preview(seq string, p apikit.Principal, ids ...string) *enrollments.Preview {
	e.t.Helper()
	pv, err := e.svc.Preview(context.Background(), p, enrollments.EnrollInput{SequenceID: e.ids[seq], LeadIDs: ids})
	if err != nil {
		e.t.Fatal(err)
	}
	return pv
}

func reasons(ex []enrollments.Exclusion) map[string]string {
	out := map[string]string{}
	for _, x := range ex {
		out[x.LeadID] = x.Reason
	}
	return out
}

func (e *rig) activate(name string) {
	e.t.Helper()
	if err := e.seqs.ActivateByName(context.Background(), e.p.WorkspaceID, name); err != nil {
		e.t.Fatal(err)
	}
}

func (e *rig) enrol(seq string, ids ...string) *enrollments.CommitResult {
	e.t.Helper()
	res, err := e.svc.Commit(context.Background(), e.p, enrollments.EnrollInput{SequenceID: e.ids[seq], LeadIDs: ids, Confirm: true})
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// due activates seq, enrols n new leads in it and sets the clock to a
// moment in the senders' schedules, when every enrollment is due; it
// returns the leads' ids.
func (e *rig) due(seq string, n int) []string {
	e.t.Helper()
	e.activate(seq)
	var ids []string
	for i := range n {
		ids = append(ids, e.lead(fmt.Sprintf("Lead %03d", i), nil))
	}
	e.enrol(seq, ids...)
	e.clock.Set(monday.Add(2 * time.Hour))
	return ids
}

// runUntil runs the runner on simulated time until the clock reaches end,
// and returns how many enrollment runs happened.
func (e *rig) runUntil(end time.Time) int {
	e.t.Helper()
	runs, err := simulate.Until(context.Background(), e.runner, e.clock, end, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return runs
}

func (e *rig) enrollment(id string) enrollments.Enrollment {
	e.t.Helper()
	page, err := e.svc.List(context.Background(), e.p, enrollments.Filter{LeadID: id, Limit: 10})
	if err != nil || len(page.Data) == 0 {
		e.t.Fatalf("enrollment of lead %s: %v", id, err)
	}
	return page.Data[0]
}

// kinds returns the event kinds of a lead, oldest first.
func (e *rig) kinds(leadID string) []string {
	e.t.Helper()
	var out []string
	if err := e.db.NewSelect().Table("events").Column("kind").Where("lead_id = ?", leadID).OrderExpr("created_at, id").Scan(context.Background(), &out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *rig) noViolations() {
	e.t.Helper()
	if v := e.net.Violations(); len(v) > 0 {
		e.t.Fatalf("%d violations, first: %+v", len(v), v[0])
	}
}
