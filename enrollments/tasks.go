package enrollments

import (
	"context"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/tasks"
)

// Tasks is what the enrollments area needs of the tasks area.
type Tasks interface {
	// Open returns the task of t's visit of its step, creating it the
	// first time, in the transaction ctx carries. Returns only the
	// database's errors.
	Open(ctx context.Context, t tasks.Task) (*tasks.Task, error)
}

// Waits at a task step: task_due until the task is due (it ends by itself
// when someone completes the task), tasks_pending once it is overdue (it
// needs someone to act).
const (
	WaitTaskDue      = "task_due"
	WaitTasksPending = "tasks_pending"
)

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
	now := db.Now(ctx, svc.clock)
	if err := svc.Advance(ctx, e, q, step, q.After(step), now); err != nil {
		return err
	}
	e.UpdatedAt = now
	return svc.store.Save(ctx, e)
}

// TaskFinished is the enrollments' hook on a task's completion
// (tasks.Service.OnFinish): the task step's enrollment moves on, in the
// same transaction.
func (svc *Service) TaskFinished(ctx context.Context, t *tasks.Task) error {
	return svc.taskFinished(ctx, t)
}
