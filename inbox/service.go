package inbox

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// Senders is what the inbox needs of the senders area.
type Senders interface {
	// Sender returns the sender with id in any workspace. Returns an
	// error that db.IsNoRows recognises if there is none.
	Sender(ctx context.Context, id string) (*senders.Sender, error)
	// Reserve takes one unit of a's budget for s at t in the transaction
	// ctx carries: nil when the action may run, else what blocks it.
	// Returns only the database's errors.
	Reserve(ctx context.Context, s *senders.Sender, a senders.Action, t time.Time) (*senders.Blocked, error)
	// Settle records what an action's outcome means for s, as for every
	// send: the unit Reserve took at reservedAt back for a refusal or a
	// retry, a sender-level signal with the provider's retry hint. Returns
	// only the database's errors.
	Settle(ctx context.Context, s *senders.Sender, a senders.Action, reservedAt time.Time, perr error) error
}

// Leads is what the inbox needs of the leads area.
type Leads interface {
	// ByIDs returns the workspace's leads among ids; an id the workspace
	// does not have is left out, not an error.
	ByIDs(ctx context.Context, workspaceID string, ids []string) ([]leads.Lead, error)
}

// Catalog is what the inbox needs of the workspace area.
//
// Both methods return only the database's errors.
type Catalog interface {
	// BlacklistHits returns, for each of people in order, the blacklist
	// entry it matches or "".
	BlacklistHits(ctx context.Context, workspaceID string, people []workspace.Person) ([]string, error)
	// IsMember reports whether memberID is an active member of the
	// workspace (false for an id that is not a valid id).
	IsMember(ctx context.Context, workspaceID, memberID string) (bool, error)
}

// EventLog is what the inbox needs of the activity log.
type EventLog = events.Emitter

// Service holds the inbox rules.
type Service struct {
	db         *db.DB
	store      Store
	clock      apikit.Clock
	senders    Senders
	leads      Leads
	catalog    Catalog
	log        EventLog
	classifier Classifier
	stopper    Stopper
	rules      RuleLog
	// custom: UseClassifier chose the classifier for every workspace.
	custom bool
	teams  teamModels

	mu         sync.RWMutex
	transports map[string]senders.Transport
}

// NewService returns the inbox on d, reading replies with
// DefaultClassifier (a workspace's own trained model, when it has a better
// one).
func NewService(d *db.DB, clock apikit.Clock, ss Senders, ls Leads, cat Catalog, log EventLog) *Service {
	return &Service{db: d, store: NewBunStore(d), clock: clock, senders: ss, leads: ls, catalog: cat, log: log, classifier: DefaultClassifier()}
}

// RuleLog is what the inbox needs of the sequences area to show what its
// rules did on a thread.
type RuleLog interface {
	// RunsOfThread returns the rules that ran on the workspace's thread,
	// the oldest first. Returns only the database's errors.
	RunsOfThread(ctx context.Context, workspaceID, threadID string) ([]sequences.RuleRun, error)
}

// RulesWith sets where a thread's view reads what the sequences' rules
// did on it. Without one, a view shows none.
func (svc *Service) RulesWith(r RuleLog) { svc.rules = r }

// UseClassifier replaces the built-in classifier, for example with a
// model-backed one.
func (svc *Service) UseClassifier(c Classifier) { svc.classifier, svc.custom = c, true }

// UseTransports sets the transports members' replies go through: the same
// ones the runner sends with.
func (svc *Service) UseTransports(ts map[string]senders.Transport) {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	svc.transports = ts
}

func (svc *Service) transport(name string) senders.Transport {
	svc.mu.RLock()
	defer svc.mu.RUnlock()
	return svc.transports[name]
}

// Outgoing is a message the runner sent in a sequence.
type Outgoing struct {
	WorkspaceID       string
	ClientID          *string // the lead's client
	Sender            *senders.Sender
	LeadID            string
	SequenceID        string
	EnrollmentID      string
	Subject           string
	Body              string
	ProviderMessageID string
	At                time.Time
	// VariantID is the sequence step's variant the message sent, if any.
	VariantID string
}

// RecordSent puts a message the runner sent into its thread, inside the
// transaction ctx carries.
func (svc *Service) RecordSent(ctx context.Context, o Outgoing) error {
	// A new thread is made with its first message counted.
	th, created, err := svc.conversation(ctx, &Thread{WorkspaceID: o.WorkspaceID, ClientID: o.ClientID, SenderID: o.Sender.ID, LeadID: o.LeadID,
		Channel: o.Sender.Channel, SequenceID: optional(o.SequenceID), EnrollmentID: optional(o.EnrollmentID), MessageCount: 1, LastMessageAt: o.At})
	if err != nil {
		return err
	}
	m := &Message{ID: apikit.NewID(), WorkspaceID: o.WorkspaceID, ThreadID: th.ID, Direction: Out, Status: Sent,
		Subject: optional(o.Subject), Body: o.Body, ProviderMessageID: optional(o.ProviderMessageID), SentAt: o.At, CreatedAt: db.Now(ctx, svc.clock),
		VariantID: optional(o.VariantID)}
	added, err := svc.store.AddMessage(ctx, m)
	if err != nil || !added || created {
		return err
	}
	th.SequenceID, th.EnrollmentID = optional(o.SequenceID), optional(o.EnrollmentID)
	svc.count(ctx, th, o.At)
	return svc.store.SaveThread(ctx, th)
}

// LeadClientChanged moves the lead's threads to its new client, inside
// the transaction ctx carries: a thread's client is its lead's, which is
// what client-scoped keys see.
func (svc *Service) LeadClientChanged(ctx context.Context, workspaceID, leadID string, clientID *string) error {
	return svc.store.MoveLead(ctx, workspaceID, leadID, clientID, db.Now(ctx, svc.clock))
}

// conversation returns the thread of t's sender, lead and channel, locked
// for this transaction on Postgres, or makes it from t (created).
func (svc *Service) conversation(ctx context.Context, t *Thread) (*Thread, bool, error) {
	now := db.Now(ctx, svc.clock)
	t.ID, t.CreatedAt, t.UpdatedAt = apikit.NewID(), now, now
	th, err := svc.store.Conversation(ctx, t)
	return th, th == t, err
}

// count adds one message at at to th, in the transaction ctx carries.
func (svc *Service) count(ctx context.Context, th *Thread, at time.Time) {
	th.MessageCount++
	if at.After(th.LastMessageAt) {
		th.LastMessageAt = at
	}
	th.UpdatedAt = db.Now(ctx, svc.clock)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// classified writes message.classified for m (nil: a thread without a
// reply) read as intent, with the events in also.
func (svc *Service) classified(ctx context.Context, th *Thread, m *Message, intent Intent, source, memberID string, also ...events.Event) error {
	data := map[string]any{"thread_id": th.ID, "lead_id": th.LeadID, "sender_id": th.SenderID, "sequence_id": th.SequenceID,
		"intent": string(intent), "intent_source": source, "message_id": nil, "auto_reply": false}
	if m != nil {
		data["message_id"], data["auto_reply"] = m.ID, m.AutoReply
	}
	if source == SourceAuto && m != nil && m.IntentConfidence != nil {
		data["intent_confidence"], data["needs_review"] = *m.IntentConfidence, th.NeedsReview
	}
	return svc.log.EmitMany(ctx, append([]events.Event{{WorkspaceID: th.WorkspaceID, LeadID: th.LeadID, SenderID: th.SenderID, ClientID: apikit.Deref(th.ClientID),
		SequenceID: apikit.Deref(th.SequenceID), EnrollmentID: apikit.Deref(th.EnrollmentID), Kind: EventClassified, MemberID: memberID, Data: data}}, also...))
}

// Visible returns the thread with id if the principal may see it.
// Returns E_NOT_FOUND if it does not exist or is outside the key's scope.
func (svc *Service) Visible(ctx context.Context, p apikit.Principal, id string, lock bool) (*Thread, error) {
	return db.Visible(p, "Thread", id, func() (*Thread, error) { return svc.store.ByID(ctx, p.WorkspaceID, id, lock) },
		func(t *Thread) *string { return t.ClientID })
}

// List returns one page of the threads visible to the principal, newest
// activity first.
// Returns E_PAYLOAD_INVALID for a bad page or intent and E_FORBIDDEN for a
// client filter outside the key's scope.
func (svc *Service) List(ctx context.Context, p apikit.Principal, f Filter) (apikit.Page[Thread], error) {
	if err := apikit.CheckPage(&f.Limit, f.Offset); err != nil {
		return apikit.Page[Thread]{}, err
	}
	if f.Intent != "" && !f.Intent.Valid() {
		return apikit.Page[Thread]{}, badIntent(f.Intent)
	}
	if err := apikit.CheckClientFilter(p, f.ClientID); err != nil {
		return apikit.Page[Thread]{}, err
	}
	ts, total, err := svc.store.List(ctx, p.WorkspaceID, p.ClientIDs, f)
	if err != nil {
		return apikit.Page[Thread]{}, err
	}
	return apikit.NewPage(ts, total, f.Limit, f.Offset), nil
}

// Get returns the thread with its messages, oldest first. Reading changes
// nothing: marking a thread read is MarkRead.
// Returns E_NOT_FOUND if it is not visible.
func (svc *Service) Get(ctx context.Context, p apikit.Principal, id string) (*ThreadView, error) {
	th, err := svc.Visible(ctx, p, id, false)
	if err != nil {
		return nil, err
	}
	ms, err := svc.store.Messages(ctx, th.ID)
	if err != nil {
		return nil, err
	}
	if ms == nil {
		ms = []Message{}
	}
	runs := []sequences.RuleRun{}
	if svc.rules != nil {
		if runs, err = svc.rules.RunsOfThread(ctx, th.WorkspaceID, th.ID); err != nil {
			return nil, err
		}
	}
	return &ThreadView{Thread: *th, Messages: ms, Rules: runs}, nil
}

func badIntent(i Intent) error {
	names := make([]string, len(Intents))
	for k, v := range Intents {
		names[k] = string(v)
	}
	return apikit.Invalid(fmt.Sprintf("intent %q is not one of %s.", i, strings.Join(names, ", ")), "Send one of the seven intents.")
}

// SetIntent sets a thread's intent by hand (intent_source manual). It
// fires message.classified again only when the intent changed.
// Returns E_PAYLOAD_INVALID for an intent outside the seven and E_NOT_FOUND
// if the thread is not visible.
func (svc *Service) SetIntent(ctx context.Context, p apikit.Principal, id string, intent Intent) (*Thread, error) {
	if !intent.Valid() {
		return nil, badIntent(intent)
	}
	var th *Thread
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if th, err = svc.Visible(ctx, p, id, true); err != nil {
			return err
		}
		changed := th.Intent == nil || *th.Intent != intent
		source := SourceManual
		th.Intent, th.IntentSource, th.UpdatedAt = &intent, &source, db.Now(ctx, svc.clock)
		th.IntentConfidence, th.NeedsReview = nil, false
		if err := svc.store.SaveThread(ctx, th); err != nil || !changed {
			return err
		}
		m, err := svc.store.LastInbound(ctx, th.ID)
		if db.IsNoRows(err) {
			m, err = nil, nil
		}
		if err != nil {
			return err
		}
		return svc.classified(ctx, th, m, intent, SourceManual, p.MemberID)
	})
	return th, err
}

// SetAssignee gives the thread to a member of the workspace, or to nobody
// (nil).
// Returns E_PAYLOAD_INVALID for an id that is not an active member and
// E_NOT_FOUND if the thread is not visible.
func (svc *Service) SetAssignee(ctx context.Context, p apikit.Principal, id string, assigneeID *string) (*Thread, error) {
	var th *Thread
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if th, err = svc.Visible(ctx, p, id, true); err != nil {
			return err
		}
		if err := apikit.CheckAssignee(ctx, svc.catalog.IsMember, p.WorkspaceID, assigneeID, "thread"); err != nil {
			return err
		}
		if apikit.Deref(th.AssigneeID) == apikit.Deref(assigneeID) {
			return nil
		}
		th.AssigneeID, th.UpdatedAt = assigneeID, db.Now(ctx, svc.clock)
		if err := svc.store.SaveThread(ctx, th); err != nil {
			return err
		}
		return svc.log.EmitMany(ctx, []events.Event{{WorkspaceID: th.WorkspaceID, LeadID: th.LeadID, SenderID: th.SenderID, ClientID: apikit.Deref(th.ClientID),
			Kind: EventAssigned, MemberID: p.MemberID, Data: map[string]any{"thread_id": th.ID, "assignee_id": assigneeID}}})
	})
	return th, err
}

// MarkRead marks the thread read.
// Returns E_NOT_FOUND if it is not visible.
func (svc *Service) MarkRead(ctx context.Context, p apikit.Principal, id string) (*Thread, error) {
	var th *Thread
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if th, err = svc.Visible(ctx, p, id, true); err != nil || !th.Unread {
			return err
		}
		th.Unread, th.UpdatedAt = false, db.Now(ctx, svc.clock)
		return svc.store.SaveThread(ctx, th)
	})
	return th, err
}

// ReplyInput is the body of a member's reply.
type ReplyInput struct {
	Body    string `json:"body" minLength:"1" maxLength:"20000" text:"multiline" doc:"The text; at most 8,000 characters on LinkedIn."`
	Subject string `json:"subject,omitempty" maxLength:"500" doc:"Email threads only; by default Re: and the thread's latest subject. One line: no line breaks, tabs or other control characters."`
}

// maxLinkedInMessage is the longest message LinkedIn takes.
const maxLinkedInMessage = 8000

// Reply sends a member's message through the thread's sender and
// transport. It counts against the sender's message or email cap; outside
// working hours it is still sent (a person answers a person). The message
// is recorded as sending before the transport is called and as sent after,
// so that a crash in between leaves a trace instead of a lost message.
// Returns E_NOT_FOUND if the thread is not visible, E_PAYLOAD_INVALID for
// a bad body or subject, and E_CONFLICT when the lead is do-not-contact or
// blacklisted, the sender is restricted or disconnected, its cap is used
// up, or the provider refused the message.
func (svc *Service) Reply(ctx context.Context, p apikit.Principal, id string, in ReplyInput) (*Message, error) {
	if err := apikit.CheckText("", in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Body) == "" {
		return nil, apikit.Invalid("body is empty.", "Send the text of the reply in body.")
	}
	var (
		th     *Thread
		s      *senders.Sender
		lead   *leads.Lead
		m      *Message
		action senders.Action
		thread senders.Thread
	)
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if th, err = svc.Visible(ctx, p, id, true); err != nil {
			return err
		}
		if s, err = svc.senders.Sender(ctx, th.SenderID); err != nil {
			return err
		}
		action = senders.Message
		if s.Channel == senders.Email {
			action = senders.SendEmail
			if in.Subject == "" {
				in.Subject = svc.replySubject(ctx, th)
			}
		} else if in.Subject != "" {
			return apikit.Invalid("subject is for email threads; this thread is on LinkedIn.", "Leave subject out.")
		} else if utf8.RuneCountInString(in.Body) > maxLinkedInMessage {
			return apikit.Invalid(fmt.Sprintf("body has %d characters; LinkedIn takes at most %d.", utf8.RuneCountInString(in.Body), maxLinkedInMessage),
				"Shorten the message.")
		}
		ls, err := svc.leads.ByIDs(ctx, th.WorkspaceID, []string{th.LeadID})
		if err != nil {
			return err
		}
		if len(ls) == 0 {
			return apikit.NotFound("Thread " + id)
		}
		lead = &ls[0]
		if err := svc.mayReply(ctx, s, lead); err != nil {
			return err
		}
		if kind, _ := senders.KindOf(s.Transport); kind.Threads {
			// The reply continues the conversation: In-Reply-To the lead's
			// latest message, the same chat.
			msgs, err := svc.store.Messages(ctx, th.ID)
			if err != nil {
				return err
			}
			thread = continued(msgs)
		}
		if svc.transport(s.Transport) == nil {
			return apikit.Conflict(fmt.Sprintf("The sender %s's transport (%s) is not running in this process.", s.Name, s.Transport),
				"Reply through a leadline server that runs the sender's transport (leadline serve).")
		}
		now := db.Now(ctx, svc.clock)
		blocked, err := svc.senders.Reserve(ctx, s, action, now)
		if err != nil {
			return err
		}
		if blocked != nil {
			return capConflict(s, blocked)
		}
		m = &Message{ID: apikit.NewID(), WorkspaceID: th.WorkspaceID, ThreadID: th.ID, Direction: Out, Status: Sending,
			Subject: optional(in.Subject), Body: in.Body, SentBy: optional(p.MemberID), SentAt: now, CreatedAt: now}
		_, err = svc.store.AddMessage(ctx, m)
		return err
	})
	if err != nil {
		return nil, err
	}
	t := svc.transport(s.Transport)
	req := senders.Request{Key: "reply:" + m.ID, Sender: s, Action: action, Lead: lead.Recipient(),
		Subject: in.Subject, Body: in.Body, Thread: thread, Purpose: senders.PurposeReply}
	// The one send path (senders.Send, senders.Settle), as the runner's.
	res, perr := senders.Send(ctx, t, req)
	outcome := senders.Classify(perr)
	err = svc.db.InTx(ctx, func(ctx context.Context) error {
		switch outcome {
		case senders.OutcomeSent:
			return svc.sent(ctx, p, th.ID, m, action, res)
		case senders.OutcomeUnknown:
			// It may have gone out: the message stays as sending and the
			// budget spent, so that nobody sends it twice on a guess.
			return nil
		}
		return svc.unsent(ctx, s, action, m, perr)
	})
	if err != nil {
		return nil, err
	}
	switch outcome {
	case senders.OutcomeSent:
		return m, nil
	case senders.OutcomeUnknown:
		return nil, apikit.Conflict("The provider did not answer, and leadline cannot tell whether the message went out; it stays in the thread as sending.",
			"Look at the conversation with the provider before you send it again.")
	}
	te, _ := senders.AsTransportError(perr)
	remedy := "This message cannot reach the lead; nothing was sent."
	if te.Kind == senders.Transient {
		remedy = "Nothing was sent; try again in a few minutes."
	} else if te.Kind == senders.SenderLevel {
		remedy = "Nothing was sent; GET /v1/senders/{id}/health shows the sender's state."
	}
	return nil, apikit.Conflict(fmt.Sprintf("The provider refused the message (%s): %s.", te.Code, te.Message), remedy)
}

// replySubject is "Re: " and the thread's latest subject, made one line:
// a subject a lead's provider sent, or one stored before subjects were
// held to one line, may hold a line break, which must never reach the
// header of the reply.
func (svc *Service) replySubject(ctx context.Context, th *Thread) string {
	ms, err := svc.store.Messages(ctx, th.ID)
	if err != nil {
		return ""
	}
	for i := len(ms) - 1; i >= 0; i-- {
		if sub := apikit.Flatten(apikit.Deref(ms[i].Subject)); sub != "" {
			if strings.HasPrefix(strings.ToLower(sub), "re:") {
				return sub
			}
			return "Re: " + sub
		}
	}
	return ""
}

// mayReply refuses a reply the platform's rules forbid.
func (svc *Service) mayReply(ctx context.Context, s *senders.Sender, l *leads.Lead) error {
	if l.DoNotContact {
		return apikit.Conflict("The lead is do-not-contact: nothing is sent to them.",
			"Leave the conversation; if the lead asked to hear from you again, clear it with DELETE /v1/leads/{id}/suppress first.")
	}
	hits, err := svc.catalog.BlacklistHits(ctx, l.WorkspaceID, []workspace.Person{l.Person()})
	if err != nil {
		return err
	}
	if hits[0] != "" {
		return apikit.Conflict("The lead is on the workspace's blacklist ("+hits[0]+"): nothing is sent to them.",
			"Remove the entry from the blacklist in the setup file and apply it, if it is wrong.")
	}
	switch s.Health {
	case senders.Restricted:
		return apikit.Conflict(fmt.Sprintf("The sender %s is restricted by its provider: it sends nothing.", s.Name),
			"Wait for the restriction to end (GET /v1/senders/{id}/health), or answer from another account.")
	case senders.Disconnected:
		return apikit.Conflict(fmt.Sprintf("The sender %s is disconnected: it sends nothing.", s.Name),
			"Reconnect the account with its provider, then reply again.")
	}
	return nil
}

// capConflict is the refusal of a reply held by a limit.
func capConflict(s *senders.Sender, b *senders.Blocked) error {
	what := map[string]string{
		"daily_cap_reached": "used today's %s budget", "warmup_limit": "reached today's %s limit of its warm-up ramp",
		"sender_restricted": "is restricted (%s)", "sender_disconnected": "is disconnected (%s)",
	}[b.Code]
	if what == "" {
		what = "may send no more %s today (" + b.Code + ")"
	}
	return apikit.Conflict(fmt.Sprintf("The sender %s "+what+".", s.Name, b.Action),
		fmt.Sprintf("Reply after %s, when the sender's budget resets, or from another sender.", b.Until.Format(time.RFC3339)))
}

// sent records a member's message as sent.
func (svc *Service) sent(ctx context.Context, p apikit.Principal, threadID string, m *Message, action senders.Action, res senders.Result) error {
	th, err := svc.store.ByID(ctx, p.WorkspaceID, threadID, true)
	if err != nil {
		return err
	}
	now := db.Now(ctx, svc.clock)
	m.Status, m.ProviderMessageID, m.SentAt = Sent, optional(res.ProviderMessageID), now
	if err := svc.store.SaveMessage(ctx, m); err != nil {
		return err
	}
	th.Unread = false
	svc.count(ctx, th, now)
	if err := svc.store.SaveThread(ctx, th); err != nil {
		return err
	}
	return svc.log.EmitMany(ctx, []events.Event{{WorkspaceID: th.WorkspaceID, LeadID: th.LeadID, SenderID: th.SenderID, ClientID: apikit.Deref(th.ClientID),
		SequenceID: apikit.Deref(th.SequenceID), Kind: "action.sent", MemberID: p.MemberID,
		Data: map[string]any{"action": string(action), "purpose": senders.PurposeReply, "thread_id": th.ID, "message_id": m.ID}}})
}

// unsent undoes a member's message the provider did not take: the budget
// goes back and the message is removed; a sender-level error changes the
// sender's health.
func (svc *Service) unsent(ctx context.Context, s *senders.Sender, action senders.Action, m *Message, perr error) error {
	if err := svc.senders.Settle(ctx, s, action, m.SentAt, perr); err != nil {
		return err
	}
	return svc.store.DeleteMessage(ctx, m)
}
