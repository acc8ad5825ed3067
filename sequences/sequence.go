// Package sequences holds sequences: ordered steps that form a graph of
// actions, waits, conditions, webhooks and manual tasks, with their
// validation, templates, and activation.
package sequences

import (
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/senders"
)

// Status is a sequence's state. A sequence starts as a draft; activate
// makes it run; pause stops it.
type Status string

// The statuses.
const (
	Draft  Status = "draft"
	Active Status = "active"
	Paused Status = "paused"
)

// Step types: an action step's type is its action's name (senders.Specs,
// read by Steps); the steps that send nothing are declared here.
const (
	TypeProfileView = string(senders.ProfileView)
	TypeInvite      = string(senders.Invite)
	TypeMessage     = string(senders.Message)
	TypeInMail      = string(senders.InMail)
	TypeFollow      = string(senders.Follow)
	TypeLike        = string(senders.Like)
	TypeEmail       = string(senders.SendEmail)
	TypeWait        = "wait"
	TypeCondition   = "condition"
	TypeWebhook     = "webhook"
	TypeTask        = "task"
)

// Condition kinds.
const (
	IfConnected      = "connected"
	IfInviteAccepted = "invite_accepted"
	IfHasEmail       = "has_email"
	IfHasLinkedIn    = "has_linkedin"
)

// End is the step id that ends an enrollment: next, then and else may name it.
const End = "end"

// MaxNoteLength is the longest invitation note LinkedIn takes.
const MaxNoteLength = 300

// NoteFallbackWithoutNote lets an invite step send without its note when the
// sender's notes for the month are used up.
const NoteFallbackWithoutNote = "without_note"

// Step is one step of a sequence. Which fields apply depends on Type.
type Step struct {
	ID   string `json:"id" yaml:"id" doc:"Unique in the sequence; enrollments keep their place by it when steps change."`
	Type string `json:"type" yaml:"type" enum:"@step_types"`
	Next string `json:"next,omitempty" yaml:"next" doc:"The step after this one (or end); by default the next in the list."`

	Note         string `json:"note,omitempty" yaml:"note" text:"multiline" doc:"invite: the personal note, at most 300 characters, a template."`
	NoteFallback string `json:"note_fallback,omitempty" yaml:"note_fallback" enum:"without_note,wait" doc:"invite: when the month's notes are used up, send without_note, or wait (the default) for the next month."`
	Subject      string `json:"subject,omitempty" yaml:"subject" doc:"inmail and email: the subject, a template."`
	Body         string `json:"body,omitempty" yaml:"body" text:"multiline" doc:"message, inmail and email: the text, a template."`

	Days        int  `json:"days,omitempty" yaml:"days" doc:"wait: how many days."`
	Hours       int  `json:"hours,omitempty" yaml:"hours" doc:"wait: how many hours."`
	WorkingDays bool `json:"working_days,omitempty" yaml:"working_days" doc:"wait: count only the sender's working days."`

	If         string `json:"if,omitempty" yaml:"if" enum:"connected,invite_accepted,has_email,has_linkedin" doc:"condition: what to test."`
	WithinDays int    `json:"within_days,omitempty" yaml:"within_days" doc:"condition invite_accepted: how long to wait for the acceptance."`
	Then       string `json:"then,omitempty" yaml:"then" doc:"condition: the step when the test holds."`
	Else       string `json:"else,omitempty" yaml:"else" doc:"condition: the step when it does not."`

	Payload map[string]any `json:"payload,omitempty" yaml:"payload" doc:"webhook: sent in the sequence.webhook event."`

	Title     string `json:"title,omitempty" yaml:"title" doc:"task: what the member must do."`
	DueInDays int    `json:"due_in_days,omitempty" yaml:"due_in_days" doc:"task: when the task is due."`

	Variants   []Variant   `json:"variants,omitempty" yaml:"variants" doc:"invite, message, inmail and email: 2 to 5 texts to test against each other instead of the step's own text; each enrollment gets one, chosen once by weight."`
	PickWinner *PickWinner `json:"pick_winner,omitempty" yaml:"pick_winner" doc:"With variants: pick the best variant by evidence, and send it to every enrollment from then on."`
}

// Action returns the capped action a step performs, and false for a step
// that performs none (wait, condition, webhook, task).
func (s Step) Action() (senders.Action, bool) {
	spec, ok := SpecOf(s.Type)
	return spec.Action, ok && spec.Action != ""
}

// Channel returns the channel a step needs a sender of, or "" for none.
func (s Step) Channel() senders.Channel {
	if a, ok := s.Action(); ok {
		return a.Channel()
	}
	if s.Type == TypeCondition && (s.If == IfConnected || s.If == IfInviteAccepted) {
		return senders.LinkedIn
	}
	return ""
}

// Sequence is a sequence of steps sent through a rotation of senders.
type Sequence struct {
	bun.BaseModel `bun:"table:sequences,alias:q"`

	ID          string            `bun:"id,pk" json:"id" format:"uuid"`
	WorkspaceID string            `bun:"workspace_id" json:"-"`
	ClientID    *string           `bun:"client_id" json:"client_id" format:"uuid"`
	Name        string            `bun:"name" json:"name"`
	Status      Status            `bun:"status" json:"status" enum:"draft,active,paused"`
	SenderIDs   []string          `bun:"sender_ids,type:jsonb" json:"sender_ids" doc:"The senders the sequence rotates between."`
	Steps       []Step            `bun:"steps,type:jsonb" json:"steps"`
	ActivatedAt *time.Time        `bun:"activated_at" json:"activated_at"`
	PausedAt    *time.Time        `bun:"paused_at" json:"paused_at"`
	StalledAt   *time.Time        `bun:"stalled_at" json:"stalled_at" doc:"Set while the sequence has had due work it could not send for 24 hours (a sequence.stalled event); null again when it sends (sequence.recovered)."`
	Winners     map[string]Winner `bun:"variant_winners,type:jsonb" json:"winners" doc:"By step id: the variant that step sends to every enrollment reaching it, picked by evidence or by a manager (and undone picks)."`
	// OnReply and OnMeetingBooked are the sequence's rules: what a reply
	// or a booked meeting does beyond reply-stop (rules.go).
	OnReply         map[string]Rule `bun:"on_reply,type:jsonb" json:"on_reply" doc:"By reply intent (interested, question, not_now, not_interested, ooo, wrong_person, unclear): what a reply read so does to the lead beyond stopping its enrollments, once per reply (docs/SEQUENCES.md, Replies that move leads on)."`
	OnMeetingBooked *Rule           `bun:"on_meeting_booked,type:jsonb" json:"on_meeting_booked" doc:"What a meeting the lead books (meeting.booked) does to the lead; null for nothing. enroll_replacement does not apply."`
	CreatedAt       time.Time       `bun:"created_at" json:"created_at"`
	UpdatedAt       time.Time       `bun:"updated_at" json:"updated_at"`
}

// StepByID returns the step with id, and false when there is none.
func (q *Sequence) StepByID(id string) (Step, bool) {
	for _, s := range q.Steps {
		if s.ID == id {
			return s, true
		}
	}
	return Step{}, false
}

// After returns the id of the step that follows step (End after the last).
func (q *Sequence) After(step Step) string {
	if step.Next != "" {
		return step.Next
	}
	for i, s := range q.Steps {
		if s.ID == step.ID && i+1 < len(q.Steps) {
			return q.Steps[i+1].ID
		}
	}
	return End
}

// WinnerOf returns the winner of the step with id, nil for none.
func (q *Sequence) WinnerOf(stepID string) *Winner {
	w, ok := q.Winners[stepID]
	if !ok {
		return nil
	}
	return &w
}

// First returns the id of the first step, or End for no steps.
func (q *Sequence) First() string {
	if len(q.Steps) == 0 {
		return End
	}
	return q.Steps[0].ID
}

// Problem is one reason a sequence's graph cannot run.
type Problem struct {
	Code    string `json:"code"`
	StepID  string `json:"step_id,omitempty"`
	Message string `json:"message"`
}
