package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/client"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/apitest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/tasks"
)

// started is the API on d with a manager's client, the key's context and
// its clients' ids by name.
func started(t *testing.T, d *db.DB) (*apitest.Env, *client.Client, *server.Me, map[string]string) {
	t.Helper()
	env := apitest.Start(t, d, server.RateLimits{})
	c := newClient(env, &fakeTime{env: env})
	me, err := c.GetMe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, n := range me.Clients {
		ids[n.Name] = n.ID
	}
	return env, c, me, ids
}

// TestTasksThroughTheClient: a task step's task goes to the member whose
// key enrolled the lead; the client lists a member's tasks and unassigned
// ones, reassigns and unassigns a task, and completes it.
func TestTasksThroughTheClient(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		env, c, me, ids := started(t, d)
		pl := env.Platform
		_, err := pl.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: me.Workspace.ID, Clients: ids}, []sequences.Spec{{Name: "Calls", Client: "Globex",
			Senders: []string{"anna"}, Steps: []sequences.Step{{ID: "call", Type: "task", Title: "Call {{first_name}}", DueInDays: 1}}}})
		is.NoErr(err)
		q, err := pl.Sequences.ByName(ctx, me.Workspace.ID, "Calls")
		is.NoErr(err)
		_, err = c.ActivateSequence(ctx, q.ID)
		is.NoErr(err)
		lead, err := c.UpsertLead(ctx, leads.LeadInput{Name: new("Ann Lee"), LinkedInID: new("ann"), ClientID: new(ids["Globex"])})
		is.NoErr(err)
		_, err = c.EnrolLeads(ctx, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: []string{lead.Data.ID}, Confirm: true})
		is.NoErr(err)
		_, err = pl.Runner().Tick(ctx)
		is.NoErr(err)

		owner := me.Member.ID
		mine, err := c.ListTasks(ctx, client.TasksParams{AssigneeID: owner, Status: "open"})
		is.NoErr(err)
		is.Equal(mine.Total, 1) // the key's member enrolled the lead
		task := mine.Data[0]
		is.Equal(*task.AssigneeID, owner)

		got, err := c.SetTaskAssignee(ctx, task.ID, nil)
		is.NoErr(err)
		is.Equal(got.AssigneeID, nil)
		none, err := c.ListTasks(ctx, client.TasksParams{AssigneeID: "none"})
		is.NoErr(err)
		is.Equal(none.Total, 1)
		_, err = c.SetTaskAssignee(ctx, task.ID, new("0193a000-0000-7000-8000-000000000000"))
		is.True(errors.Is(err, client.ErrPayloadInvalid))
		got, err = c.SetTaskAssignee(ctx, task.ID, &owner)
		is.NoErr(err)
		is.Equal(*got.AssigneeID, owner)
		done, err := c.CompleteTask(ctx, task.ID, tasks.CompleteInput{Outcome: tasks.Done})
		is.NoErr(err)
		is.Equal(*done.AssigneeID, owner)
		mine, err = c.ListTasks(ctx, client.TasksParams{AssigneeID: owner, Status: "open"})
		is.NoErr(err)
		is.Equal(mine.Total, 0)
	})
}
