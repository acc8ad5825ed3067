// Package tasks holds manual tasks: the work a sequence's task step asks a
// member to do (call the lead, write a personal note). An enrollment waits
// at the step until its task is done or skipped.
package tasks

import (
	"time"

	"github.com/uptrace/bun"
)

// Status is a task's state.
type Status string

// The statuses: open until a member completes it as done or skipped.
const (
	Open    Status = "open"
	Done    Status = "done"
	Skipped Status = "skipped"
)

// Activity-log kinds of task changes, each on the lead's timeline.
const (
	EventCreated   = "task.created"
	EventCompleted = "task.completed"
	EventAssigned  = "task.assigned"
)

// Task is one manual task for one lead.
type Task struct {
	bun.BaseModel `bun:"table:tasks,alias:t"`

	ID            string     `bun:"id,pk" json:"id" format:"uuid"`
	WorkspaceID   string     `bun:"workspace_id" json:"-"`
	ClientID      *string    `bun:"client_id" json:"client_id" format:"uuid"`
	LeadID        string     `bun:"lead_id" json:"lead_id" format:"uuid"`
	EnrollmentID  string     `bun:"enrollment_id" json:"enrollment_id" format:"uuid"`
	SequenceID    string     `bun:"sequence_id" json:"sequence_id" format:"uuid"`
	StepID        string     `bun:"step_id" json:"step_id" doc:"The sequence's task step that created it."`
	StepStartedAt time.Time  `bun:"step_started_at" json:"-"`
	Title         string     `bun:"title" json:"title"`
	DueAt         time.Time  `bun:"due_at" json:"due_at"`
	Status        Status     `bun:"status" json:"status" enum:"open,done,skipped"`
	AssigneeID    *string    `bun:"assignee_id" json:"assignee_id" format:"uuid" doc:"The member whose task it is; null: nobody's. A task step gives it to the member who owns the conversation (the lead's thread's assignee, else the member who enrolled the lead, skipping a member who left); PUT /v1/tasks/{id}/assignee changes it."`
	Note          *string    `bun:"note" json:"note" doc:"What the member noted when completing it."`
	CompletedBy   *string    `bun:"completed_by" json:"completed_by" format:"uuid" doc:"The member who completed it."`
	CompletedAt   *time.Time `bun:"completed_at" json:"completed_at"`
	CreatedAt     time.Time  `bun:"created_at" json:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at" json:"updated_at"`
}

// Overdue reports whether the task is still open past its due time.
func (t *Task) Overdue(now time.Time) bool { return t.Status == Open && !now.Before(t.DueAt) }
