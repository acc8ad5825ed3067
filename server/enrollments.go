package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
)

type enrollInput struct {
	Body enrollments.EnrollInput
}

type listEnrollmentsInput struct {
	SequenceID string `query:"sequence_id" format:"uuid"`
	LeadID     string `query:"lead_id" format:"uuid"`
	SenderID   string `query:"sender_id" format:"uuid"`
	Status     string `query:"status" enum:"active,paused,finished,exited,replied,stopped,failed"`
	Limit      int    `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Offset     int    `query:"offset" minimum:"0" default:"0"`
}

type enrollmentIDInput struct {
	ID string `path:"id" format:"uuid" doc:"Enrollment id."`
}

type recoverInput struct {
	Body enrollments.RecoverInput
}

type recovered struct {
	Recovered int `json:"recovered" doc:"How many failed enrollments run their failed step again."`
}

type failedInput struct {
	ID     string `path:"id" format:"uuid" doc:"Sequence id."`
	Limit  int    `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Offset int    `query:"offset" minimum:"0" default:"0"`
}

func (s *Server) registerEnrollments() {
	tags := []string{"Enrollments"}
	register(s, huma.Operation{
		OperationID: "preview-enrollments", Method: http.MethodPost, Path: "/v1/enrollments/preview", Tags: tags,
		Summary: "Preview an enrollment",
		Description: "Changes nothing. For 1 to 10,000 leads: which are eligible, which are excluded and why, which sender each would get, " +
			"warnings, and when their first action would happen at the senders' effective caps and schedules.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *enrollInput) (*dataOutput[*enrollments.Preview], error) {
		return dataFrom(s.enrollments.Preview(ctx, p, in.Body))
	})

	register(s, huma.Operation{
		OperationID: "enrol-leads", Method: http.MethodPost, Path: "/v1/enrollments", Tags: tags,
		Summary: "Enrol leads",
		Description: `Needs "confirm": true (preview first). Re-checks every rule now: it enrols the eligible listed leads and never any other, ` +
			"possibly fewer than previewed. Enrolling into a draft or paused sequence is allowed (with a warning); an invalid graph gives 422 E_GRAPH_INVALID.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassSpend, func(ctx context.Context, p apikit.Principal, in *enrollInput) (*dataOutput[*enrollments.CommitResult], error) {
		return dataFrom(s.enrollments.Commit(ctx, p, in.Body))
	})

	register(s, huma.Operation{
		OperationID: "list-enrollments", Method: http.MethodGet, Path: "/v1/enrollments", Tags: tags,
		Summary: "List enrollments", Description: "Enrollments visible to the key, newest first.",
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *listEnrollmentsInput) (*pageOutput[enrollments.Enrollment], error) {
		page, err := s.enrollments.List(ctx, p, enrollments.Filter{SequenceID: in.SequenceID, LeadID: in.LeadID, SenderID: in.SenderID,
			Status: enrollments.Status(in.Status), Limit: in.Limit, Offset: in.Offset})
		if err != nil {
			return nil, err
		}
		return &pageOutput[enrollments.Enrollment]{Body: page}, nil
	})

	for _, t := range []struct {
		verb, summary, desc string
		fn                  func(context.Context, apikit.Principal, string) (*enrollments.Enrollment, error)
	}{
		{"pause", "Pause an enrollment", "An active enrollment stops where it is. Other states give 409 E_CONFLICT.", s.enrollments.Pause},
		{"resume", "Resume an enrollment", "A paused enrollment goes on from its step. Other states give 409 E_CONFLICT.", s.enrollments.Resume},
		{"exit", "Exit an enrollment", "Ends an active, paused or failed enrollment; the lead, its timeline and its chats are kept. An ended one gives 409 E_CONFLICT.", s.enrollments.Exit},
	} {
		register(s, huma.Operation{
			OperationID: t.verb + "-enrollment", Method: http.MethodPost, Path: "/v1/enrollments/{id}/" + t.verb, Tags: tags,
			Summary: t.summary, Description: t.desc, Errors: []int{http.StatusNotFound},
		}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *enrollmentIDInput) (*dataOutput[*enrollments.Enrollment], error) {
			return dataFrom(t.fn(ctx, p, in.ID))
		})
	}

	register(s, huma.Operation{
		OperationID: "recover-enrollments", Method: http.MethodPost, Path: "/v1/enrollments/recover", Tags: tags,
		Summary: "Recover failed enrollments",
		Description: "The sequence's failed enrollments (or those listed) run their failed step again. " +
			"One whose lead meanwhile has another live enrollment stays failed.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassSpend, func(ctx context.Context, p apikit.Principal, in *recoverInput) (*dataOutput[recovered], error) {
		n, err := s.enrollments.Recover(ctx, p, in.Body)
		if err != nil {
			return nil, err
		}
		return dataOf(recovered{Recovered: n}), nil
	})

	seqTags := []string{"Sequences"}
	register(s, huma.Operation{
		OperationID: "get-sequence-stats", Method: http.MethodGet, Path: "/v1/sequences/{id}/stats", Tags: seqTags,
		Summary: "A sequence's numbers", Description: "Per step entered, done, failed and waiting; enrollments per status; acceptance and reply rates.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *sequenceIDInput) (*dataOutput[*enrollments.SequenceStats], error) {
		return dataFrom(s.enrollments.Stats(ctx, p, in.ID))
	})

	register(s, huma.Operation{
		OperationID: "list-sequence-failed", Method: http.MethodGet, Path: "/v1/sequences/{id}/failed", Tags: seqTags,
		Summary: "A sequence's failed enrollments", Description: "Newest first, each with its step, code, message and time. Recover them with POST /v1/enrollments/recover.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *failedInput) (*pageOutput[enrollments.FailedEnrollment], error) {
		page, err := s.enrollments.FailedPage(ctx, p, in.ID, in.Limit, in.Offset)
		if err != nil {
			return nil, err
		}
		return &pageOutput[enrollments.FailedEnrollment]{Body: page}, nil
	})

	register(s, huma.Operation{
		OperationID: "why-not-sending", Method: http.MethodGet, Path: "/v1/sequences/{id}/why-not-sending", Tags: seqTags,
		Summary: "Why a sequence is not sending",
		Description: "Every cause that holds the sequence's enrollments back, each with a remedy: the sequence's state, its graph, its senders' " +
			"schedules, caps, warm-up, health and note quota, tasks, failed enrollments and do-not-contact leads.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *sequenceIDInput) (*dataOutput[*enrollments.WhyNotSending], error) {
		return dataFrom(s.enrollments.WhyNotSending(ctx, p, in.ID))
	})

	register(s, huma.Operation{
		OperationID: "get-sender-capacity", Method: http.MethodGet, Path: "/v1/senders/{id}/capacity", Tags: []string{"Senders"},
		Summary:     "A sender's capacity for 7 days",
		Description: "For each of the sender's next 7 local days (today first): each action's effective cap, what is used (today), the steps already due that day, and what is free.",
		Errors:      []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *senderIDInput) (*dataOutput[[]enrollments.DayCapacity], error) {
		sd, err := s.senders.Visible(ctx, p, in.ID)
		if err != nil {
			return nil, err
		}
		return dataFrom(s.enrollments.Capacity(ctx, p, sd))
	})
}
