package tasks_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/workspace"
)

const file = `workspaces:
  - name: acme
    timezone: Europe/Berlin
    members: [{email: owner@acme.test, role: owner}]
    clients: [Globex, Initech]
    senders:
      - {name: anna, channel: linkedin, client: Globex}
    sequences:
      - name: Call
        client: Globex
        senders: [anna]
        steps:
          - {id: call, type: task, title: "Call {{first_name}}", due_in_days: 1}
          - {id: visit, type: profile_view}
`

// TestTasks: a task step opens one task per visit; the task is visible
// only within the key's client scope; completing it records the outcome
// once, moves the enrollment on, and refuses a second completion or an
// outcome other than done or skipped.
func TestTasks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		pl, clock, w := start(t, d, file)
		owner := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}
		cat, err := pl.Workspaces.Catalog(ctx, owner)
		is.NoErr(err)
		clients := map[string]string{}
		for _, c := range cat.Clients {
			clients[c.Name] = c.ID
		}
		name, li := "Ann Lee", "li-ann"
		lead, err := pl.Leads.Upsert(ctx, owner, leads.LeadInput{Name: &name, LinkedInID: &li, ClientID: ptr(clients["Globex"])})
		is.NoErr(err)
		is.NoErr(pl.Sequences.ActivateByName(ctx, w.ID, "Call"))
		q, err := pl.Sequences.ByName(ctx, w.ID, "Call")
		is.NoErr(err)
		_, err = pl.Enrollments.Commit(ctx, owner, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: []string{lead.Lead.ID}, Confirm: true})
		is.NoErr(err)
		net := sandbox.New(1, clock, sandbox.Rates{})
		pl.UseTransports(map[string]senders.Transport{senders.TransportSandbox: net})
		runner := pl.Runner()
		_, err = runner.Tick(ctx)
		is.NoErr(err)
		_, err = runner.Tick(ctx) // a second look opens no second task
		is.NoErr(err)

		page, err := pl.Tasks.List(ctx, owner, tasks.Filter{Limit: 10})
		is.NoErr(err)
		is.Equal(page.Total, 1)
		task := page.Data[0]
		is.Equal(task.Title, "Call Ann")
		is.Equal(task.Status, tasks.Open)
		is.True(task.DueAt.Equal(clock.Now().AddDate(0, 0, 1)))

		initech := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleMember, ClientIDs: []string{clients["Initech"]}}
		_, err = pl.Tasks.Visible(ctx, initech, task.ID)
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
		_, err = pl.Tasks.Complete(ctx, initech, task.ID, tasks.CompleteInput{Outcome: tasks.Done})
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
		_, err = pl.Tasks.Complete(ctx, owner, task.ID, tasks.CompleteInput{Outcome: "maybe"})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)

		done, err := pl.Tasks.Complete(ctx, owner, task.ID, tasks.CompleteInput{Outcome: tasks.Done, Note: "Spoke to Ann.\nCall back in May."})
		is.NoErr(err)
		is.Equal(done.Status, tasks.Done)
		is.Equal(*done.Note, "Spoke to Ann.\nCall back in May.")
		_, err = pl.Tasks.Complete(ctx, owner, task.ID, tasks.CompleteInput{Outcome: tasks.Skipped})
		is.Equal(apikit.ErrorCode(err), apikit.EConflict)
		es, err := pl.Enrollments.ForLead(ctx, w.ID, lead.Lead.ID)
		is.NoErr(err)
		is.Equal(es[0].StepID, "visit") // moved on in the completion's transaction
	})
}

func ptr[T any](v T) *T { return &v }

// start applies the setup file on d and returns the platform on it, its
// clock (10:00 in Berlin, a Monday) and the workspace acme.
func start(t *testing.T, d *db.DB, file string) (*platform.Platform, *apikit.FakeClock, *workspace.Workspace) {
	t.Helper()
	ctx := context.Background()
	clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	f, err := setup.Decode(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Apply(ctx, d, clock, secret.TestKey(), f); err != nil {
		t.Fatal(err)
	}
	pl := platform.New(platform.Config{DB: d, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	w, err := pl.Workspaces.ByName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	return pl, clock, w
}

const twoMembers = `workspaces:
  - name: acme
    timezone: Europe/Berlin
    members: [{email: owner@acme.test, role: owner}, {email: bea@acme.test, role: member}, {email: cy@acme.test, role: client_viewer},
      {email: dee@acme.test, role: member}]
    clients: [Globex]
    senders:
      - {name: anna, channel: linkedin, client: Globex}
    sequences:
      - name: Call
        client: Globex
        senders: [anna]
        steps:
          - {id: call, type: task, title: "Call {{first_name}}", due_in_days: 1}
`

// TestTaskAssignee: a task step's task goes to the assignee of the lead's
// thread, else to the member who enrolled the lead, else to nobody, and
// never to a member who left;
// SetAssignee gives it to a member or nobody, refuses an id that is not a
// member and a task out of the key's scope, and the assignee filter
// (a member, none) narrows the list.
func TestTaskAssignee(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		pl, clock, w := start(t, d, twoMembers)
		owner := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}
		ms, err := pl.Workspaces.MemberList(ctx, owner)
		is.NoErr(err)
		member := map[string]string{}
		for _, m := range ms {
			member[m.Email] = m.ID
		}
		owner.MemberID = member["owner@acme.test"]
		cat, err := pl.Workspaces.Catalog(ctx, owner)
		is.NoErr(err)
		globex := cat.Clients[0].ID
		lead := func(name string) string {
			li := "li-" + name
			l, err := pl.Leads.Upsert(ctx, owner, leads.LeadInput{Name: &name, LinkedInID: &li, ClientID: &globex})
			is.NoErr(err)
			return l.Lead.ID
		}
		threaded, enrolled, nobody := lead("Ann Lee"), lead("Ben Ray"), lead("Cat Orr")
		leftThread, leftEnroller := lead("Dan Fox"), lead("Eve Gil")
		// Ann's conversation is Bea's: her thread is assigned to Bea. Dan's
		// is Dee's, who leaves before the task is made.
		anna, err := pl.Senders.ByName(ctx, w.ID, "anna")
		is.NoErr(err)
		now := clock.Now()
		for lead, to := range map[string]string{threaded: "bea@acme.test", leftThread: "dee@acme.test"} {
			th, err := inbox.NewBunStore(d).Conversation(ctx, &inbox.Thread{ID: apikit.NewID(), WorkspaceID: w.ID, ClientID: &globex, SenderID: anna.ID,
				LeadID: lead, Channel: senders.LinkedIn, LastMessageAt: now, CreatedAt: now, UpdatedAt: now})
			is.NoErr(err)
			_, err = pl.Inbox.SetAssignee(ctx, owner, th.ID, ptr(member[to]))
			is.NoErr(err)
		}

		is.NoErr(pl.Sequences.ActivateByName(ctx, w.ID, "Call"))
		q, err := pl.Sequences.ByName(ctx, w.ID, "Call")
		is.NoErr(err)
		// The owner enrols Ann and Ben, as the API and the console do (the
		// principal in the context); Cat is enrolled by a command.
		_, err = pl.Enrollments.Commit(apikit.WithPrincipal(ctx, owner), owner, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: []string{threaded, enrolled, leftThread}, Confirm: true})
		is.NoErr(err)
		// Dee enrols Eve, then leaves (the setup file says active: false).
		dee := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleMember, MemberID: member["dee@acme.test"]}
		_, err = pl.Enrollments.Commit(apikit.WithPrincipal(ctx, dee), dee, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: []string{leftEnroller}, Confirm: true})
		is.NoErr(err)
		f, err := setup.Decode(strings.NewReader(strings.Replace(twoMembers, "{email: dee@acme.test, role: member}", "{email: dee@acme.test, role: member, active: false}", 1)))
		is.NoErr(err)
		_, err = setup.Apply(ctx, d, clock, secret.TestKey(), f)
		is.NoErr(err)
		_, err = pl.Enrollments.Commit(ctx, apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: []string{nobody}, Confirm: true})
		is.NoErr(err)
		pl.UseTransports(map[string]senders.Transport{senders.TransportSandbox: sandbox.New(1, clock, sandbox.Rates{})})
		_, err = pl.Runner().Tick(ctx)
		is.NoErr(err)

		page, err := pl.Tasks.List(ctx, owner, tasks.Filter{Limit: 10})
		is.NoErr(err)
		is.Equal(page.Total, 5)
		byLead := map[string]tasks.Task{}
		for _, tk := range page.Data {
			byLead[tk.LeadID] = tk
		}
		is.Equal(apikit.Deref(byLead[threaded].AssigneeID), member["bea@acme.test"])
		is.Equal(apikit.Deref(byLead[enrolled].AssigneeID), member["owner@acme.test"])
		is.Equal(byLead[nobody].AssigneeID, nil)
		is.Equal(apikit.Deref(byLead[leftThread].AssigneeID), member["owner@acme.test"]) // Dee left: her enroller's
		is.Equal(byLead[leftEnroller].AssigneeID, nil)                                   // Dee left: nobody's
		evs, _, err := pl.Log.ForLead(ctx, w.ID, enrolled, 10, 0)
		is.NoErr(err)
		created := false
		for _, e := range evs {
			if e.Kind == tasks.EventCreated {
				created = true
				is.Equal(e.Data["assignee_id"], member["owner@acme.test"])
			}
		}
		is.True(created)

		count := func(assignee string) int {
			t.Helper()
			p, err := pl.Tasks.List(ctx, owner, tasks.Filter{AssigneeID: assignee, Status: tasks.Open, Limit: 10})
			is.NoErr(err)
			return p.Total
		}
		is.Equal(count(member["bea@acme.test"]), 1)
		is.Equal(count("none"), 2)
		_, err = pl.Tasks.List(ctx, owner, tasks.Filter{AssigneeID: "me", Limit: 10})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)

		task := byLead[nobody]
		_, err = pl.Tasks.SetAssignee(ctx, owner, task.ID, ptr(apikit.NewID()))
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		other := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleMember, ClientIDs: []string{apikit.NewID()}}
		_, err = pl.Tasks.SetAssignee(ctx, other, task.ID, nil)
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
		got, err := pl.Tasks.SetAssignee(ctx, owner, task.ID, ptr(member["cy@acme.test"]))
		is.NoErr(err)
		is.Equal(*got.AssigneeID, member["cy@acme.test"])
		is.Equal(count("none"), 1)
		got, err = pl.Tasks.SetAssignee(ctx, owner, task.ID, nil)
		is.NoErr(err)
		is.Equal(got.AssigneeID, nil)
		is.Equal(count("none"), 2)
	})
}
