// Package leads holds leads: create-or-update with matching, the
// fill-only-when-empty fields and the custom merge, tags, stage and list,
// do-not-contact, the timeline, enrichment requests and suppression lists.
package leads

import (
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/workspace"
)

// Lead is the lead record, as stored and as the API shows it. Optional
// text fields are null when empty.
type Lead struct {
	bun.BaseModel `bun:"table:leads,alias:l"`

	ID                 string         `bun:"id,pk" json:"id" format:"uuid"`
	WorkspaceID        string         `bun:"workspace_id" json:"-"`
	ClientID           *string        `bun:"client_id" json:"client_id" format:"uuid" doc:"Filled only when empty, never overwritten."`
	ListID             *string        `bun:"list_id" json:"list_id" format:"uuid"`
	StageID            *string        `bun:"stage_id" json:"stage_id" format:"uuid"`
	EmailWork          *string        `bun:"email_work" json:"email_work" doc:"Filled only when empty, never overwritten."`
	EmailPersonal      *string        `bun:"email_personal" json:"email_personal" doc:"Filled only when empty, never overwritten."`
	PublicIdentifier   *string        `bun:"public_identifier" json:"public_identifier" doc:"The LinkedIn vanity name, lower-case (linkedin.com/in/<public_identifier>). Filled only when empty."`
	LinkedInID         *string        `bun:"linkedin_id" json:"linkedin_id" doc:"LinkedIn member id; matched first on create."`
	ProviderID         *string        `bun:"provider_id" json:"provider_id" doc:"The sending provider's id for this person; matched second on create."`
	Name               *string        `bun:"name" json:"name"`
	Company            *string        `bun:"company" json:"company"`
	Headline           *string        `bun:"headline" json:"headline"`
	Location           *string        `bun:"location" json:"location"`
	Source             *string        `bun:"source" json:"source"`
	Custom             map[string]any `bun:"custom,type:jsonb,json_use_number" json:"custom" doc:"Free-form fields, merged key by key on update. At most 100 fields, 16 KiB as JSON and 5 levels deep (counting custom itself); numbers keep every digit."`
	Profile            map[string]any `bun:"profile,type:jsonb" json:"-"`
	DoNotContact       bool           `bun:"do_not_contact" json:"do_not_contact" doc:"Set by suppress or a do-not-contact entry; every send check refuses the lead."`
	DoNotContactAt     *time.Time     `bun:"do_not_contact_at" json:"do_not_contact_at"`
	DoNotContactReason *string        `bun:"do_not_contact_reason" json:"do_not_contact_reason"`
	Replied            bool           `bun:"replied" json:"replied"`
	EnrichedAt         *time.Time     `bun:"enriched_at" json:"enriched_at"`
	CreatedAt          time.Time      `bun:"created_at" json:"created_at"`
	UpdatedAt          time.Time      `bun:"updated_at" json:"updated_at"`
}

// LeadDetail is the single-lead view: the lead with its tags, enriched profile,
// per-sender state and enrollments.
type LeadDetail struct {
	Lead
	Tags        []workspace.Named `json:"tags"`
	ProfileData map[string]any    `json:"profile" doc:"The enriched LinkedIn profile; null until the lead is enriched."`
	SenderState []SenderState     `json:"sender_state" doc:"Per sender: connection status and last contact."`
	Enrollments []EnrollmentRef   `json:"enrollments" doc:"The lead's enrollments in sequences, newest first."`
}

// SenderState is what one sender knows of the lead.
type SenderState struct {
	SenderID         string     `json:"sender_id" format:"uuid"`
	SenderName       string     `json:"sender_name"`
	ConnectionStatus string     `json:"connection_status" enum:"none,pending,connected,withdrawn" doc:"The LinkedIn connection between the sender and the lead."`
	LastContactAt    *time.Time `json:"last_contact_at" doc:"When the sender last sent the lead anything."`
}

// EnrollmentRef is one of the lead's enrollments.
type EnrollmentRef struct {
	ID           string    `json:"id" format:"uuid"`
	SequenceID   string    `json:"sequence_id" format:"uuid"`
	SequenceName string    `json:"sequence_name"`
	SenderID     string    `json:"sender_id" format:"uuid"`
	Status       string    `json:"status"`
	EnrolledAt   time.Time `json:"enrolled_at"`
}

// LeadInput is the lead input (create-or-update) and patch object. A field
// that is left out, null or an empty string is left as it is.
type LeadInput struct {
	ClientID         *string        `json:"client_id,omitempty" maxLength:"36" doc:"Client the lead belongs to. A key scoped to one client defaults to it."`
	ListID           *string        `json:"list_id,omitempty" maxLength:"36" doc:"The lead's list (see GET /v1/me for ids)."`
	StageID          *string        `json:"stage_id,omitempty" maxLength:"36" doc:"The lead's stage (see GET /v1/me for ids)."`
	EmailWork        *string        `json:"email_work,omitempty" maxLength:"320"`
	EmailPersonal    *string        `json:"email_personal,omitempty" maxLength:"320"`
	PublicIdentifier *string        `json:"public_identifier,omitempty" maxLength:"200"`
	LinkedInURL      *string        `json:"linkedin_url,omitempty" maxLength:"500" doc:"A linkedin.com/in/... profile URL; public_identifier is taken from it."`
	LinkedInID       *string        `json:"linkedin_id,omitempty" maxLength:"200"`
	ProviderID       *string        `json:"provider_id,omitempty" maxLength:"200"`
	Name             *string        `json:"name,omitempty" maxLength:"500"`
	Company          *string        `json:"company,omitempty" maxLength:"500"`
	Headline         *string        `json:"headline,omitempty" maxLength:"1000"`
	Location         *string        `json:"location,omitempty" maxLength:"500"`
	Source           *string        `json:"source,omitempty" maxLength:"200"`
	Custom           map[string]any `json:"custom,omitempty" nullable:"true" maxProperties:"100" doc:"Merged key by key into the lead's custom fields; a key set to null is removed. Field names have 1 to 100 characters. The lead's custom object as stored after the merge keeps at most 100 fields, 16 KiB as JSON (16384 bytes) and 5 levels of nesting counting custom itself; an update past a bound gives 422 and changes nothing."`
}

// Result is the answer to a create-or-update or a patch.
type Result struct {
	Lead            *LeadDetail
	Created         bool
	UnchangedFields []string
}

// Filter selects leads for List.
type Filter struct {
	Q                string
	ClientID         string
	ListID           string
	StageID          string
	TagID            string
	Source           string
	Email            string
	PublicIdentifier string
	UpdatedSince     *time.Time
	Replied          *bool
	Enriched         *bool
	Limit, Offset    int
}

// TimelineEvent is one entry of a lead's timeline.
type TimelineEvent struct {
	ID        string         `json:"id" format:"uuid"`
	Kind      string         `json:"kind" doc:"What happened, e.g. lead.created, lead.tagged, lead.suppressed."`
	CreatedAt time.Time      `json:"created_at"`
	MemberID  *string        `json:"member_id" doc:"The member whose key made the change; null for the platform's own actions."`
	KeyID     *string        `json:"key_id"`
	Data      map[string]any `json:"data"`
}

// Event kinds the leads area writes to the activity log.
const (
	EventCreated          = "lead.created"
	EventUpdated          = "lead.updated"
	EventTagged           = "lead.tagged"
	EventUntagged         = "lead.untagged"
	EventStageChanged     = "lead.stage_changed"
	EventListChanged      = "lead.list_changed"
	EventSuppressed       = "lead.suppressed"
	EventUnsuppressed     = "lead.unsuppressed"
	EventEnrichmentQueued = "lead.enrichment_queued"
)
