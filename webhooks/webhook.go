package webhooks

import (
	"encoding/json"
	"time"

	"github.com/uptrace/bun"
)

// Webhook is a subscription of an endpoint to events.
type Webhook struct {
	bun.BaseModel `bun:"table:webhooks,alias:wh"`

	ID                  string     `bun:"id,pk" json:"id" format:"uuid"`
	WorkspaceID         string     `bun:"workspace_id" json:"-"`
	URL                 string     `bun:"url" json:"url"`
	Events              Types      `bun:"events" json:"events" doc:"[\"*\"] for every event, or the chosen types."`
	Description         *string    `bun:"description" json:"description"`
	Secret              string     `bun:"secret" json:"-"` // sealed under the server's key (internal/secret)
	Enabled             bool       `bun:"enabled" json:"enabled"`
	ConsecutiveFailures int        `bun:"consecutive_failures" json:"consecutive_failures" doc:"Failed deliveries in a row; at 50 the webhook is switched off."`
	DisabledAt          *time.Time `bun:"disabled_at" json:"disabled_at" doc:"When it was switched off after 50 failed deliveries in a row."`
	DeletedAt           *time.Time `bun:"deleted_at" json:"-"`
	CreatedAt           time.Time  `bun:"created_at" json:"created_at"`
	UpdatedAt           time.Time  `bun:"updated_at" json:"updated_at"`
}

// Wants reports whether the webhook subscribes to type t.
func (w *Webhook) Wants(t string) bool {
	for _, e := range w.Events {
		if e == "*" || e == t {
			return true
		}
	}
	return false
}

// Types is a list of event types, stored as JSON text.
type Types []string

// Value is the JSON text of the list, for the database.
func (t Types) Value() (any, error) {
	b, err := json.Marshal([]string(t))
	return string(b), err
}

// Scan reads the JSON text of the list.
func (t *Types) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	case nil:
		*t = nil
		return nil
	}
	return json.Unmarshal(b, (*[]string)(t))
}

// Statuses of a delivery.
const (
	Pending   = "pending"
	Succeeded = "succeeded"
	Failed    = "failed"
)

// Delivery is one event for one webhook, with its attempts.
type Delivery struct {
	bun.BaseModel `bun:"table:deliveries,alias:dl"`

	ID             string     `bun:"id,pk" json:"id" format:"uuid" doc:"Sent as x-delivery-id, the same on every attempt."`
	WorkspaceID    string     `bun:"workspace_id" json:"-"`
	WebhookID      string     `bun:"webhook_id" json:"webhook_id" format:"uuid"`
	EventID        string     `bun:"event_id" json:"event_id" format:"uuid"`
	Type           string     `bun:"type" json:"type"`
	Payload        string     `bun:"payload" json:"-"`
	Status         string     `bun:"status" json:"status" enum:"pending,succeeded,failed"`
	Attempts       int        `bun:"attempts" json:"attempts"`
	NextAttemptAt  *time.Time `bun:"next_attempt_at" json:"next_attempt_at"`
	LeaseUntil     *time.Time `bun:"lease_until" json:"-"`
	LastStatusCode *int       `bun:"last_status_code" json:"last_status_code"`
	LastError      *string    `bun:"last_error" json:"last_error"`
	ReplayOf       *string    `bun:"replay_of" json:"replay_of" format:"uuid"`
	CreatedAt      time.Time  `bun:"created_at" json:"created_at"`
	UpdatedAt      time.Time  `bun:"updated_at" json:"updated_at"`
}
