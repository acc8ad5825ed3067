// Package rules runs what a sequence's rules say a reply or a booked
// meeting does to the lead, beyond reply-stop: move it to a stage, tag it,
// give its conversation to a member, open a task, enrol it in another
// sequence (now or days later), enrol the person a "wrong person" reply
// names instead (docs/SEQUENCES.md, Replies that move leads on).
//
// A rule runs once per reply message or booking, in the transaction that
// takes the reply or booking in, through the same services and checks as
// a member's action. What it cannot do is recorded with the reason (a
// refusal), never an error that would lose the reply: only the database's
// errors are returned.
package rules

import (
	"context"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/workspace"
)

// MaxMoves is how many times rules may enrol one lead in a sequence: with
// the rule that never enrols a lead back into a sequence a rule moved it
// out of (nor, as for any enrolment, into one it was ever enrolled in),
// it bounds a chain of rules, so that two sequences cannot bounce a lead
// between them.
const MaxMoves = 3

// Leads is what the rules need of the leads area.
type Leads interface {
	// ByIDs returns the workspace's leads among ids; an id the workspace
	// does not have is left out. Returns only the database's errors.
	ByIDs(ctx context.Context, workspaceID string, ids []string) ([]leads.Lead, error)
	// SetStage sets the lead's stage. Returns E_NOT_FOUND if the lead is
	// not visible and E_PAYLOAD_INVALID for a stage not the workspace's.
	SetStage(ctx context.Context, p apikit.Principal, id string, stageID *string) (*leads.LeadDetail, error)
	// AddTags tags the lead. Returns E_NOT_FOUND if the lead is not
	// visible and E_PAYLOAD_INVALID for a tag not the workspace's.
	AddTags(ctx context.Context, p apikit.Principal, id string, tagIDs []string) (*leads.LeadDetail, error)
	// MatchInbound returns the id of the workspace's lead with the email
	// address or public identifier, "" for none. Returns only the
	// database's errors.
	MatchInbound(ctx context.Context, workspaceID, email, providerID, publicIdentifier string) (string, error)
	// Upsert creates a lead (or updates the one it matches). Returns
	// E_PAYLOAD_INVALID for bad input and E_CONFLICT for a lead the
	// principal may not see.
	Upsert(ctx context.Context, p apikit.Principal, in leads.LeadInput) (*leads.Result, error)
}

// Catalog is what the rules need of the workspace area.
//
// Every method returns only the database's errors.
type Catalog interface {
	// NamedByName returns the workspace's entries of kind among names.
	NamedByName(ctx context.Context, workspaceID string, kind workspace.Kind, names []string) ([]workspace.Named, error)
	// ActiveMemberID returns the id of the active member with email, or "".
	ActiveMemberID(ctx context.Context, workspaceID, email string) (string, error)
	// BlacklistHits returns, for each of people in order, the blacklist
	// entry it matches or "".
	BlacklistHits(ctx context.Context, workspaceID string, people []workspace.Person) ([]string, error)
}

// Inbox is what the rules need of the inbox.
type Inbox interface {
	// SetAssignee gives the thread to a member. Returns E_PAYLOAD_INVALID
	// for one who is not an active member and E_NOT_FOUND for a thread
	// not visible.
	SetAssignee(ctx context.Context, p apikit.Principal, id string, assigneeID *string) (*inbox.Thread, error)
	// LatestThread returns the lead's thread with the latest message
	// (with senderID, when not empty), or nil for none. Returns only the
	// database's errors.
	LatestThread(ctx context.Context, leadID, senderID string) (*inbox.Thread, error)
}

// Tasks is what the rules need of the tasks area.
type Tasks interface {
	// Open creates the task of t's visit (once). Returns only the
	// database's errors.
	Open(ctx context.Context, t tasks.Task) (*tasks.Task, error)
}

// Enrollments is what the rules need of the enrollments area, the one
// writer of enrollments.
type Enrollments interface {
	// CommitWith enrols leads through every check of a commit. Returns
	// E_NOT_FOUND for a sequence not visible and E_GRAPH_INVALID for one
	// whose graph cannot run.
	CommitWith(ctx context.Context, p apikit.Principal, in enrollments.EnrollInput, opt enrollments.CommitOptions) (*enrollments.CommitResult, error)
	// ForLead returns the lead's enrollments, newest first. Returns only
	// the database's errors.
	ForLead(ctx context.Context, workspaceID, leadID string) ([]enrollments.Enrollment, error)
	// FlushReplyStops writes the reply-stops the transaction holds back,
	// so that an enrolment sees the lead's enrollments ended. Returns
	// only the database's errors.
	FlushReplyStops(ctx context.Context) error
}

// Sequences is what the rules need of the sequences area.
type Sequences interface {
	// ByID and ByName return the workspace's sequence; an error that
	// db.IsNoRows recognises when it has none.
	ByID(ctx context.Context, workspaceID, id string) (*sequences.Sequence, error)
	ByName(ctx context.Context, workspaceID, name string) (*sequences.Sequence, error)
	// StartRun records a run once per sequence and trigger: false when it
	// ran before. Returns only the database's errors.
	StartRun(ctx context.Context, run *sequences.RuleRun) (bool, error)
	// FinishRun records what the run did, with its event. Returns only
	// the database's errors.
	FinishRun(ctx context.Context, q *sequences.Sequence, run *sequences.RuleRun, clientID string) error
}

// Service runs the sequences' rules.
type Service struct {
	db          *db.DB
	clock       apikit.Clock
	leads       Leads
	catalog     Catalog
	inbox       Inbox
	tasks       Tasks
	enrollments Enrollments
	sequences   Sequences
}

// Config is what a Service works with; every field is required.
type Config struct {
	DB          *db.DB
	Clock       apikit.Clock
	Leads       Leads
	Catalog     Catalog
	Inbox       Inbox
	Tasks       Tasks
	Enrollments Enrollments
	Sequences   Sequences
}

// NewService returns the rules' service on cfg.
func NewService(cfg Config) *Service {
	return &Service{db: cfg.DB, clock: cfg.Clock, leads: cfg.Leads, catalog: cfg.Catalog, inbox: cfg.Inbox, tasks: cfg.Tasks,
		enrollments: cfg.Enrollments, sequences: cfg.Sequences}
}

// run is one rule at work: the sequence, the rule, its record, the lead
// and what the trigger tells of the conversation.
type run struct {
	q      *sequences.Sequence
	rule   sequences.Rule
	rec    *sequences.RuleRun
	lead   *leads.Lead
	thread *inbox.Thread
	// enrollmentID is the lead's enrollment in q the trigger answers
	// ("": the lead's latest in q).
	enrollmentID string
	replacement  *inbox.Replacement
	now          time.Time
	p            apikit.Principal
}

// Replied runs the rule of the sequence a reply answers (its thread's
// sequence) for the reply's intent, in the transaction ctx carries. A
// duplicate reply, or one whose thread came from no sequence or whose
// sequence has no rule for its intent, does nothing. Returns only the
// database's errors.
func (svc *Service) Replied(ctx context.Context, got *inbox.Received) error {
	if got == nil || got.Duplicate || got.Message == nil || got.Thread == nil || got.Thread.SequenceID == nil {
		return nil
	}
	th, m, intent := got.Thread, got.Message, string(got.Read.Intent)
	rec := &sequences.RuleRun{WorkspaceID: th.WorkspaceID, SequenceID: *th.SequenceID, LeadID: th.LeadID, Trigger: "reply:" + m.ID,
		Rule: intent, ThreadID: &th.ID, MessageID: &m.ID}
	return svc.start(ctx, rec, intent, func(r *run) {
		r.thread, r.enrollmentID, r.replacement = th, apikit.Deref(th.EnrollmentID), got.Read.Replacement
	})
}

// Booked runs the on_meeting_booked rule of the sequence a new booking
// came from (the lead's latest thread's sequence, with the booking's
// sender when known; else the lead's latest enrollment's), in the
// transaction ctx carries. A booking of no lead does nothing. Returns only
// the database's errors.
func (svc *Service) Booked(ctx context.Context, b *bookings.Booking) error {
	if b == nil || b.LeadID == nil || b.ID == "" {
		return nil
	}
	th, err := svc.inbox.LatestThread(ctx, *b.LeadID, apikit.Deref(b.SenderID))
	if err != nil {
		return err
	}
	sequenceID, enrollmentID := "", ""
	if th != nil {
		sequenceID, enrollmentID = apikit.Deref(th.SequenceID), apikit.Deref(th.EnrollmentID)
	}
	if sequenceID == "" {
		es, err := svc.enrollments.ForLead(ctx, b.WorkspaceID, *b.LeadID)
		if err != nil {
			return err
		}
		if len(es) == 0 {
			return nil
		}
		sequenceID, enrollmentID = es[0].SequenceID, es[0].ID
	}
	rec := &sequences.RuleRun{WorkspaceID: b.WorkspaceID, SequenceID: sequenceID, LeadID: *b.LeadID, Trigger: "booking:" + b.ID,
		Rule: sequences.MeetingBooked, BookingID: &b.ID}
	if th != nil {
		rec.ThreadID = &th.ID
	}
	return svc.start(ctx, rec, sequences.MeetingBooked, func(r *run) { r.thread, r.enrollmentID = th, enrollmentID })
}

// start runs rec's sequence's rule for intent once per trigger, with what
// set adds of the trigger.
func (svc *Service) start(ctx context.Context, rec *sequences.RuleRun, intent string, set func(r *run)) error {
	q, err := svc.sequence(ctx, rec.WorkspaceID, rec.SequenceID)
	if db.IsNoRows(err) {
		return nil
	} else if err != nil {
		return err
	}
	rule, ok := q.RuleFor(intent)
	if !ok {
		return nil
	}
	ls, err := svc.leads.ByIDs(ctx, rec.WorkspaceID, []string{rec.LeadID})
	if err != nil || len(ls) == 0 {
		return err
	}
	if fresh, err := svc.sequences.StartRun(ctx, rec); err != nil || !fresh {
		return err
	}
	r := &run{q: q, rule: rule, rec: rec, lead: &ls[0], now: db.Now(ctx, svc.clock), p: owner(rec.WorkspaceID)}
	set(r)
	for _, step := range []struct {
		field, value string
		do           func(context.Context, *run) (sequences.Outcome, error)
	}{
		{"stage", rule.Stage, svc.stage},
		{"tag", rule.Tag, svc.tag},
		{"assign", rule.Assign, svc.assign},
		{"task", rule.Task, svc.task},
		{"enroll", rule.Enroll, svc.enroll},
		{"enroll_replacement", rule.EnrollReplacement, svc.enrollReplacement},
	} {
		if step.value == "" {
			continue
		}
		o, err := step.do(ctx, r)
		if err != nil {
			return err
		}
		o.Field, o.Value = step.field, step.value
		rec.Outcomes = append(rec.Outcomes, o)
	}
	return svc.sequences.FinishRun(ctx, q, rec, apikit.Deref(r.lead.ClientID))
}

// sequenceKey is a sequence a transaction read for its rules, in its
// memo.
type sequenceKey string

// sequence reads a sequence once per transaction: an ingest batch's
// replies mostly answer a few sequences, and most have no rule for the
// reply's intent.
func (svc *Service) sequence(ctx context.Context, workspaceID, id string) (*sequences.Sequence, error) {
	memo := db.TxMemo(ctx)
	if memo != nil {
		if v, ok := memo.Load(sequenceKey(id)); ok && v.(*sequences.Sequence).WorkspaceID == workspaceID {
			return v.(*sequences.Sequence), nil
		}
	}
	q, err := svc.sequences.ByID(ctx, workspaceID, id)
	if err == nil && memo != nil {
		memo.Store(sequenceKey(id), q)
	}
	return q, err
}

// owner is the principal a rule acts as: the workspace's, with no member
// (the platform's own action, as the timeline shows it) and no client
// scope (each check of the lead's client is the enrolment's).
func owner(workspaceID string) apikit.Principal {
	return apikit.Principal{WorkspaceID: workspaceID, Role: apikit.RoleOwner}
}

// done, unchanged and refused are a field's outcomes.
func done(detail, ref string) sequences.Outcome {
	return sequences.Outcome{Status: sequences.OutcomeDone, Detail: detail, Ref: ref}
}

func unchanged(detail string) sequences.Outcome {
	return sequences.Outcome{Status: sequences.OutcomeUnchanged, Detail: detail}
}

func refused(reason, detail string) sequences.Outcome {
	return sequences.Outcome{Status: sequences.OutcomeRefused, Reason: reason, Detail: detail}
}

// refusedBy is the refusal a service's error means: its code and message.
// Any other error (the database's) is returned.
func refusedBy(err error) (sequences.Outcome, error) {
	ae := apikit.AsError(err)
	if ae.Code == apikit.EInternal {
		return sequences.Outcome{}, err
	}
	return refused(ae.Code, ae.Message), nil
}
