package inbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
)

// EventReplyReceived is written for every reply taken in, with
// message.classified.
const EventReplyReceived = "reply.received"

// OutOfOfficeDelay is how long an auto-reply without a return date delays
// the lead's next step.
const OutOfOfficeDelay = 3 * 24 * time.Hour

// Stopper is what the inbox needs of the enrollments area: a reply a
// person wrote stops every live enrollment of the lead (reply-stop), an
// auto-reply delays them. The enrollments area implements it.
type Stopper interface {
	// PrefetchLive reads the live enrollments of leadIDs in one query,
	// inside the transaction ctx carries, for ForReply to take each lead's
	// once. Returns only the database's errors.
	PrefetchLive(ctx context.Context, workspaceID string, leadIDs []string) error
	// ForReply returns the lead's live enrollments as a reply finds them,
	// from PrefetchLive's read once (then from the database). Returns only
	// the database's errors.
	ForReply(ctx context.Context, workspaceID, leadID string) (ReplyStop, error)
	// Forget drops what PrefetchLive read of the lead: something else
	// happened to it, and the next reply reads afresh.
	Forget(ctx context.Context, leadID string)
}

// ReplyStop is what one reply does to the lead's live enrollments, in the
// transaction that takes the reply in.
type ReplyStop interface {
	// Answers returns the live enrollment the reply answers (the one the
	// sender works for), or empty strings.
	Answers(senderID string) (sequenceID, enrollmentID string)
	// Ending ends every live enrollment of the lead as replied, in
	// memory, and returns their events, for the inbox to write with the
	// reply's own in one statement.
	Ending(now time.Time) []events.Event
	// Replied writes what Ending changed and marks the lead replied.
	Replied(ctx context.Context, now time.Time) error
	// AutoReplied holds the lead's active enrollments due before until,
	// until then.
	AutoReplied(ctx context.Context, until, now time.Time) error
}

// StopWith sets what applies reply-stop. Without one, replies are kept
// and read and stop nothing (an inbox on its own).
func (svc *Service) StopWith(s Stopper) { svc.stopper = s }

// noStop is the reply-stop of an inbox without a Stopper.
type noStop struct{}

func (noStop) Answers(string) (string, string)                               { return "", "" }
func (noStop) Ending(time.Time) []events.Event                               { return nil }
func (noStop) Replied(context.Context, time.Time) error                      { return nil }
func (noStop) AutoReplied(context.Context, time.Time, time.Time) error       { return nil }
func (noStop) PrefetchLive(context.Context, string, []string) error          { return nil }
func (noStop) Forget(context.Context, string)                                {}
func (n noStop) ForReply(context.Context, string, string) (ReplyStop, error) { return n, nil }

// leadKey is a lead Prefetch read, in the transaction's memo.
type leadKey string

// Prefetch reads, in one query each, the leads of a batch of replies (the
// senders and leads of one workspace, pairwise), their threads and their
// live enrollments, for Receive to take each once from the transaction's
// memo.
func (svc *Service) Prefetch(ctx context.Context, workspaceID string, ss []*senders.Sender, leadIDs []string) error {
	pairs := make([][2]string, len(ss))
	channel := map[string]string{}
	for i, s := range ss {
		pairs[i] = [2]string{s.ID, leadIDs[i]}
		channel[s.ID] = string(s.Channel)
	}
	if err := svc.store.Prefetch(ctx, workspaceID, pairs, channel); err != nil {
		return err
	}
	if memo := db.TxMemo(ctx); memo != nil {
		ls, err := svc.leads.ByIDs(ctx, workspaceID, leadIDs)
		if err != nil {
			return err
		}
		for i := range ls {
			memo.Store(leadKey(ls[i].ID), &ls[i])
		}
	}
	return svc.stop().PrefetchLive(ctx, workspaceID, leadIDs)
}

// Forget drops what Prefetch read of a lead that something else happened
// to, so that its next reply reads afresh.
func (svc *Service) Forget(ctx context.Context, leadID string) {
	if memo := db.TxMemo(ctx); memo != nil {
		memo.Delete(leadKey(leadID))
	}
	svc.stop().Forget(ctx, leadID)
}

func (svc *Service) stop() Stopper {
	if svc.stopper == nil {
		return noStop{}
	}
	return svc.stopper
}

// LatestConversation returns the sender, sequence and client of the
// lead's latest thread (with senderID, when it is not empty): the
// conversation a meeting the lead booked came from. The sender is empty
// when the lead has no thread. Returns only the database's errors.
func (svc *Service) LatestConversation(ctx context.Context, leadID, senderID string) (sender string, sequenceID, clientID *string, err error) {
	th, err := svc.store.LatestThread(ctx, leadID, senderID)
	if err != nil || th == nil {
		return "", nil, nil, err
	}
	return th.SenderID, th.SequenceID, th.ClientID, nil
}

// LatestThread returns the lead's thread with the latest message (with
// senderID, when it is not empty), or nil when it has none: the
// conversation a meeting the lead booked came from. Returns only the
// database's errors.
func (svc *Service) LatestThread(ctx context.Context, leadID, senderID string) (*Thread, error) {
	return svc.store.LatestThread(ctx, leadID, senderID)
}

// Arrived is a reply a transport reported.
type Arrived struct {
	WorkspaceID       string
	Sender            *senders.Sender
	LeadID            string
	ProviderMessageID string
	Subject           string
	Body              string
	// ContentType is the body's: "text/html" for HTML (read as text by
	// the cleaner), anything else for plain text.
	ContentType string
	Headers     map[string]string
	// AutoReply: the transport itself marked it as sent by a machine.
	AutoReply bool
	At        time.Time
}

// ErrUnknownLead is a reply from a lead the workspace does not have.
var ErrUnknownLead = errors.New("inbox: reply from an unknown lead")

// Received is what came of an arrived reply.
type Received struct {
	Thread  *Thread
	Message *Message
	Read    Classification
	// Duplicate: the provider message was taken in before; nothing changed.
	Duplicate bool
}

// Receive takes in a reply inside the transaction ctx carries: it lands in
// its thread once per provider message id, is classified, and fires
// message.classified and reply.received. A reply a person wrote then
// stops every live enrollment of the lead (reply-stop); an auto-reply
// delays them until the return date it gives, or by OutOfOfficeDelay.
// Returns ErrUnknownLead for a lead the workspace does not have.
func (svc *Service) Receive(ctx context.Context, a Arrived) (*Received, error) {
	now := db.Now(ctx, svc.clock)
	if a.At.IsZero() {
		a.At = now
	}
	// The lead's live enrollments are read before anything is written, so
	// that every reply of a batch finds them as the batch began or as the
	// replies before it left them.
	stop, err := svc.stop().ForReply(ctx, a.WorkspaceID, a.LeadID)
	if err != nil {
		return nil, err
	}
	var lead *leads.Lead
	if memo := db.TxMemo(ctx); memo != nil {
		if v, ok := memo.LoadAndDelete(leadKey(a.LeadID)); ok && v.(*leads.Lead).WorkspaceID == a.WorkspaceID {
			lead = v.(*leads.Lead)
		}
	}
	if lead == nil {
		ls, err := svc.leads.ByIDs(ctx, a.WorkspaceID, []string{a.LeadID})
		if err != nil {
			return nil, err
		}
		if len(ls) == 0 {
			return nil, fmt.Errorf("%w: %s", ErrUnknownLead, a.LeadID)
		}
		lead = &ls[0]
	}
	sequenceID, enrollmentID := stop.Answers(a.Sender.ID)
	// The classifier reads the reply's new text; the message keeps the
	// whole body.
	read, err := svc.classifierFor(ctx, a.WorkspaceID).Classify(ctx, Incoming{Subject: a.Subject, Body: CleanReply(a.Body, a.ContentType), Headers: a.Headers, ReceivedAt: a.At})
	if err != nil {
		return nil, fmt.Errorf("inbox: classify: %w", err)
	}
	if !read.Intent.Valid() {
		read.Intent = Unclear
	}
	if a.AutoReply && !read.AutoReply {
		read.AutoReply, read.Review = true, false
		if read.Intent != WrongPerson {
			read.Intent = OutOfOffice
		}
	}
	if r := read.Replacement; r != nil {
		// The lead's own address and profile are no one else's.
		if r.Email != "" && strings.EqualFold(r.Email, lead.Address()) {
			r.Email = ""
		}
		if r.LinkedIn != "" && r.LinkedIn == strings.ToLower(apikit.Deref(lead.PublicIdentifier)) {
			r.LinkedIn = ""
		}
	}
	// Reply-stop on the safe side: everything but an auto-reply that
	// says the lead is away stops the lead's enrollments.
	stops := !read.AutoReply || read.Intent != OutOfOffice
	confidence := read.confidence()
	// A new thread is made with this reply counted and read.
	intent, source := read.Intent, SourceAuto
	fresh := &Thread{WorkspaceID: a.WorkspaceID, ClientID: lead.ClientID, SenderID: a.Sender.ID, LeadID: a.LeadID,
		Channel: a.Sender.Channel, SequenceID: optional(sequenceID), EnrollmentID: optional(enrollmentID), Intent: &intent, IntentSource: &source,
		IntentConfidence: confidence, NeedsReview: read.Review, Unread: true, MessageCount: 1, LastMessageAt: a.At}
	noted(fresh, read)
	th, created, err := svc.conversation(ctx, fresh)
	if err != nil {
		return nil, err
	}
	m := &Message{ID: apikit.NewID(), WorkspaceID: a.WorkspaceID, ThreadID: th.ID, Direction: In, Status: Sent,
		Subject: optional(a.Subject), Body: a.Body, AutoReply: read.AutoReply, Intent: &read.Intent, IntentConfidence: confidence,
		ProviderMessageID: optional(a.ProviderMessageID), SentAt: a.At, CreatedAt: now}
	added, err := svc.store.AddMessage(ctx, m)
	if err != nil {
		return nil, err
	}
	if !added {
		return &Received{Thread: th, Read: read, Duplicate: true}, nil
	}
	if !created {
		if err := svc.counted(ctx, th, sequenceID, enrollmentID, a.At, read); err != nil {
			return nil, err
		}
	}
	data := map[string]any{"sender_id": a.Sender.ID, "auto_reply": read.AutoReply, "provider_message_id": a.ProviderMessageID,
		"thread_id": th.ID, "message_id": m.ID, "intent": string(read.Intent), "body": a.Body}
	if confidence != nil {
		data["intent_confidence"] = *confidence
	}
	if a.Subject != "" {
		data["subject"] = a.Subject
	}
	var until time.Time
	if !stops {
		until = now.Add(OutOfOfficeDelay)
		if read.ReturnsAt != nil && read.ReturnsAt.After(now) {
			until = *read.ReturnsAt
		}
	}
	// A return date a person gave is a note for whoever answers them.
	if read.ReturnsAt != nil && read.ReturnsAt.After(now) {
		data["returns_at"] = *read.ReturnsAt
	}
	if r := read.Replacement; r != nil {
		data["replacement"] = map[string]any{"name": r.Name, "email": r.Email, "linkedin": r.LinkedIn}
	}
	received := events.Event{WorkspaceID: a.WorkspaceID, LeadID: a.LeadID, SenderID: a.Sender.ID, ClientID: apikit.Deref(th.ClientID),
		SequenceID: apikit.Deref(th.SequenceID), Kind: EventReplyReceived, Data: data}
	also := []events.Event{received}
	if stops {
		also = append(also, stop.Ending(now)...)
	}
	if err := svc.classified(ctx, th, m, read.Intent, SourceAuto, "", also...); err != nil {
		return nil, err
	}
	if stops {
		err = stop.Replied(ctx, now)
	} else {
		err = stop.AutoReplied(ctx, until, now)
	}
	if err != nil {
		return nil, err
	}
	return &Received{Thread: th, Message: m, Read: read}, nil
}

// noted keeps on the thread what the reply said about the lead: when they
// are back, and who replaces them.
func noted(th *Thread, read Classification) {
	if read.ReturnsAt != nil {
		th.ReturnsAt = read.ReturnsAt
	}
	if r := read.Replacement; r != nil {
		th.ReplacementName, th.ReplacementEmail = optional(r.Name), optional(r.Email)
	}
}

// counted adds a reply to an existing thread; sequenceID and enrollmentID
// are the enrollment it answers, if any.
func (svc *Service) counted(ctx context.Context, th *Thread, sequenceID, enrollmentID string, at time.Time, read Classification) error {
	if sequenceID != "" {
		th.SequenceID, th.EnrollmentID = &sequenceID, optional(enrollmentID)
	}
	// A person's reply sets the thread's intent, and so does an
	// auto-reply that says the lead left; an away notice only when
	// nothing a person wrote has been read yet.
	if !read.AutoReply || read.Intent == WrongPerson || th.Intent == nil || *th.Intent == OutOfOffice {
		intent, source := read.Intent, SourceAuto
		th.Intent, th.IntentSource = &intent, &source
		th.IntentConfidence, th.NeedsReview = read.confidence(), read.Review
	}
	noted(th, read)
	th.Unread = true
	svc.count(ctx, th, at)
	return svc.store.SaveThread(ctx, th)
}
