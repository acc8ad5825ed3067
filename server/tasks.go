package server

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/tasks"
)

type listTasksInput struct {
	Status     string    `query:"status" enum:"open,done,skipped"`
	AssigneeID string    `query:"assignee_id" doc:"A member id, or none for unassigned tasks."`
	SequenceID string    `query:"sequence_id" format:"uuid"`
	LeadID     string    `query:"lead_id" format:"uuid"`
	ClientID   string    `query:"client_id" format:"uuid"`
	DueBefore  time.Time `query:"due_before" doc:"Only tasks due before this time (RFC 3339)."`
	Limit      int       `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Offset     int       `query:"offset" minimum:"0" default:"0"`
}

type taskIDInput struct {
	ID string `path:"id" format:"uuid" doc:"Task id."`
}

type taskAssigneeInput struct {
	ID   string `path:"id" format:"uuid" doc:"Task id."`
	Body struct {
		AssigneeID *string `json:"assignee_id" required:"true" nullable:"true" format:"uuid" doc:"A member of the workspace, or null to unassign."`
	}
}

type completeTaskInput struct {
	ID   string `path:"id" format:"uuid" doc:"Task id."`
	Body tasks.CompleteInput
}

func (s *Server) registerTasks() {
	tags := []string{"Tasks"}
	register(s, huma.Operation{
		OperationID: "list-tasks", Method: http.MethodGet, Path: "/v1/tasks", Tags: tags,
		Summary: "List tasks",
		Description: "Manual tasks that sequences' task steps created, the earliest due first. A client-scoped key sees only its clients' tasks. " +
			"`status=open&due_before=<now>` lists the overdue ones, which hold their enrollments (why-not-sending says tasks_pending); " +
			"`assignee_id=<member id>&status=open` a member's to-do list, `assignee_id=none` the tasks nobody has.",
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *listTasksInput) (*pageOutput[tasks.Task], error) {
		f := tasks.Filter{Status: tasks.Status(in.Status), AssigneeID: in.AssigneeID, SequenceID: in.SequenceID, LeadID: in.LeadID, ClientID: in.ClientID,
			Limit: in.Limit, Offset: in.Offset}
		if !in.DueBefore.IsZero() {
			f.DueBefore = &in.DueBefore
		}
		page, err := s.tasks.List(ctx, p, f)
		if err != nil {
			return nil, err
		}
		return &pageOutput[tasks.Task]{Body: page}, nil
	})

	register(s, huma.Operation{
		OperationID: "get-task", Method: http.MethodGet, Path: "/v1/tasks/{id}", Tags: tags,
		Summary: "Get a task", Errors: []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *taskIDInput) (*dataOutput[*tasks.Task], error) {
		return dataFrom(s.tasks.Visible(ctx, p, in.ID))
	})

	register(s, huma.Operation{
		OperationID: "complete-task", Method: http.MethodPost, Path: "/v1/tasks/{id}/complete", Tags: tags,
		Summary: "Complete a task",
		Description: "Closes an open task as done or skipped and moves its enrollment on to the next step in the same transaction " +
			"(a paused enrollment moves on when resumed). A task completed already gives 409 E_CONFLICT.",
		Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *completeTaskInput) (*dataOutput[*tasks.Task], error) {
		return dataFrom(s.tasks.Complete(ctx, p, in.ID, in.Body))
	})

	register(s, huma.Operation{
		OperationID: "set-task-assignee", Method: http.MethodPut, Path: "/v1/tasks/{id}/assignee", Tags: tags,
		Summary: "Assign a task",
		Description: "To an active member of the workspace, or to nobody with null, whatever the task's status. Another id gives 422. " +
			"A task step's task starts with the member who owns the conversation: the assignee of the lead's thread, else the member who enrolled the lead, skipping a member who left.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *taskAssigneeInput) (*dataOutput[*tasks.Task], error) {
		return dataFrom(s.tasks.SetAssignee(ctx, p, in.ID, in.Body.AssigneeID))
	})
}
