// Package inbox holds the conversations with leads: one thread per sender,
// lead and channel, with every message the runner or a member sent and
// every reply the transport reported. Each reply is read by a Classifier
// (intent, auto-reply, return date); members set intents, assign threads
// and reply through the thread's sender, inside its caps.
package inbox

import (
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

// Directions of a message.
const (
	Out = "out"
	In  = "in"
)

// Statuses of a message: a member's reply is sending while its transport
// is called.
const (
	Sent    = "sent"
	Sending = "sending"
)

// Intent sources: read by the classifier, or set by a member.
const (
	SourceAuto   = "auto"
	SourceManual = "manual"
)

// Activity-log kinds the inbox writes.
const (
	EventClassified = "message.classified"
	EventAssigned   = "thread.assigned"
)

// Thread is one conversation between one sender and one lead on one channel.
type Thread struct {
	bun.BaseModel `bun:"table:threads,alias:th"`

	ID           string          `bun:"id,pk" json:"id" format:"uuid"`
	WorkspaceID  string          `bun:"workspace_id" json:"-"`
	ClientID     *string         `bun:"client_id" json:"client_id" format:"uuid"`
	SenderID     string          `bun:"sender_id" json:"sender_id" format:"uuid"`
	LeadID       string          `bun:"lead_id" json:"lead_id" format:"uuid"`
	Channel      senders.Channel `bun:"channel" json:"channel" enum:"linkedin,email"`
	SequenceID   *string         `bun:"sequence_id" json:"sequence_id" format:"uuid" doc:"The sequence the conversation came from, when it came from one (the latest)."`
	EnrollmentID *string         `bun:"enrollment_id" json:"enrollment_id" format:"uuid"`
	Intent       *Intent         `bun:"intent" json:"intent" enum:"interested,question,not_now,not_interested,ooo,wrong_person,unclear" doc:"What the lead's latest reply means; null until a reply is read."`
	IntentSource *string         `bun:"intent_source" json:"intent_source" enum:"auto,manual"`
	// IntentConfidence is how sure the classifier was of the intent (0 to 1); null when a member set it or nothing was read.
	IntentConfidence *float64   `bun:"intent_confidence" json:"intent_confidence" doc:"How sure the classifier was of the latest reply's intent, 0 to 1 (1: an auto-reply by its headers); null when a member set the intent or no reply was read."`
	NeedsReview      bool       `bun:"needs_review" json:"needs_review" doc:"The classifier was unsure of the latest reply (below its threshold, 0.6 by default): intent is unclear until a member sets it."`
	AssigneeID       *string    `bun:"assignee_id" json:"assignee_id" format:"uuid"`
	Unread           bool       `bun:"unread" json:"unread" doc:"A reply came in since a member last marked the thread read or replied."`
	ReturnsAt        *time.Time `bun:"returns_at" json:"returns_at" doc:"When the lead is back, as their latest reply that named a return date said (an auto-reply's delay, a person's note)."`
	// The person a "no longer with the company" or "not the right
	// person" reply named instead.
	ReplacementName  *string   `bun:"replacement_name" json:"replacement_name" doc:"The person the lead's reply named instead of them, when it named one."`
	ReplacementEmail *string   `bun:"replacement_email" json:"replacement_email" doc:"That person's email address, when the reply gave one."`
	MessageCount     int       `bun:"message_count" json:"message_count"`
	LastMessageAt    time.Time `bun:"last_message_at" json:"last_message_at"`
	CreatedAt        time.Time `bun:"created_at" json:"created_at"`
	UpdatedAt        time.Time `bun:"updated_at" json:"updated_at"`
}

// Message is one message in a thread.
type Message struct {
	bun.BaseModel `bun:"table:messages,alias:m"`

	ID                string    `bun:"id,pk" json:"id" format:"uuid"`
	WorkspaceID       string    `bun:"workspace_id" json:"-"`
	ThreadID          string    `bun:"thread_id" json:"thread_id" format:"uuid"`
	Direction         string    `bun:"direction" json:"direction" enum:"out,in"`
	Status            string    `bun:"status" json:"status" enum:"sent,sending"`
	Subject           *string   `bun:"subject" json:"subject" doc:"Email only."`
	Body              string    `bun:"body" json:"body"`
	AutoReply         bool      `bun:"auto_reply" json:"auto_reply"`
	Intent            *Intent   `bun:"intent" json:"intent" enum:"interested,question,not_now,not_interested,ooo,wrong_person,unclear" doc:"Inbound only: what the classifier read."`
	IntentConfidence  *float64  `bun:"intent_confidence" json:"intent_confidence" doc:"Inbound only: how sure the classifier was of intent, 0 to 1."`
	SentBy            *string   `bun:"sent_by" json:"sent_by" format:"uuid" doc:"The member who replied by hand; null for the runner's messages and for replies."`
	ProviderMessageID *string   `bun:"provider_message_id" json:"provider_message_id"`
	VariantID         *string   `bun:"variant_id" json:"variant_id,omitempty" doc:"Outbound from a sequence step with variants: the variant sent."`
	SentAt            time.Time `bun:"sent_at" json:"sent_at"`
	CreatedAt         time.Time `bun:"created_at" json:"-"`
}

// ThreadView is a thread with its messages, oldest first, and what the
// sequences' rules did on it.
type ThreadView struct {
	Thread
	Messages []Message           `json:"messages"`
	Rules    []sequences.RuleRun `json:"rules" doc:"What the sequences' rules (on_reply, on_meeting_booked) did because of the thread's replies and the lead's meetings, the oldest first: each field's outcome, done, unchanged or refused with the reason."`
}
