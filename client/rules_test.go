package client_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/client"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sequences"
)

// TestSequenceRulesThroughTheClient: the client reads a sequence's rules
// as the sequences area's types, and a thread's rule runs with their
// outcomes.
func TestSequenceRulesThroughTheClient(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		env, c, me, ids := started(t, d)
		pl := env.Platform
		booked := &sequences.Rule{Stage: "Contacted", Task: "Prepare the meeting", Assign: "sdr@acme.test"}
		_, err := pl.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: me.Workspace.ID, Clients: ids}, []sequences.Spec{{Name: "Mail", Client: "Globex",
			Senders: []string{"globex-mail"}, Steps: []sequences.Step{{ID: "hi", Type: "email", Subject: "Hello", Body: "Hi {{first_name|there}}"}},
			OnReply: map[string]sequences.Rule{"interested": {Tag: "vip"}}, OnMeetingBooked: booked}})
		is.NoErr(err)
		q, err := pl.Sequences.ByName(ctx, me.Workspace.ID, "Mail")
		is.NoErr(err)
		got, err := c.GetSequence(ctx, q.ID)
		is.NoErr(err)
		is.Equal(got.OnReply, map[string]sequences.Rule{"interested": {Tag: "vip"}})
		is.Equal(*got.OnMeetingBooked, *booked)

		_, err = c.ActivateSequence(ctx, q.ID)
		is.NoErr(err)
		lead, err := c.UpsertLead(ctx, leads.LeadInput{Name: new("Ann Lee"), EmailWork: new("ann@example.test"), ClientID: new(ids["Globex"])})
		is.NoErr(err)
		_, err = c.EnrolLeads(ctx, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: []string{lead.Data.ID}, Confirm: true})
		is.NoErr(err)
		_, err = pl.Runner().Tick(ctx)
		is.NoErr(err)
		_, err = pl.Inbound.Push(ctx, me.Workspace.ID, bookings.CalCom, "bk-1", engine.Event{Booking: &bookings.Booking{Provider: bookings.CalCom,
			BookingID: "bk-1", LeadID: &lead.Data.ID, StartsAt: env.Clock.Now().AddDate(0, 0, 2)}})
		is.NoErr(err)
		_, err = pl.Runner().Tick(ctx)
		is.NoErr(err)

		threads, err := c.ListThreads(ctx, client.ThreadsParams{LeadID: lead.Data.ID})
		is.NoErr(err)
		is.Equal(threads.Total, 1)
		v, err := c.GetThread(ctx, threads.Data[0].ID)
		is.NoErr(err)
		is.Equal(len(v.Rules), 1)
		run := v.Rules[0]
		is.Equal(run.Rule, sequences.MeetingBooked)
		is.True(run.BookingID != nil)
		is.Equal(len(run.Outcomes), 3)
		for _, o := range run.Outcomes {
			is.Equal(o.Status, sequences.OutcomeDone)
		}
		is.Equal(run.Outcomes[2].Field, "task")
		task, err := c.ListTasks(ctx, client.TasksParams{LeadID: lead.Data.ID})
		is.NoErr(err)
		is.Equal(task.Total, 1)
		is.Equal(task.Data[0].ID, run.Outcomes[2].Ref)
		is.Equal(task.Data[0].Title, "Prepare the meeting")
	})
}
