package senders

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Recipient is the lead an action is for, as a transport needs it.
type Recipient struct {
	LeadID           string
	Name             string
	LinkedInID       string
	PublicIdentifier string
	ProviderID       string
	Email            string
}

// Request is one action for a transport to perform.
type Request struct {
	// Key is the action's idempotency key: a transport performs a key at
	// most once, and Lookup finds it afterwards.
	Key     string
	Sender  *Sender
	Action  Action
	Lead    Recipient
	Note    string // invite
	Subject string // inmail, email
	Body    string // message, inmail, email
	// Thread is the conversation the action continues, when the sender's
	// transport kind threads (TransportKind.Threads): what the lead was
	// sent before by the same sender in the same sequence.
	Thread Thread
	// Purpose is why the action is performed: PurposeSequence,
	// PurposeEnrichment or PurposeReply.
	Purpose string
	// StepID and VariantID are the sequence's step the action sends, and
	// the step's variant ("" for a step without variants or an action of
	// no step): what a sandbox answers by (sandbox.Rates.Variants).
	StepID, VariantID string
	// RuleAt is when a sequence's rule made the enrollment the action
	// belongs to (zero for a member's enrolment): a rule may enrol a lead
	// after its reply (docs/SEQUENCES.md), and a sandbox's reply-stop
	// audit judges the replies before it accordingly.
	RuleAt time.Time
}

// Thread is what a sender sent a lead before in the same sequence, oldest
// first: an email continues it with In-Reply-To and References, a chat
// sends into the same conversation.
type Thread struct {
	// Earlier are the provider message ids of the earlier messages.
	Earlier []string
	// Subject is the first message's subject ("" if none).
	Subject string
}

// Purposes of an action.
const (
	// PurposeSequence: a step of a sequence.
	PurposeSequence = "sequence"
	// PurposeEnrichment: a profile view made to enrich a lead.
	PurposeEnrichment = "enrichment"
	// PurposeReply: a member's reply in a conversation, sent at once and
	// also outside working hours.
	PurposeReply = "reply"
)

// Result is what a transport reports of a performed action.
type Result struct {
	ProviderMessageID string
	At                time.Time
	// Profile is what a profile view found (enrichment).
	Profile map[string]any
	// Member is the person the action reached, when the transport had to
	// resolve the lead to do it (a LinkedIn member looked up by a public
	// identifier): the lead keeps it, so that what the provider later
	// reports about that person (an acceptance, a reply) finds the lead.
	Member *Member
	// Invitation is the provider's id of an invitation sent ("" for other
	// actions): an acceptance or a poll that names it finds the lead.
	Invitation string
}

// Member is a person as a provider knows them: its own id for them, and
// the public identifier beside it (LinkedIn's linkedin.com/in/<name>).
type Member struct {
	ProviderID       string
	PublicIdentifier string
}

// ErrorKind says how the runner treats a failed action.
type ErrorKind string

// The kinds of transport errors.
const (
	// Transient: try again later (timeouts, provider hiccups).
	Transient ErrorKind = "transient"
	// Permanent: this action for this lead cannot succeed. It concerns
	// the lead alone: the sender goes on with everyone else.
	Permanent ErrorKind = "permanent"
	// SenderLevel: the sender's account is in trouble; Signal says how.
	SenderLevel ErrorKind = "sender"
)

// CodeBounced is the code of a permanent error for an address the
// provider refused (SMTP 550, 553): it is recorded as a bounce.
const CodeBounced = "email_bounced"

// TransportError is an action that was not performed. Any other error from
// Perform means the outcome is unknown (the action may have happened): the
// runner then asks Lookup later instead of sending again.
type TransportError struct {
	Kind    ErrorKind
	Code    string // e.g. profile_not_found, rate_limited
	Message string
	Signal  string // SenderLevel: one of the Signal constants
	// RetryAfter is the provider's hint of when to try again (a 429's
	// Retry-After): a transient error waits at least that long, and a
	// rate-limit signal lasts that long.
	RetryAfter time.Duration
	// Member is the person the transport resolved before the refusal
	// (the lead keeps it, as with Result.Member), or nil.
	Member *Member
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("%s transport error %s: %s", e.Kind, e.Code, e.Message)
}

// AsTransportError returns the *TransportError in err's chain.
func AsTransportError(err error) (*TransportError, bool) {
	var te *TransportError
	ok := errors.As(err, &te)
	return te, ok
}

// Inbound kinds: what a transport reports happened outside.
const (
	InboundAccepted = "accepted"
	InboundReply    = "reply"
	InboundBounce   = "bounce"
	InboundSignal   = "signal"
)

// Inbound is one thing that happened outside: an invitation accepted, a
// reply, a bounce, or a signal about a sender's account.
type Inbound struct {
	Kind     string
	SenderID string
	LeadID   string
	At       time.Time
	// Reply
	ProviderMessageID string
	Subject           string
	Body              string
	Headers           map[string]string
	AutoReply         bool
	// Signal
	Signal  string
	Message string
	// Match finds the lead when the transport cannot name it (LeadID ""):
	// a mailbox knows the message it read, not the lead who wrote it.
	Match *Match `json:",omitempty"`
}

// Match is what identifies the lead of an inbound report whose transport
// does not know the lead. The ingest path tries, in order, the message ids
// against what the sender sent, then the address and the provider id
// against the workspace's leads. A report that matches nothing is left
// alone and counted.
type Match struct {
	// MessageIDs are the provider message ids the report answers or is
	// about: In-Reply-To then References (newest first) for a reply, the
	// original message for a bounce.
	MessageIDs []string `json:",omitempty"`
	// Email is the address that wrote (a reply).
	Email string `json:",omitempty"`
	// ProviderID is the provider's id of the person (LinkedIn).
	ProviderID string `json:",omitempty"`
	// PublicIdentifier is the person's public identifier (LinkedIn's
	// linkedin.com/in/<name>), tried after the provider id.
	PublicIdentifier string `json:",omitempty"`
	// Invitation is the provider's id of the invitation the report is
	// about (an acceptance): leadline's own sent invitation names the lead.
	Invitation string `json:",omitempty"`
	// Conversation is the provider's id of the conversation a reply came
	// in (a LinkedIn chat): the lead of leadline's own messages in it.
	Conversation string `json:",omitempty"`
}

// ConversationPrefix is how the provider message ids of a conversation's
// messages start: the conversation's id and a slash, followed by the
// message's own id.
func ConversationPrefix(conversation string) string { return conversation + "/" }

// Member returns the person m names, or nil when it names none.
func (m *Match) Member() *Member {
	if m == nil || m.ProviderID == "" {
		return nil
	}
	return &Member{ProviderID: m.ProviderID, PublicIdentifier: m.PublicIdentifier}
}

// SentInvitation is an invitation a sender sent that is neither accepted
// nor withdrawn, as leadline recorded it.
type SentInvitation struct {
	LeadID string
	// Invitation is the provider's id of the invitation ("" for one sent
	// before leadline kept it).
	Invitation string
	// MemberID is the provider's id of the person invited ("" when the
	// transport did not report it).
	MemberID string
	SentAt   time.Time
}

// Invitations gives a transport the invitations its senders have pending:
// polling compares them with the provider's own list to learn of
// acceptances the provider reports no other way.
type Invitations interface {
	// PendingInvitations returns up to limit of s's pending invitations,
	// newest first. Returns only the database's errors.
	PendingInvitations(ctx context.Context, senderID string, limit int) ([]SentInvitation, error)
}

// InboundSink takes what a transport learns in the background (a mailbox
// reader, a provider's webhook): the durable inbound queue, each report
// once per source and dedupe key.
type InboundSink interface {
	// PushReport queues in for the workspace; it reports whether in was
	// queued now (false: the same source and dedupe key came before).
	PushReport(ctx context.Context, workspaceID, source, dedupe string, in Inbound) (bool, error)
}

// Transport performs actions for senders and reports what happened outside.
// The sandbox network, provider adapters and mailboxes implement it.
type Transport interface {
	// Perform performs req once per key. A *TransportError means it was
	// not performed; any other error leaves the outcome unknown.
	Perform(ctx context.Context, req Request) (Result, error)
	// Lookup returns the result of the action performed under req.Key,
	// and false when none was. req is the request Perform was given (the
	// runner builds it again after a restart): a mailbox looks in
	// req.Sender's sent folder, a provider that takes no idempotency key
	// looks for what req would have sent to req.Lead.
	Lookup(ctx context.Context, req Request) (Result, bool, error)
	// Inbound returns, once each, what happened outside up to until.
	Inbound(ctx context.Context, until time.Time) ([]Inbound, error)
	// NextInbound returns when the next inbound event is due, for
	// simulated time; false when none is known.
	NextInbound() (time.Time, bool)
}

// Prober is a transport that can test a sender's account. The runner's
// hourly checks ask it of every sender that a transport signal stopped
// (TransportSignals); the sender goes on when it answers nil. A nil
// answer means the account connects and signs in now.
type Prober interface {
	Probe(ctx context.Context, s *Sender) error
}

// StoppedByTransport reports whether one of s's health reasons is a
// transport signal: the sender waits for its transport to connect again.
func (s *Sender) StoppedByTransport() bool {
	for _, r := range s.HealthReasons {
		if slices.Contains(TransportSignals, r.Code) {
			return true
		}
	}
	return false
}

// RateLimitedUntil returns when the provider's rate limit on s lapses, and
// true while it holds at now: nothing is tried against the account until
// then, whichever lead it is for.
func (s *Sender) RateLimitedUntil(now time.Time) (time.Time, bool) {
	for _, r := range s.HealthReasons {
		if r.Code == SignalProviderRateLimited && r.Until != nil && r.Until.After(now) {
			return *r.Until, true
		}
	}
	return time.Time{}, false
}

// Checker is a transport that can say, step by step, what works for a
// sender: `leadline senders check` prints its answer.
type Checker interface {
	Check(ctx context.Context, s *Sender) []CheckStep
}

// CheckStep is one thing a check tried: what, whether it worked, and
// what it found or what to fix.
type CheckStep struct {
	What   string
	OK     bool
	Detail string
}
