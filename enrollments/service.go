package enrollments

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// Leads is what the enrollments area needs of the leads area.
//
// Every method returns only the database's errors unless it says more.
type Leads interface {
	// ByIDs returns the workspace's leads among ids; an id the workspace
	// does not have is left out, not an error.
	ByIDs(ctx context.Context, workspaceID string, ids []string) ([]leads.Lead, error)
	// MarkReplied marks the leads replied, in the transaction ctx carries.
	MarkReplied(ctx context.Context, workspaceID string, leadIDs ...string) error
	// SetProfile stores what enrichment found of a lead's profile.
	SetProfile(ctx context.Context, workspaceID, leadID string, profile map[string]any) error
	// QueuedEnrichment returns up to limit queued enrichment requests of
	// the workspace, oldest first (none: an empty list).
	QueuedEnrichment(ctx context.Context, workspaceID string, limit int) ([]leads.EnrichmentJob, error)
	// FinishEnrichment marks a request done or refused.
	FinishEnrichment(ctx context.Context, id, status string) error
	// MatchInbound returns the workspace's lead an inbound message came
	// from, by the provider's id of the person, the address or the public
	// identifier; "" for none.
	MatchInbound(ctx context.Context, workspaceID, email, providerID, publicIdentifier string) (string, error)
	// SetMember keeps on the lead the person a provider resolved it to,
	// where the lead has no such id yet; it reports whether it changed.
	SetMember(ctx context.Context, workspaceID, leadID string, m *senders.Member) (bool, error)
	// Unsubscribe marks the lead do-not-contact because it asked for no
	// more mail. Returns E_NOT_FOUND if the workspace has no such lead.
	Unsubscribe(ctx context.Context, workspaceID, leadID, source string) error
}

// Catalog is what the enrollments area needs of the workspace area.
type Catalog interface {
	// BlacklistHits returns, for each of people in order, the blacklist
	// entry it matches or "". Returns only the database's errors.
	BlacklistHits(ctx context.Context, workspaceID string, people []workspace.Person) ([]string, error)
	// WorkspaceByID returns the workspace with id. Returns an error that
	// db.IsNoRows recognises if there is none.
	WorkspaceByID(ctx context.Context, id string) (*workspace.Workspace, error)
	// BlacklistSnapshot returns the workspace's blacklist, to check many
	// leads against it in memory. Returns only the database's errors.
	BlacklistSnapshot(ctx context.Context, workspaceID string) (*workspace.Blacklist, error)
}

// Sequences is what the enrollments area needs of the sequences area.
type Sequences interface {
	// Visible returns the sequence with id. Returns E_NOT_FOUND if it
	// does not exist or is not visible to the principal.
	Visible(ctx context.Context, p apikit.Principal, id string) (*sequences.Sequence, error)
	// ByID returns the workspace's sequence with id. Returns an error
	// that db.IsNoRows recognises if the workspace has none.
	ByID(ctx context.Context, workspaceID, id string) (*sequences.Sequence, error)
	// ByIDs returns the sequences with ids, of any workspace.
	ByIDs(ctx context.Context, ids []string) ([]sequences.Sequence, error)
	// SendersOf returns q's senders in its rotation order; a sender that
	// no longer exists is left out. Returns only the database's errors.
	SendersOf(ctx context.Context, q *sequences.Sequence) ([]senders.Sender, error)
	// Problems returns what keeps q from running well (none: empty).
	// Returns only the database's errors.
	Problems(ctx context.Context, q *sequences.Sequence) ([]sequences.Problem, error)
	// Running returns every active sequence. Returns only the database's
	// errors.
	Running(ctx context.Context) ([]sequences.Sequence, error)
	// VariantCountsOf returns the numbers of the variants of the
	// sequences with ids, by sequence and step id. Returns only the
	// database's errors.
	VariantCountsOf(ctx context.Context, ids []string) (map[[2]string][]sequences.VariantCounts, error)
	// SetStalled records that q stalled at (or recovered, for nil), with
	// its event. Returns only the database's errors.
	SetStalled(ctx context.Context, q *sequences.Sequence, at *time.Time, data map[string]any) error
}

// Senders is what the enrollments area needs of the senders area.
//
// Every method returns only the database's errors unless it says more.
type Senders interface {
	// ByID returns the workspace's sender with id. Returns an error that
	// db.IsNoRows recognises if the workspace has none.
	ByID(ctx context.Context, workspaceID, id string) (*senders.Sender, error)
	// ByIDs returns the senders with ids, of any workspace.
	ByIDs(ctx context.Context, ids []string) ([]senders.Sender, error)
	Reserve(ctx context.Context, s *senders.Sender, a senders.Action, t time.Time) (*senders.Blocked, error)
	GiveBack(ctx context.Context, s *senders.Sender, a senders.Action, t time.Time) error
	TakeNote(ctx context.Context, s *senders.Sender, t time.Time) (bool, error)
	Signal(ctx context.Context, s *senders.Sender, signal, message string) error
	// Settle records what an action's outcome means for its sender: the
	// budget back for a refusal or a retry, a sender-level signal with the
	// provider's retry hint.
	Settle(ctx context.Context, s *senders.Sender, a senders.Action, reservedAt time.Time, perr error) error
	RecordInvite(ctx context.Context, s *senders.Sender, leadID string, withNote bool, invitation, memberID string) error
	// Guard asks the sender's guards about an action (senders/guards.go):
	// what holds it back, or nil with how to give back what they took.
	Guard(ctx context.Context, s *senders.Sender, a senders.Action, now, due time.Time) (*senders.Blocked, func(context.Context) error, error)
	// RecordEmail and RecordBounce keep the bounce-rate guard's history.
	RecordEmail(ctx context.Context, s *senders.Sender, leadID string) error
	RecordBounce(ctx context.Context, s *senders.Sender, leadID, message string) error
	InviteAccepted(ctx context.Context, s *senders.Sender, leadID string) (*time.Time, error)
	// InvitationLead returns the lead of s's own sent invitation that the
	// provider calls invitation, or else to the person memberID; "" for
	// none.
	InvitationLead(ctx context.Context, s *senders.Sender, invitation, memberID string) (string, error)
	// Invited reports whether the lead accepted one of the sender's
	// invitations (they are connected) and whether one was withdrawn (a
	// stale one, senders/guard_withdraw.go).
	Invited(ctx context.Context, senderID, leadID string) (connected, withdrawn bool, err error)
	// StaleInvitations and Withdrawn are the withdrawal of stale
	// invitations, which the runner's checks perform.
	StaleInvitations(ctx context.Context, ss []*senders.Sender, now time.Time) (map[*senders.Sender][]senders.SentInvitation, error)
	Withdrawn(ctx context.Context, s *senders.Sender, inv senders.SentInvitation) (bool, error)
	// Budgets returns the sender's budgets for its local today. Returns
	// E_NOT_FOUND if the sender is not visible to the principal.
	Budgets(ctx context.Context, p apikit.Principal, id string) (*senders.Budgets, error)
	// Sender returns the sender with id in any workspace. Returns an
	// error that db.IsNoRows recognises if there is none.
	Sender(ctx context.Context, id string) (*senders.Sender, error)
	Every(ctx context.Context) ([]senders.Sender, error)
	RecheckAll(ctx context.Context, ss []*senders.Sender) error
	Once(ctx context.Context, s *senders.Sender, key string, t time.Time) (bool, error)
	// LeadInvitations returns the invitations sent to the lead (sender,
	// acceptance and withdrawal), in no order.
	LeadInvitations(ctx context.Context, leadID string) ([]senders.Invitation, error)
}

// EventLog is what the enrollments area needs of the activity log.
type EventLog = events.Emitter

// MaxLeadIDs is how many leads one preview or commit takes.
const MaxLeadIDs = 10000

// Service holds the enrollment rules.
type Service struct {
	db        *db.DB
	store     *BunStore
	clock     apikit.Clock
	leads     Leads
	catalog   Catalog
	sequences Sequences
	senders   Senders
	log       EventLog
	tasks     Tasks
}

// NewService returns the enrollments Service on d. It registers nothing:
// platform.New hooks SequenceStatusChanged, TaskFinished and the lead
// view (leads.Service.SetEngine) where they belong.
func NewService(d *db.DB, clock apikit.Clock, ls Leads, cat Catalog, qs Sequences, ss Senders, ts Tasks, log EventLog) *Service {
	return &Service{db: d, store: NewBunStore(d), clock: clock, leads: ls, catalog: cat, sequences: qs, senders: ss, tasks: ts, log: log}
}

// SequenceStatusChanged is the enrollments' hook on a sequence's status
// (sequences.Service.OnStatusChange): a sequence that stops holds its
// enrollments out of the due index; one that starts releases them, due at
// once.
func (svc *Service) SequenceStatusChanged(ctx context.Context, q *sequences.Sequence) error {
	return svc.store.SetHeld(ctx, q.ID, q.Status != sequences.Active)
}

// Store returns the service's store: the runner reads and writes
// enrollments and their actions through it.
func (svc *Service) Store() *BunStore { return svc.store }

// visible returns the enrollment with id if the principal may see it.
func (svc *Service) visible(ctx context.Context, p apikit.Principal, id string) (*Enrollment, error) {
	return db.Visible(p, "Enrollment", id, func() (*Enrollment, error) { return svc.store.ByID(ctx, p.WorkspaceID, id) },
		func(e *Enrollment) *string { return e.ClientID })
}

// List returns one page of the enrollments visible to the principal,
// newest first.
// Returns E_PAYLOAD_INVALID for a bad limit or offset.
func (svc *Service) List(ctx context.Context, p apikit.Principal, f Filter) (apikit.Page[Enrollment], error) {
	if err := apikit.CheckPage(&f.Limit, f.Offset); err != nil {
		return apikit.Page[Enrollment]{}, err
	}
	es, total, err := svc.store.List(ctx, p.WorkspaceID, p.ClientIDs, f)
	if err != nil {
		return apikit.Page[Enrollment]{}, err
	}
	return apikit.NewPage(es, total, f.Limit, f.Offset), nil
}

// ForLead returns the lead's enrollments, newest first, for the lead view.
func (svc *Service) ForLead(ctx context.Context, workspaceID, leadID string) ([]Enrollment, error) {
	return svc.store.ForLead(ctx, workspaceID, leadID)
}

// transition moves one enrollment from one of the states in from to to.
func (svc *Service) transition(ctx context.Context, p apikit.Principal, id string, from []Status, verb string,
	apply func(e *Enrollment, now time.Time), kind string) (*Enrollment, error) {
	var e *Enrollment
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if e, err = svc.visible(ctx, p, id); err != nil {
			return err
		}
		if !slices.Contains(from, e.Status) {
			return apikit.Conflict(fmt.Sprintf("The enrollment is %s; only an enrollment that is %s can be %s.", e.Status, joinStatuses(from), verb),
				transitionRemedy(e.Status))
		}
		now := db.Now(ctx, svc.clock)
		apply(e, now)
		e.UpdatedAt = now
		if err := svc.store.Save(ctx, e); err != nil {
			return err
		}
		return svc.log.EmitMany(ctx, []events.Event{{WorkspaceID: e.WorkspaceID, LeadID: e.LeadID, SequenceID: e.SequenceID, EnrollmentID: e.ID,
			SenderID: deref(e.SenderID), ClientID: deref(e.ClientID), StepID: e.StepID, Kind: kind, Data: map[string]any{"sequence_id": e.SequenceID, "status": string(e.Status)}}})
	})
	return e, err
}

func joinStatuses(ss []Status) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, " or ")
}

func transitionRemedy(s Status) string {
	switch s {
	case Failed:
		return "Recover it with POST /v1/enrollments/recover, or exit it."
	case Paused:
		return "Resume it with POST /v1/enrollments/{id}/resume, or exit it."
	case Active:
		return "Pause or exit it instead."
	}
	return "The enrollment has ended; enrol the lead in another sequence to reach them again."
}

// Pause stops an active enrollment where it is.
// Returns E_NOT_FOUND if it is not visible and E_CONFLICT unless it is active.
func (svc *Service) Pause(ctx context.Context, p apikit.Principal, id string) (*Enrollment, error) {
	return svc.transition(ctx, p, id, []Status{Active}, "paused", func(e *Enrollment, now time.Time) {
		e.Status, e.LeaseUntil = Paused, nil
	}, EventPaused)
}

// Resume lets a paused enrollment go on from its step, at once.
// Returns E_NOT_FOUND if it is not visible and E_CONFLICT unless it is paused.
func (svc *Service) Resume(ctx context.Context, p apikit.Principal, id string) (*Enrollment, error) {
	return svc.transition(ctx, p, id, []Status{Paused}, "resumed", func(e *Enrollment, now time.Time) {
		e.Status, e.NextRunAt, e.WaitingFor, e.WaitingUntil = Active, &now, nil, nil
	}, EventResumed)
}

// Exit ends a live or failed enrollment; the lead, its timeline and its
// chats are kept.
// Returns E_NOT_FOUND if it is not visible and E_CONFLICT once it has ended.
func (svc *Service) Exit(ctx context.Context, p apikit.Principal, id string) (*Enrollment, error) {
	return svc.transition(ctx, p, id, []Status{Active, Paused, Failed}, "exited", func(e *Enrollment, now time.Time) {
		e.Status, e.EndedAt, e.NextRunAt, e.LeaseUntil, e.WaitingFor = Exited, &now, nil, nil, nil
	}, EventExited)
}

// RecoverInput is the body of a recover call.
type RecoverInput struct {
	SequenceID    string   `json:"sequence_id" format:"uuid" required:"true"`
	EnrollmentIDs []string `json:"enrollment_ids,omitempty" doc:"The failed enrollments to recover; all of the sequence's when left out. At most 10,000."`
}

// Recover makes failed enrollments of a sequence run their failed step
// again. An enrollment whose lead meanwhile has another live enrollment
// stays failed.
// Returns E_NOT_FOUND if the sequence is not visible and E_TOO_MANY for
// more than 10,000 ids.
func (svc *Service) Recover(ctx context.Context, p apikit.Principal, in RecoverInput) (int, error) {
	if len(in.EnrollmentIDs) > MaxLeadIDs {
		return 0, apikit.TooMany(fmt.Sprintf("%d enrollment ids were sent; one call takes at most %d.", len(in.EnrollmentIDs), MaxLeadIDs), "Split the ids over several calls.")
	}
	n := 0
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		q, err := svc.sequences.Visible(ctx, p, in.SequenceID)
		if err != nil {
			return err
		}
		failed, err := svc.store.Failed(ctx, q.ID, in.EnrollmentIDs)
		if err != nil {
			return err
		}
		leadIDs := make([]string, len(failed))
		for i, e := range failed {
			leadIDs[i] = e.LeadID
		}
		live, err := svc.store.Live(ctx, p.WorkspaceID, leadIDs)
		if err != nil {
			return err
		}
		busy := map[string]bool{}
		for _, e := range live {
			busy[e.LeadID] = true
		}
		now := db.Now(ctx, svc.clock)
		var evs []events.Event
		for i := range failed {
			e := &failed[i]
			if busy[e.LeadID] {
				continue
			}
			busy[e.LeadID] = true
			e.Status, e.NextRunAt, e.Attempt, e.WaitingFor, e.WaitingUntil, e.FailedAt, e.UpdatedAt = Active, &now, e.Attempt+1, nil, nil, nil, now
			e.Held = q.Status != sequences.Active
			if err := svc.store.Save(ctx, e); err != nil {
				return err
			}
			n++
			evs = append(evs, events.Event{WorkspaceID: e.WorkspaceID, LeadID: e.LeadID, SequenceID: e.SequenceID, EnrollmentID: e.ID, StepID: e.StepID,
				SenderID: deref(e.SenderID), ClientID: deref(e.ClientID), Kind: EventRecovered, Data: map[string]any{"sequence_id": e.SequenceID, "step_id": e.StepID, "code": deref(e.LastErrorCode)}})
		}
		return svc.log.EmitMany(ctx, evs)
	})
	return n, err
}

// SetupChanged wakes the workspace's enrollments that wait for something a
// setup file changes (a paused sender, a suspended workspace), so that they
// are looked at again at once instead of at their next check.
func (svc *Service) SetupChanged(ctx context.Context, workspaceID string) error {
	return svc.store.WakeWaiting(ctx, workspaceID, "", []string{"sender_paused", "workspace_suspended"}, db.Now(ctx, svc.clock))
}
