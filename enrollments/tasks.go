package enrollments

import (
	"context"
	"time"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
)

// Tasks is what the enrollments area needs of the tasks area.
type Tasks interface {
	Open(ctx context.Context, t tasks.Task) (*tasks.Task, error)
	OnFinish(fn func(ctx context.Context, t *tasks.Task) error)
}

// Waits at a task step: task_due until the task is due (it ends by itself
// when someone completes the task), tasks_pending once it is overdue (it
// needs someone to act).
const (
	waitTaskDue      = "task_due"
	waitTasksPending = "tasks_pending"
)

// task runs a task step: it opens the step's task the first time and waits
// until the task is done or skipped, then moves on.
// The title is rendered with the lead's variables; one without a value
// (and no fallback) is left out rather than holding the task back.
func (r *Runner) task(ctx context.Context, e *Enrollment, q *sequences.Sequence, step sequences.Step, lead *leads.Lead, now time.Time) error {
	title, _, err := sequences.Render(step.Title, varsOf(lead))
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
		return r.advance(ctx, e, q, step, q.After(step), now)
	case now.Before(t.DueAt):
		due := t.DueAt
		e.wait(waitTaskDue, &due)
	default:
		e.wait(waitTasksPending, nil)
	}
	return nil
}

// taskFinished moves the enrollment of a completed task on, when it is
// active and still at the task's visit of its step. A paused enrollment
// finds the finished task when it is resumed; an ended one stays as it is.
func (svc *Service) taskFinished(ctx context.Context, t *tasks.Task) error {
	e, err := svc.store.ByID(ctx, t.WorkspaceID, t.EnrollmentID)
	if db.IsNoRows(err) {
		return nil
	} else if err != nil {
		return err
	}
	if e.Status != Active || e.StepID != t.StepID || !e.StepStartedAt.Equal(t.StepStartedAt) {
		return nil
	}
	q, err := svc.sequences.ByID(ctx, e.WorkspaceID, e.SequenceID)
	if err != nil {
		return err
	}
	step, ok := q.StepByID(t.StepID)
	if !ok {
		return nil
	}
	now := svc.clock.Now()
	r := &Runner{svc: svc}
	if err := r.advance(ctx, e, q, step, q.After(step), now); err != nil {
		return err
	}
	e.UpdatedAt = now
	return svc.store.Save(ctx, e)
}
