package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/webhooks"
)

type createWebhookInput struct {
	Body webhooks.CreateInput
}

type webhookIDInput struct {
	ID string `path:"id" format:"uuid" doc:"Webhook id."`
}

type listWebhooksInput struct {
	Limit  int `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Offset int `query:"offset" minimum:"0" default:"0"`
}

type listDeliveriesInput struct {
	WebhookID string `query:"webhook_id" format:"uuid"`
	Status    string `query:"status" enum:"pending,succeeded,failed"`
}

type deliveryIDInput struct {
	ID string `path:"id" format:"uuid" doc:"Delivery id."`
}

func (s *Server) registerWebhooks() {
	tags := []string{"Webhooks"}
	plan := " Needs the manager role, a key without client scope, and a workspace on the pro plan (403 otherwise)."
	register(s, huma.Operation{
		OperationID: "list-webhook-event-kinds", Method: http.MethodGet, Path: "/v1/webhooks/event-kinds", Tags: tags,
		Summary: "Event types", Description: "Every event type a webhook can subscribe to, with what it means. Readable on every plan, so that receivers can be planned.",
	}, apikit.RoleManager, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, _ *struct{}) (*dataOutput[[]webhooks.Kind], error) {
		return dataOf(webhooks.Kinds), nil
	})

	register(s, huma.Operation{
		OperationID: "create-webhook", Method: http.MethodPost, Path: "/v1/webhooks", Tags: tags, DefaultStatus: http.StatusCreated,
		Summary: "Create a webhook",
		Description: "Subscribes an https endpoint (it must resolve to public addresses) to every event ([\"*\"]) or to chosen types. " +
			"The answer carries the signing secret (whsec_…), shown only this once." + plan,
	}, apikit.RoleManager, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *createWebhookInput) (*dataOutput[*webhooks.Created], error) {
		return dataFrom(s.webhooks.Create(ctx, p, in.Body))
	})

	register(s, huma.Operation{
		OperationID: "list-webhooks", Method: http.MethodGet, Path: "/v1/webhooks", Tags: tags,
		Summary: "List webhooks", Description: "With enabled, consecutive_failures and disabled_at; never the secret." + plan,
	}, apikit.RoleManager, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *listWebhooksInput) (*pageOutput[webhooks.Webhook], error) {
		page, err := s.webhooks.List(ctx, p, in.Limit, in.Offset)
		if err != nil {
			return nil, err
		}
		return &pageOutput[webhooks.Webhook]{Body: page}, nil
	})

	register(s, huma.Operation{
		OperationID: "delete-webhook", Method: http.MethodDelete, Path: "/v1/webhooks/{id}", Tags: tags,
		Summary: "Delete a webhook", Description: "Stops its deliveries, pending ones included. Its delivery log stays readable for 30 days." + plan,
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleManager, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *webhookIDInput) (*dataOutput[*webhooks.Webhook], error) {
		return dataFrom(s.webhooks.Delete(ctx, p, in.ID))
	})

	register(s, huma.Operation{
		OperationID: "enable-webhook", Method: http.MethodPost, Path: "/v1/webhooks/{id}/enable", Tags: tags,
		Summary: "Turn a webhook back on", Description: "After it was switched off by 50 failed deliveries in a row: resets its failure count. Deliveries start with the next event." + plan,
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleManager, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *webhookIDInput) (*dataOutput[*webhooks.Webhook], error) {
		return dataFrom(s.webhooks.Enable(ctx, p, in.ID))
	})

	register(s, huma.Operation{
		OperationID: "list-webhook-deliveries", Method: http.MethodGet, Path: "/v1/webhooks/deliveries", Tags: tags,
		Summary: "The delivery log",
		Description: "The latest 100 deliveries, newest activity first, with status, attempts, last status code, last error and the next attempt. " +
			"Kept 30 days." + plan,
	}, apikit.RoleManager, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *listDeliveriesInput) (*dataOutput[[]webhooks.Delivery], error) {
		return dataFrom(s.webhooks.Deliveries(ctx, p, webhooks.DeliveryFilter{WebhookID: in.WebhookID, Status: in.Status}))
	})

	register(s, huma.Operation{
		OperationID: "replay-webhook-delivery", Method: http.MethodPost, Path: "/v1/webhooks/deliveries/{id}/replay", Tags: tags,
		DefaultStatus: http.StatusAccepted,
		Summary:       "Replay a delivery",
		Description: "A new delivery with the same payload plus \"replayed\": true and \"replay_of\", sent within about 30 seconds and signed like any other. " +
			"409 when the webhook is switched off or deleted." + plan,
		Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, apikit.RoleManager, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *deliveryIDInput) (*dataOutput[*webhooks.Delivery], error) {
		return dataFrom(s.webhooks.Replay(ctx, p, in.ID))
	})
}
