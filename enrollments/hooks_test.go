package enrollments_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
)

// held returns which of the enrollments with ids are held, in order.
func (b *bundle) held(ids ...string) []bool {
	b.t.Helper()
	out := make([]bool, len(ids))
	for i, id := range ids {
		out[i] = b.get(id).Held
	}
	return out
}

// TestSequenceStatusChanged: pausing a sequence holds its live
// enrollments (active and paused) out of the runner's due work, and
// why-not-sending says the sequence holds them; activating it releases
// them, due as before; an ended enrollment is left alone. The hook does
// the same called directly, and a draft's enrollments are released on its
// first activation.
func TestSequenceStatusChanged(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann, ben, cy, dan := b.people()
		es := b.enrol("Visit", ann, ben, cy)
		active, paused, exited := es[ann].ID, es[ben].ID, es[cy].ID
		_, err := b.svc.Pause(b.ctx, b.p, paused)
		is.NoErr(err)
		_, err = b.svc.Exit(b.ctx, b.p, exited)
		is.NoErr(err)
		st := b.svc.Store()
		due, ok, err := st.NextDue(b.ctx, monday)
		is.NoErr(err)
		is.True(ok && due.Equal(monday))

		_, err = b.pl.Sequences.Pause(b.ctx, b.p, b.ids["Visit"])
		is.NoErr(err)
		is.Equal(b.held(active, paused, exited), []bool{true, true, false})
		_, ok, err = st.NextDue(b.ctx, monday)
		is.NoErr(err)
		is.True(!ok)
		w, why := b.why("Visit")
		is.True(!w.Sending && w.NextActionAt == nil)
		is.Equal(*why["sequence_not_active"].Count, 1) // ann; ben was paused on his own

		b.later(time.Hour)
		_, err = b.pl.Sequences.Activate(b.ctx, b.p, b.ids["Visit"])
		is.NoErr(err)
		is.Equal(b.held(active, paused, exited), []bool{false, false, false})
		due, ok, err = st.NextDue(b.ctx, b.clock.Now())
		is.NoErr(err)
		is.True(ok && due.Equal(monday)) // due as before: overdue now
		w, _ = b.why("Visit")
		is.True(w.Sending)

		q, err := b.pl.Sequences.ByID(b.ctx, b.p.WorkspaceID, b.ids["Visit"])
		is.NoErr(err)
		q.Status = sequences.Paused
		is.NoErr(b.svc.SequenceStatusChanged(b.ctx, q))
		is.Equal(b.held(active, paused, exited), []bool{true, true, false})
		q.Status = sequences.Active
		is.NoErr(b.svc.SequenceStatusChanged(b.ctx, q))
		is.Equal(b.held(active, paused, exited), []bool{false, false, false})

		d := b.enrol("Draft", dan)[dan].ID
		is.Equal(b.held(d), []bool{true})
		is.NoErr(b.pl.Sequences.ActivateByName(b.ctx, b.p.WorkspaceID, "Draft"))
		is.Equal(b.held(d), []bool{false})
	})
}

// TestTaskFinished: completing the task of an enrollment's visit of a task
// step moves the enrollment on in the completion's transaction (here to
// the end: finished). A paused enrollment, an ended one, and a task of an
// earlier visit of the step leave the enrollment where it is; a task of
// an enrollment that does not exist is no error.
func TestTaskFinished(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann, ben, cy, dan := b.people()
		es := b.enrol("Visit", ann, ben, cy, dan)
		b.later(time.Hour)
		task := map[string]tasks.Task{}
		for lead, e := range es {
			e = b.change(e.ID, b.advance)
			is.Equal(e.StepID, "call")
			task[lead] = tasks.Task{WorkspaceID: e.WorkspaceID, LeadID: lead, EnrollmentID: e.ID, SequenceID: e.SequenceID,
				StepID: e.StepID, StepStartedAt: e.StepStartedAt, Title: "Call them", DueAt: e.StepStartedAt.Add(24 * time.Hour)}
		}
		open, err := b.pl.Tasks.Open(b.ctx, task[ann])
		is.NoErr(err)
		b.later(time.Hour)
		_, err = b.pl.Tasks.Complete(b.ctx, b.p, open.ID, tasks.CompleteInput{Outcome: tasks.Done})
		is.NoErr(err)
		e := b.get(es[ann].ID)
		is.Equal(e.Status, enrollments.Finished)
		is.True(same(e.EndedAt, b.clock.Now()))
		is.Equal(b.last(ann, enrollments.EventFinished).StepID, "call")
		is.Equal(b.step("Visit", "call").Done, 1)

		_, err = b.svc.Pause(b.ctx, b.p, es[ben].ID)
		is.NoErr(err)
		open, err = b.pl.Tasks.Open(b.ctx, task[ben])
		is.NoErr(err)
		_, err = b.pl.Tasks.Complete(b.ctx, b.p, open.ID, tasks.CompleteInput{Outcome: tasks.Skipped})
		is.NoErr(err)
		e = b.get(es[ben].ID)
		is.Equal([]any{e.Status, e.StepID}, []any{enrollments.Paused, "call"})

		earlier := task[cy]
		earlier.StepStartedAt = earlier.StepStartedAt.Add(-time.Minute)
		is.NoErr(b.svc.TaskFinished(b.ctx, &earlier))
		e = b.get(es[cy].ID)
		is.Equal([]any{e.Status, e.StepID}, []any{enrollments.Active, "call"})

		_, err = b.svc.Exit(b.ctx, b.p, es[dan].ID)
		is.NoErr(err)
		is.NoErr(b.svc.TaskFinished(b.ctx, ptr(task[dan])))
		is.Equal(b.get(es[dan].ID).Status, enrollments.Exited)

		gone := task[cy]
		gone.EnrollmentID = apikit.NewID()
		is.NoErr(b.svc.TaskFinished(b.ctx, &gone))
		is.Equal(b.step("Visit", "call").Done, 1) // ann's alone
	})
}
