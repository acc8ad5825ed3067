package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
)

// Service holds the webhook rules.
type Service struct {
	db    *db.DB
	store Store
	clock apikit.Clock
	guard Guard
	key   secret.Key
}

// NewService returns the webhooks service on d. It registers nothing:
// the activity log reaches its outbox through Enqueue, which the caller
// (platform.New) hooks on the log. Signing secrets are stored sealed under
// key; without a key, Create refuses with secret.ErrNoKey.
func NewService(d *db.DB, clock apikit.Clock, guard Guard, key secret.Key) *Service {
	return &Service{db: d, store: NewBunStore(d), clock: clock, guard: guard, key: key}
}

// Enqueue is the outbox's hook on the activity log (events.Log.OnEmit):
// every event a subscribed webhook wants gets a delivery in the
// transaction that writes the event.
func (svc *Service) Enqueue(ctx context.Context, evs []events.Event) error {
	return svc.enqueue(ctx, evs)
}

// signingSecret opens w's signing secret.
func (svc *Service) signingSecret(w *Webhook) (string, error) {
	return svc.key.OpenString(w.Secret, secret.WebhookSecrets.AAD(w.ID))
}

// Guard is the service's endpoint guard.
func (svc *Service) Guard() Guard { return svc.guard }

// payload is a delivery's body: the Standard Webhooks envelope.
type payload struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	Timestamp time.Time      `json:"timestamp"`
	Data      map[string]any `json:"data"`
	Replayed  bool           `json:"replayed,omitempty"`
	ReplayOf  string         `json:"replay_of,omitempty"`
}

// bodyOf builds the payload of a log event of type t: the event's own data
// with the ids of what it concerns.
func bodyOf(e events.Event, t string) (string, error) {
	data := map[string]any{}
	for k, v := range e.Data {
		data[k] = v
	}
	for k, v := range map[string]string{"lead_id": e.LeadID, "sender_id": e.SenderID, "sequence_id": e.SequenceID,
		"enrollment_id": e.EnrollmentID, "step_id": e.StepID} {
		if _, set := data[k]; !set && v != "" {
			data[k] = v
		}
	}
	b, err := json.Marshal(payload{ID: e.ID, Type: t, Timestamp: e.CreatedAt, Data: data})
	return string(b), err
}

// enqueue is the outbox: deliveries for the events the workspace's
// enabled webhooks want, in the events' transaction.
func (svc *Service) enqueue(ctx context.Context, evs []events.Event) error {
	byWorkspace := map[string][]int{}
	for i, e := range evs {
		if TypeOf(e) != "" {
			byWorkspace[e.WorkspaceID] = append(byWorkspace[e.WorkspaceID], i)
		}
	}
	var out []Delivery
	for ws, idx := range byWorkspace {
		hooks, err := svc.subscribed(ctx, ws)
		if err != nil {
			return err
		}
		if len(hooks) == 0 {
			continue
		}
		now := db.Now(ctx, svc.clock)
		for _, i := range idx {
			e := evs[i]
			t := TypeOf(e)
			var body string
			for _, h := range hooks {
				if !h.Wants(t) {
					continue
				}
				if body == "" {
					var err error
					if body, err = bodyOf(e, t); err != nil {
						return err
					}
				}
				out = append(out, Delivery{ID: apikit.NewID(), WorkspaceID: ws, WebhookID: h.ID, EventID: e.ID, Type: t, Payload: body,
					Status: Pending, NextAttemptAt: &now, CreatedAt: now, UpdatedAt: now})
			}
		}
	}
	return svc.store.InsertDeliveries(ctx, out)
}

// subscribedKey is a workspace's enabled webhooks in a transaction's memo.
type subscribedKey string

// subscribed returns the workspace's enabled webhooks, read once per
// transaction: a batch of runner steps or replies writes many events.
func (svc *Service) subscribed(ctx context.Context, workspaceID string) ([]Webhook, error) {
	memo, key := db.TxMemo(ctx), subscribedKey(workspaceID)
	if memo != nil {
		if v, ok := memo.Load(key); ok {
			return v.([]Webhook), nil
		}
	}
	hooks, err := svc.store.Subscribed(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	if memo != nil {
		memo.Store(key, hooks)
	}
	return hooks, nil
}

// allowed refuses principals that may not use webhooks: a workspace on
// another plan, and client-scoped keys (webhooks carry every client's
// events).
func allowed(p apikit.Principal) error {
	if p.Plan != apikit.PlanPro {
		return apikit.Forbidden(fmt.Sprintf("Webhooks need the %s plan; this workspace is on %s.", apikit.PlanPro, p.Plan),
			"Move the workspace to the pro plan (plan: pro in the setup file).")
	}
	if p.Scoped() {
		return apikit.Forbidden("Webhooks deliver the events of every client; this key is limited to some clients.",
			"Use a manager key without a client scope.")
	}
	return nil
}

// CreateInput is the body of a new webhook.
type CreateInput struct {
	URL         string   `json:"url" required:"true" maxLength:"2000" doc:"An https URL that resolves to public addresses."`
	Events      []string `json:"events" required:"true" minItems:"1" maxItems:"100" doc:"[\"*\"] for every event, or types from GET /v1/webhooks/event-kinds."`
	Description string   `json:"description,omitempty" maxLength:"500" doc:"One line: no line breaks, tabs or other control characters."`
}

// Created is a new webhook with its secret, shown this once.
type Created struct {
	Webhook
	Secret string `json:"secret" doc:"whsec_…: signs every delivery. Shown only now; store it."`
}

// Create subscribes an endpoint. Its signing secret is stored sealed under
// the server's key, with the webhook's id as associated data.
// Returns E_FORBIDDEN off the pro plan or for a scoped key,
// E_PAYLOAD_INVALID for an unknown event type or a URL that is not https
// or does not resolve to public addresses, and E_CONFLICT on a server
// without a secret key.
func (svc *Service) Create(ctx context.Context, p apikit.Principal, in CreateInput) (*Created, error) {
	if err := allowed(p); err != nil {
		return nil, err
	}
	if err := apikit.CheckText("", in); err != nil {
		return nil, err
	}
	types, err := checkTypes(in.Events)
	if err != nil {
		return nil, err
	}
	if _, err := svc.guard.CheckURL(ctx, in.URL); err != nil {
		return nil, apikit.Invalid("url: "+err.Error()+".", "Use an https URL of a public endpoint.")
	}
	now := db.Now(ctx, svc.clock)
	plain := NewSecret()
	w := &Webhook{ID: apikit.NewID(), WorkspaceID: p.WorkspaceID, URL: in.URL, Events: types, Enabled: true,
		CreatedAt: now, UpdatedAt: now}
	if w.Secret, err = svc.key.SealString(plain, secret.WebhookSecrets.AAD(w.ID)); err != nil {
		return nil, err
	}
	if in.Description != "" {
		w.Description = &in.Description
	}
	if err := svc.store.Insert(ctx, w); err != nil {
		return nil, err
	}
	return &Created{Webhook: *w, Secret: plain}, nil
}

func checkTypes(in []string) (Types, error) {
	seen := map[string]bool{}
	var out Types
	for _, t := range in {
		if t == "*" {
			if len(in) > 1 {
				return nil, apikit.Invalid(`events: "*" stands alone.`, `Send ["*"] for every event, or a list of types.`)
			}
			return Types{"*"}, nil
		}
		if !Known(t) {
			names := make([]string, len(Kinds))
			for i, k := range Kinds {
				names[i] = k.Type
			}
			return nil, apikit.Invalid(fmt.Sprintf("events: %q is not an event type. Known types: %s.", t, strings.Join(names, ", ")),
				`Use types from GET /v1/webhooks/event-kinds, or ["*"].`)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// List returns the workspace's webhooks, oldest first; never their secrets.
func (svc *Service) List(ctx context.Context, p apikit.Principal, limit, offset int) (apikit.Page[Webhook], error) {
	if err := allowed(p); err != nil {
		return apikit.Page[Webhook]{}, err
	}
	if err := apikit.CheckPage(&limit, offset); err != nil {
		return apikit.Page[Webhook]{}, err
	}
	out, n, err := svc.store.List(ctx, p.WorkspaceID, limit, offset)
	if err != nil {
		return apikit.Page[Webhook]{}, err
	}
	return apikit.NewPage(out, n, limit, offset), nil
}

func (svc *Service) webhook(ctx context.Context, p apikit.Principal, id string) (*Webhook, error) {
	return db.Visible(p, "Webhook", id, func() (*Webhook, error) { return svc.store.Live(ctx, p.WorkspaceID, id) },
		func(*Webhook) *string { return nil })
}

// change runs fn on the principal's webhook with id in a transaction and
// writes the columns it returns.
func (svc *Service) change(ctx context.Context, p apikit.Principal, id string, fn func(ctx context.Context, w *Webhook, now time.Time) ([]string, error)) (*Webhook, error) {
	if err := allowed(p); err != nil {
		return nil, err
	}
	var w *Webhook
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if w, err = svc.webhook(ctx, p, id); err != nil {
			return err
		}
		now := db.Now(ctx, svc.clock)
		w.UpdatedAt = now
		cols, err := fn(ctx, w, now)
		if err != nil {
			return err
		}
		return svc.store.Update(ctx, w, cols...)
	})
	return w, err
}

// Delete stops the webhook's future deliveries, pending ones included; its
// delivery log stays readable for its 30 days.
// Returns E_NOT_FOUND for an unknown or deleted webhook.
func (svc *Service) Delete(ctx context.Context, p apikit.Principal, id string) (*Webhook, error) {
	return svc.change(ctx, p, id, func(ctx context.Context, w *Webhook, now time.Time) ([]string, error) {
		w.DeletedAt, w.Enabled = &now, false
		return []string{"deleted_at", "enabled"}, svc.store.DropPending(ctx, w.ID, "the webhook was deleted", now)
	})
}

// Enable turns a webhook back on and resets its failure count.
// Returns E_NOT_FOUND for an unknown or deleted webhook.
func (svc *Service) Enable(ctx context.Context, p apikit.Principal, id string) (*Webhook, error) {
	return svc.change(ctx, p, id, func(ctx context.Context, w *Webhook, now time.Time) ([]string, error) {
		w.Enabled, w.ConsecutiveFailures, w.DisabledAt = true, 0, nil
		return []string{"enabled", "consecutive_failures", "disabled_at"}, nil
	})
}

// DeliveryFilter narrows the delivery log.
type DeliveryFilter struct {
	WebhookID string
	Status    string
}

// LogSize is how many deliveries the log shows.
const LogSize = 100

// Deliveries returns the latest 100 deliveries of the workspace (or of one
// webhook), newest activity first.
func (svc *Service) Deliveries(ctx context.Context, p apikit.Principal, f DeliveryFilter) ([]Delivery, error) {
	if err := allowed(p); err != nil {
		return nil, err
	}
	return svc.store.Deliveries(ctx, p.WorkspaceID, f, LogSize)
}

// Replay creates a new delivery of a delivery's payload, with replayed and
// replay_of, due at once.
// Returns E_NOT_FOUND for an unknown delivery and E_CONFLICT when its
// webhook is deleted or switched off.
func (svc *Service) Replay(ctx context.Context, p apikit.Principal, id string) (*Delivery, error) {
	if err := allowed(p); err != nil {
		return nil, err
	}
	var out *Delivery
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		orig, err := db.Visible(p, "Delivery", id, func() (*Delivery, error) { return svc.store.Delivery(ctx, p.WorkspaceID, id) },
			func(*Delivery) *string { return nil })
		if err != nil {
			return err
		}
		w, err := one(svc.store.ByIDs(ctx, []string{orig.WebhookID}))
		if err != nil {
			return err
		}
		if w.DeletedAt != nil {
			return apikit.Conflict("The delivery's webhook was deleted.", "Create a webhook for the endpoint again; replays go to live webhooks only.")
		}
		if !w.Enabled {
			return apikit.Conflict("The delivery's webhook is switched off.", "Turn it back on with POST /v1/webhooks/{id}/enable, then replay.")
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(orig.Payload), &body); err != nil {
			return err
		}
		body["replayed"], body["replay_of"] = true, orig.ID
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		now := db.Now(ctx, svc.clock)
		out = &Delivery{ID: apikit.NewID(), WorkspaceID: orig.WorkspaceID, WebhookID: orig.WebhookID, EventID: orig.EventID, Type: orig.Type,
			Payload: string(b), Status: Pending, NextAttemptAt: &now, ReplayOf: &orig.ID, CreatedAt: now, UpdatedAt: now}
		return svc.store.InsertDeliveries(ctx, []Delivery{*out})
	})
	return out, err
}
