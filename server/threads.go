package server

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/inbox"
)

type listThreadsInput struct {
	Intent       string    `query:"intent" enum:"interested,question,not_now,not_interested,ooo,wrong_person,unclear"`
	AssigneeID   string    `query:"assignee_id" doc:"A member id, or none for unassigned threads."`
	SenderID     string    `query:"sender_id" format:"uuid"`
	SequenceID   string    `query:"sequence_id" format:"uuid"`
	ClientID     string    `query:"client_id" format:"uuid"`
	LeadID       string    `query:"lead_id" format:"uuid"`
	Unread       string    `query:"unread" enum:"true,false"`
	NeedsReview  string    `query:"needs_review" enum:"true,false" doc:"true: the threads whose latest reply the classifier was unsure of (intent unclear until a member sets it)."`
	UpdatedSince time.Time `query:"updated_since" doc:"Only threads changed at or after this time (RFC 3339): a new message, an intent, an assignee, read."`
	Limit        int       `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Offset       int       `query:"offset" minimum:"0" default:"0"`
}

type threadIDInput struct {
	ID string `path:"id" format:"uuid" doc:"Thread id."`
}

type replyInput struct {
	ID   string `path:"id" format:"uuid" doc:"Thread id."`
	Body inbox.ReplyInput
}

type intentInput struct {
	ID   string `path:"id" format:"uuid" doc:"Thread id."`
	Body struct {
		Intent inbox.Intent `json:"intent" required:"true" enum:"interested,question,not_now,not_interested,ooo,wrong_person,unclear"`
	}
}

type assigneeInput struct {
	ID   string `path:"id" format:"uuid" doc:"Thread id."`
	Body struct {
		AssigneeID *string `json:"assignee_id" required:"true" nullable:"true" format:"uuid" doc:"A member of the workspace, or null to unassign."`
	}
}

func (s *Server) registerThreads() {
	tags := []string{"Inbox"}
	register(s, huma.Operation{
		OperationID: "list-threads", Method: http.MethodGet, Path: "/v1/threads", Tags: tags,
		Summary: "List threads",
		Description: "Conversations with leads, one per sender, lead and channel, newest activity first. A client-scoped key sees only its clients' threads. " +
			"`intent` is what the lead's latest reply means (set by the classifier, or by hand); `intent_confidence` is how sure the classifier was, " +
			"and `needs_review` marks the replies it was unsure of (below 0.6: intent unclear until a member sets it).",
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *listThreadsInput) (*pageOutput[inbox.Thread], error) {
		f := inbox.Filter{Intent: inbox.Intent(in.Intent), AssigneeID: in.AssigneeID, SenderID: in.SenderID, SequenceID: in.SequenceID,
			ClientID: in.ClientID, LeadID: in.LeadID, Limit: in.Limit, Offset: in.Offset}
		if in.AssigneeID != "" && in.AssigneeID != "none" && !apikit.ValidID(in.AssigneeID) {
			return nil, apikit.Invalid("assignee_id must be a member id or none.", "Send a member's uuid, or none for unassigned threads.")
		}
		if in.Unread != "" {
			u := in.Unread == "true"
			f.Unread = &u
		}
		if in.NeedsReview != "" {
			r := in.NeedsReview == "true"
			f.NeedsReview = &r
		}
		if !in.UpdatedSince.IsZero() {
			f.UpdatedSince = &in.UpdatedSince
		}
		page, err := s.inbox.List(ctx, p, f)
		if err != nil {
			return nil, err
		}
		return &pageOutput[inbox.Thread]{Body: page}, nil
	})

	register(s, huma.Operation{
		OperationID: "get-thread", Method: http.MethodGet, Path: "/v1/threads/{id}", Tags: tags,
		Summary: "Get a thread", Description: "The thread with its messages, oldest first, and what the sequences' rules did because of its replies and the lead's meetings " +
			"(`rules`: each field's outcome, done, unchanged or refused with its reason). Reading it changes nothing: mark it read with POST /v1/threads/{id}/read.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *threadIDInput) (*dataOutput[*inbox.ThreadView], error) {
		return dataFrom(s.inbox.Get(ctx, p, in.ID))
	})

	register(s, huma.Operation{
		OperationID: "reply-to-thread", Method: http.MethodPost, Path: "/v1/threads/{id}/reply", Tags: tags,
		Summary: "Reply in a thread",
		Description: "Sends the message through the thread's sender and transport, now, also outside the sender's working hours (a person answers a person). " +
			"It counts against the sender's message (LinkedIn) or email cap. 409 E_CONFLICT when the cap is used up, the sender is restricted or disconnected, " +
			"the lead is do-not-contact or blacklisted, or the provider refused the message; nothing is sent then.",
		Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, apikit.RoleMember, apikit.ClassSpend, func(ctx context.Context, p apikit.Principal, in *replyInput) (*dataOutput[*inbox.Message], error) {
		return dataFrom(s.inbox.Reply(ctx, p, in.ID, in.Body))
	})

	register(s, huma.Operation{
		OperationID: "set-thread-intent", Method: http.MethodPut, Path: "/v1/threads/{id}/intent", Tags: tags,
		Summary:     "Set a thread's intent",
		Description: "Records intent_source manual. message.classified fires again only when the intent changed.",
		Errors:      []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *intentInput) (*dataOutput[*inbox.Thread], error) {
		return dataFrom(s.inbox.SetIntent(ctx, p, in.ID, in.Body.Intent))
	})

	register(s, huma.Operation{
		OperationID: "set-thread-assignee", Method: http.MethodPut, Path: "/v1/threads/{id}/assignee", Tags: tags,
		Summary:     "Assign a thread",
		Description: "To an active member of the workspace, or to nobody with null. Another id gives 422.",
		Errors:      []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *assigneeInput) (*dataOutput[*inbox.Thread], error) {
		return dataFrom(s.inbox.SetAssignee(ctx, p, in.ID, in.Body.AssigneeID))
	})

	register(s, huma.Operation{
		OperationID: "mark-thread-read", Method: http.MethodPost, Path: "/v1/threads/{id}/read", Tags: tags,
		Summary:     "Mark a thread read",
		Description: "Sets unread to false (a reply from the lead sets it again). Reading a thread with GET does not.",
		Errors:      []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *threadIDInput) (*dataOutput[*inbox.Thread], error) {
		return dataFrom(s.inbox.MarkRead(ctx, p, in.ID))
	})
}
