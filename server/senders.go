package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
)

type listSendersInput struct {
	ClientID string `query:"client_id" format:"uuid"`
	Channel  string `query:"channel" enum:"linkedin,email"`
	Status   string `query:"status" enum:"active,paused"`
	Limit    int    `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Offset   int    `query:"offset" minimum:"0" default:"0"`
}

type senderIDInput struct {
	ID string `path:"id" format:"uuid" doc:"Sender id."`
}

type dataOutput[T any] struct {
	Body struct {
		Data T `json:"data"`
	}
}

func dataOf[T any](v T) *dataOutput[T] {
	out := &dataOutput[T]{}
	out.Body.Data = v
	return out
}

// dataFrom answers with v, or with err when there is one.
func dataFrom[T any](v T, err error) (*dataOutput[T], error) {
	if err != nil {
		return nil, err
	}
	return dataOf(v), nil
}

type pageOutput[T any] struct {
	Body apikit.Page[T]
}

func (s *Server) registerSenders() {
	tags := []string{"Senders"}
	register(s, huma.Operation{
		OperationID: "list-senders", Method: http.MethodGet, Path: "/v1/senders", Tags: tags,
		Summary:     "List senders",
		Description: "The LinkedIn accounts and mailboxes visible to the key, by name. A client-scoped key sees only its clients' senders. Senders are connected and configured in the setup (`leadline apply`), not through the API.",
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *listSendersInput) (*pageOutput[senders.Sender], error) {
		page, err := s.senders.List(ctx, p, senders.Filter{ClientID: in.ClientID, Channel: senders.Channel(in.Channel),
			Status: senders.Status(in.Status), Limit: in.Limit, Offset: in.Offset})
		if err != nil {
			return nil, err
		}
		return &pageOutput[senders.Sender]{Body: page}, nil
	})

	register(s, huma.Operation{
		OperationID: "get-sender", Method: http.MethodGet, Path: "/v1/senders/{id}", Tags: tags,
		Summary: "Get a sender", Description: "The sender with its schedule, caps, warm-up and health state.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *senderIDInput) (*dataOutput[*senders.Sender], error) {
		return dataFrom(s.senders.Visible(ctx, p, in.ID))
	})

	register(s, huma.Operation{
		OperationID: "get-sender-health", Method: http.MethodGet, Path: "/v1/senders/{id}/health", Tags: tags,
		Summary: "A sender's health",
		Description: "healthy, warning (caps halved), restricted or disconnected (nothing is sent), with the reasons: the provider's signals " +
			"(auth_failed, restriction_notice, limit_notice), the sender's own numbers (too_many_pending above 500), the stops of its guards with a remedy (low_acceptance_rate: invitations pause; high_bounce_rate: the mailbox stops; docs/GUARDS.md) " +
			"and, for an email sender, domain_check_failed: its domain's MX, SPF, DKIM or DMARC fails a check (docs/TRANSPORTS.md).",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *senderIDInput) (*dataOutput[*senders.HealthView], error) {
		return dataFrom(s.senders.Health(ctx, p, in.ID))
	})

	register(s, huma.Operation{
		OperationID: "get-sender-budgets", Method: http.MethodGet, Path: "/v1/senders/{id}/budgets", Tags: tags,
		Summary: "A sender's budgets today",
		Description: "For the sender's local today, each action's limits and use: effective_cap is the lowest of the configured cap, the platform ceiling, " +
			"the warm-up ramp and the health limit. Budgets reset at the sender's local midnight (resets_at).",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *senderIDInput) (*dataOutput[*senders.Budgets], error) {
		return dataFrom(s.senders.Budgets(ctx, p, in.ID))
	})
}
