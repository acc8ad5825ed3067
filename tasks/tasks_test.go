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
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/tasks"
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
		clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)) // 10:00 in Berlin, a Monday
		f, err := setup.Decode(strings.NewReader(file))
		is.NoErr(err)
		_, err = setup.Apply(ctx, d, clock, secret.TestKey(), f)
		is.NoErr(err)
		pl := platform.New(platform.Config{DB: d, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
		w, err := pl.Workspaces.ByName(ctx, "acme")
		is.NoErr(err)
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
