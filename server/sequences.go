package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/sequences"
)

type listSequencesInput struct {
	ClientID string `query:"client_id" format:"uuid"`
	Status   string `query:"status" enum:"draft,active,paused"`
	Limit    int    `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Offset   int    `query:"offset" minimum:"0" default:"0"`
}

type sequenceIDInput struct {
	ID string `path:"id" format:"uuid" doc:"Sequence id."`
}

type renderSequenceInput struct {
	ID   string `path:"id" format:"uuid" doc:"Sequence id."`
	Body sequences.RenderInput
}

func (s *Server) registerSequences() {
	tags := []string{"Sequences"}
	register(s, huma.Operation{
		OperationID: "list-sequences", Method: http.MethodGet, Path: "/v1/sequences", Tags: tags,
		Summary:     "List sequences",
		Description: "The sequences visible to the key, by name, each with its steps, senders, status and problems. Sequences are built in the setup (`leadline apply`), not through the API.",
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *listSequencesInput) (*pageOutput[sequences.SequenceView], error) {
		page, err := s.sequences.List(ctx, p, sequences.Filter{ClientID: in.ClientID, Status: sequences.Status(in.Status), Limit: in.Limit, Offset: in.Offset})
		if err != nil {
			return nil, err
		}
		return &pageOutput[sequences.SequenceView]{Body: page}, nil
	})

	register(s, huma.Operation{
		OperationID: "get-sequence", Method: http.MethodGet, Path: "/v1/sequences/{id}", Tags: tags,
		Summary: "Get a sequence",
		Description: "The sequence's steps, senders and status, its rules (on_reply by intent, on_meeting_booked: what a reply or a booked meeting does " +
			"to the lead beyond stopping its enrollments), and the problems of its graph: a sequence with any problem cannot be activated. " +
			"Steps and rules are set in the setup (`leadline apply`) or the console, not through the API.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *sequenceIDInput) (*dataOutput[*sequences.SequenceView], error) {
		q, err := s.sequences.Visible(ctx, p, in.ID)
		if err != nil {
			return nil, err
		}
		return dataFrom(s.sequences.View(ctx, q))
	})

	register(s, huma.Operation{
		OperationID: "render-sequence", Method: http.MethodPost, Path: "/v1/sequences/{id}/render", Tags: tags,
		Summary: "Render a sequence for a lead",
		Description: "Changes nothing. Every step that sends a text (invite, message, inmail, email), rendered for the lead as the runner would send it: " +
			"its note, subject and body with the lead's fields, the branches of its conditions and its spin text chosen for this lead, " +
			"and the variables it misses (a step with any is not sent to the lead). Works on drafts; a template that does not parse is named in the step's problem.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *renderSequenceInput) (*dataOutput[*sequences.Rendering], error) {
		ls, err := s.leads.VisibleByIDs(ctx, p, []string{in.Body.LeadID})
		if err != nil {
			return nil, err
		}
		if len(ls) == 0 {
			return nil, apikit.NotFound("Lead " + strconv.Quote(in.Body.LeadID))
		}
		return dataFrom(s.sequences.Render(ctx, p, in.ID, ls[0].ID, enrollments.VarsOf(&ls[0])))
	})

	register(s, huma.Operation{
		OperationID: "activate-sequence", Method: http.MethodPost, Path: "/v1/sequences/{id}/activate", Tags: tags,
		Summary: "Activate a sequence",
		Description: "Starts (or resumes) sending. A sequence whose graph has any problem gives 422 E_GRAPH_INVALID naming every problem. " +
			"Activating an active sequence changes nothing.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleManager, apikit.ClassSpend, func(ctx context.Context, p apikit.Principal, in *sequenceIDInput) (*dataOutput[*sequences.SequenceView], error) {
		return dataFrom(s.sequences.Activate(ctx, p, in.ID))
	})

	register(s, huma.Operation{
		OperationID: "pause-sequence", Method: http.MethodPost, Path: "/v1/sequences/{id}/pause", Tags: tags,
		Summary: "Pause a sequence",
		Description: "Stops sending; enrollments keep their place and go on when the sequence is activated again. " +
			"Pausing a paused sequence changes nothing; a draft gives 409 E_CONFLICT.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleManager, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *sequenceIDInput) (*dataOutput[*sequences.SequenceView], error) {
		return dataFrom(s.sequences.Pause(ctx, p, in.ID))
	})
}

type winnerInput struct {
	ID     string `path:"id" format:"uuid" doc:"Sequence id."`
	StepID string `path:"step_id" doc:"The id of a step with variants."`
	Body   sequences.PickInput
}

type stepIDInput struct {
	ID     string `path:"id" format:"uuid" doc:"Sequence id."`
	StepID string `path:"step_id" doc:"The id of a step with variants."`
}

// registerWinners registers a manager's pick of a step's winning variant
// and its undoing.
func (s *Server) registerWinners() {
	tags := []string{"Sequences"}
	register(s, huma.Operation{
		OperationID: "pick-variant-winner", Method: http.MethodPost, Path: "/v1/sequences/{id}/steps/{step_id}/winner", Tags: tags,
		Summary: "Pick a step's winning variant",
		Description: "Every enrollment that reaches the step from now on gets this variant (a sequence.variant_won event, by manual); enrollments " +
			"already past the step are not touched. Replaces a winner picked by evidence. A step with no such variant gives 422 E_PAYLOAD_INVALID.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleManager, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *winnerInput) (*dataOutput[*sequences.SequenceView], error) {
		return dataFrom(s.sequences.Pick(ctx, p, in.ID, in.StepID, in.Body))
	})

	register(s, huma.Operation{
		OperationID: "undo-variant-winner", Method: http.MethodDelete, Path: "/v1/sequences/{id}/steps/{step_id}/winner", Tags: tags,
		Summary: "Undo a step's winning variant",
		Description: "The step splits its traffic by weight again (a sequence.variant_winner_undone event), and evidence picks no winner for it " +
			"until its variants change. Undoing when no winner steers the step changes nothing.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleManager, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *stepIDInput) (*dataOutput[*sequences.SequenceView], error) {
		return dataFrom(s.sequences.Undo(ctx, p, in.ID, in.StepID))
	})
}
