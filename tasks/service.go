package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// EventLog is what the tasks area needs of the activity log.
type EventLog = events.Emitter

// Members is what the tasks area needs of the workspace area.
type Members interface {
	// IsMember reports whether memberID is an active member of the
	// workspace (false for an id that is not a valid id). Returns only
	// the database's errors.
	IsMember(ctx context.Context, workspaceID, memberID string) (bool, error)
}

// Service holds the task rules.
type Service struct {
	db       *db.DB
	store    Store
	clock    apikit.Clock
	members  Members
	log      EventLog
	finished []func(ctx context.Context, t *Task) error
	owners   []Owner
}

// NewService returns the tasks service on d.
func NewService(d *db.DB, clock apikit.Clock, members Members, log EventLog) *Service {
	return &Service{db: d, store: NewBunStore(d), clock: clock, members: members, log: log}
}

// AssignWith sets who a task step's new task goes to: the first member
// owners name, in order (none: nobody). The platform gives the lead's
// thread's assignee, then the member who enrolled the lead, each only
// while still a member.
func (svc *Service) AssignWith(owners ...Owner) { svc.owners = owners }

// OnFinish registers fn to run in the transaction that completes a task,
// with the task's new status, before the task is written: the enrollments
// area moves the task's enrollment on.
func (svc *Service) OnFinish(fn func(ctx context.Context, t *Task) error) {
	svc.finished = append(svc.finished, fn)
}

// Open returns the task of t's visit of its step, creating it (and its
// task.created event) the first time. It joins the transaction in ctx.
func (svc *Service) Open(ctx context.Context, t Task) (*Task, error) {
	now := db.Now(ctx, svc.clock)
	t.ID, t.Status, t.CreatedAt, t.UpdatedAt = apikit.NewID(), Open, now, now
	created, err := svc.store.Insert(ctx, &t, svc.owners...)
	if err != nil {
		return nil, err
	}
	if !created {
		return svc.store.ForVisit(ctx, t.EnrollmentID, t.StepID, t.StepStartedAt)
	}
	return &t, svc.log.EmitMany(ctx, []events.Event{svc.event(&t, EventCreated, "", map[string]any{
		"task_id": t.ID, "title": t.Title, "due_at": t.DueAt, "assignee_id": t.AssigneeID})})
}

func (svc *Service) event(t *Task, kind, memberID string, data map[string]any) events.Event {
	return events.Event{WorkspaceID: t.WorkspaceID, LeadID: t.LeadID, SequenceID: t.SequenceID, EnrollmentID: t.EnrollmentID,
		ClientID: apikit.Deref(t.ClientID), StepID: t.StepID, Kind: kind, MemberID: memberID, Data: data}
}

// Visible returns the task with id if the principal may see it.
// Returns E_NOT_FOUND if it does not exist or is outside the key's scope.
func (svc *Service) Visible(ctx context.Context, p apikit.Principal, id string) (*Task, error) {
	return db.Visible(p, "Task", id, func() (*Task, error) { return svc.store.ByID(ctx, p.WorkspaceID, id) },
		func(t *Task) *string { return t.ClientID })
}

// List returns one page of the tasks visible to the principal, the
// earliest due first.
// Returns E_PAYLOAD_INVALID for a bad page or an assignee filter that is
// neither a member id nor none, and E_FORBIDDEN for a client
// filter outside the key's scope.
func (svc *Service) List(ctx context.Context, p apikit.Principal, f Filter) (apikit.Page[Task], error) {
	if err := apikit.CheckPage(&f.Limit, f.Offset); err != nil {
		return apikit.Page[Task]{}, err
	}
	if err := apikit.CheckClientFilter(p, f.ClientID); err != nil {
		return apikit.Page[Task]{}, err
	}
	if f.AssigneeID != "" && f.AssigneeID != "none" && !apikit.ValidID(f.AssigneeID) {
		return apikit.Page[Task]{}, apikit.Invalid("assignee_id must be a member id or none.", "Send a member's uuid, or none for unassigned tasks.")
	}
	ts, total, err := svc.store.List(ctx, p.WorkspaceID, p.ClientIDs, f)
	if err != nil {
		return apikit.Page[Task]{}, err
	}
	return apikit.NewPage(ts, total, f.Limit, f.Offset), nil
}

// SetAssignee gives the task to a member of the workspace, or to nobody
// (nil), whatever its status, as threads are assigned.
// Returns E_PAYLOAD_INVALID for an id that is not an active member and
// E_NOT_FOUND if the task is not visible.
func (svc *Service) SetAssignee(ctx context.Context, p apikit.Principal, id string, assigneeID *string) (*Task, error) {
	var t *Task
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if t, err = svc.Visible(ctx, p, id); err != nil {
			return err
		}
		if err := apikit.CheckAssignee(ctx, svc.members.IsMember, p.WorkspaceID, assigneeID, "task"); err != nil {
			return err
		}
		if apikit.Deref(t.AssigneeID) == apikit.Deref(assigneeID) {
			return nil
		}
		t.AssigneeID, t.UpdatedAt = assigneeID, db.Now(ctx, svc.clock)
		if err := svc.store.SetAssignee(ctx, t); err != nil {
			return err
		}
		return svc.log.EmitMany(ctx, []events.Event{svc.event(t, EventAssigned, p.MemberID,
			map[string]any{"task_id": t.ID, "assignee_id": assigneeID})})
	})
	return t, err
}

// CompleteInput is the body of a task completion.
type CompleteInput struct {
	Outcome Status `json:"outcome" enum:"done,skipped" required:"true" doc:"done: the task was done; skipped: it was not needed. Either way the enrollment goes on to its next step."`
	Note    string `json:"note,omitempty" maxLength:"2000" text:"multiline" doc:"What was done, for the lead's timeline."`
}

// Complete closes an open task as done or skipped, and in the same
// transaction moves its enrollment on to the next step.
// Returns E_NOT_FOUND if the task is not visible, E_PAYLOAD_INVALID for an
// outcome other than done or skipped, and E_CONFLICT if it was completed
// already.
func (svc *Service) Complete(ctx context.Context, p apikit.Principal, id string, in CompleteInput) (*Task, error) {
	if err := apikit.CheckText("", in); err != nil {
		return nil, err
	}
	if in.Outcome != Done && in.Outcome != Skipped {
		return nil, apikit.Invalid(fmt.Sprintf("outcome must be done or skipped, not %q.", in.Outcome), `Send {"outcome": "done"} or {"outcome": "skipped"}.`)
	}
	var t *Task
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if t, err = svc.Visible(ctx, p, id); err != nil {
			return err
		}
		if t.Status != Open {
			return alreadyCompleted(t)
		}
		now := db.Now(ctx, svc.clock)
		t.Status, t.CompletedAt, t.UpdatedAt = in.Outcome, &now, now
		if p.MemberID != "" {
			t.CompletedBy = &p.MemberID
		}
		if in.Note != "" {
			t.Note = &in.Note
		}
		// The hooks lock the enrollment before the task row is written:
		// the runner takes the two in the same order.
		for _, fn := range svc.finished {
			if err := fn(ctx, t); err != nil {
				return err
			}
		}
		ok, err := svc.store.Finish(ctx, t)
		if err != nil {
			return err
		} else if !ok {
			return alreadyCompleted(t)
		}
		data := map[string]any{"task_id": t.ID, "outcome": string(t.Status)}
		if in.Note != "" {
			data["note"] = in.Note
		}
		return svc.log.EmitMany(ctx, []events.Event{svc.event(t, EventCompleted, p.MemberID, data)})
	})
	return t, err
}

func alreadyCompleted(t *Task) error {
	at := ""
	if t.CompletedAt != nil {
		at = " at " + t.CompletedAt.Format(time.RFC3339)
	}
	return apikit.Conflict(fmt.Sprintf("The task was completed already (%s%s).", t.Status, at),
		"Nothing to do: its enrollment has moved on. GET /v1/tasks?status=open lists the open tasks.")
}
