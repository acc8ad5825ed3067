package engine

import (
	"context"
	"time"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
)

// task runs a task step: it opens the step's task the first time and waits
// until the task is done or skipped, then moves on.
// The title is rendered with the lead's variables; one without a value
// (and no fallback) is left out rather than holding the task back.
func (r *Runner) task(ctx context.Context, e *enrollments.Enrollment, q *sequences.Sequence, step sequences.Step, lead *leads.Lead, now time.Time) error {
	title, _, err := sequences.Render(step.Title, enrollments.VarsOf(lead))
	if err != nil {
		title = step.Title
	}
	t, err := r.svc.tasks.Open(ctx, tasks.Task{WorkspaceID: e.WorkspaceID, ClientID: e.ClientID, LeadID: e.LeadID, EnrollmentID: e.ID,
		SequenceID: e.SequenceID, StepID: step.ID, StepStartedAt: e.StepStartedAt, Title: title,
		DueAt: e.StepStartedAt.AddDate(0, 0, step.DueInDays)})
	if err != nil {
		return err
	}
	switch {
	case t.Status != tasks.Open:
		return r.svc.enrollments.Advance(ctx, e, q, step, q.After(step), now)
	case now.Before(t.DueAt):
		due := t.DueAt
		e.Wait(enrollments.WaitTaskDue, &due)
	default:
		e.Wait(enrollments.WaitTasksPending, nil)
	}
	return nil
}

// Tasks is what the runner needs of the tasks area: a task step opens its
// task.
type Tasks interface {
	// Open returns the task of t's visit of its step, creating it the
	// first time, in the transaction ctx carries. Returns only the
	// database's errors.
	Open(ctx context.Context, t tasks.Task) (*tasks.Task, error)
}
