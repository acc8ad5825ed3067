package leads

import (
	"context"
	"slices"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/workspace"
)

// Catalog is what the leads area needs of the workspace area.
type Catalog interface {
	// Lookup returns the entries of kind among ids that exist in the
	// workspace; an unknown id is left out, not an error.
	Lookup(ctx context.Context, workspaceID string, kind workspace.Kind, ids []string) ([]workspace.Named, error)
	// BlacklistHit returns the first blacklist entry the company, emails
	// or LinkedIn ids match, or "". Returns only the database's errors.
	BlacklistHit(ctx context.Context, workspaceID, company string, emails, linkedin []string) (string, error)
}

// EventLog is what the leads area needs of the activity log.
type EventLog interface {
	events.Emitter
	// ForLead returns one page of the lead's events, newest first, and
	// their total. Returns only the database's errors.
	ForLead(ctx context.Context, workspaceID, leadID string, limit, offset int) ([]events.Event, int, error)
}

// Engine is what the lead view needs of the engine: the lead's
// enrollments and what each sender knows of the lead.
//
// Every method returns only the database's errors.
type Engine interface {
	// LeadEnrollments returns the lead's enrollments, newest first.
	LeadEnrollments(ctx context.Context, workspaceID, leadID string) ([]EnrollmentRef, error)
	// LeadSenderState returns, per sender that contacted the lead, the
	// connection and the last contact.
	LeadSenderState(ctx context.Context, workspaceID, leadID string) ([]SenderState, error)
	// LeadsStopped stops the live enrollments of leads that just became
	// do-not-contact, in the same transaction.
	LeadsStopped(ctx context.Context, workspaceID string, leadIDs []string, reason string) error
}

// stopped tells the engine, when there is one, that leads became
// do-not-contact.
func (s *Service) stopped(ctx context.Context, workspaceID string, leadIDs []string) error {
	if s.engine == nil || len(leadIDs) == 0 {
		return nil
	}
	return s.engine.LeadsStopped(ctx, workspaceID, leadIDs, "do_not_contact")
}

// ClientFollower is an area whose rows follow a lead's client (the
// inbox's threads): told when a lead gets a client, inside the
// transaction that gives it.
type ClientFollower interface {
	LeadClientChanged(ctx context.Context, workspaceID, leadID string, clientID *string) error
}

// Service holds the lead rules.
type Service struct {
	db        *db.DB
	store     Store
	clock     apikit.Clock
	catalog   Catalog
	log       EventLog
	engine    Engine
	followers []ClientFollower
	imports   *running
}

// FollowClient tells f of every change of a lead's client.
func (s *Service) FollowClient(f ClientFollower) { s.followers = append(s.followers, f) }

// clientChanged tells the followers that the lead's client changed.
func (s *Service) clientChanged(ctx context.Context, l *Lead) error {
	for _, f := range s.followers {
		if err := f.LeadClientChanged(ctx, l.WorkspaceID, l.ID, l.ClientID); err != nil {
			return err
		}
	}
	return nil
}

// SetEngine lets the lead view show the lead's enrollments and sender state.
func (s *Service) SetEngine(e Engine) { s.engine = e }

// NewService returns the leads Service on d.
func NewService(d *db.DB, clock apikit.Clock, catalog Catalog, log EventLog) *Service {
	return &Service{db: d, store: NewBunStore(d), clock: clock, catalog: catalog, log: log, imports: &running{}}
}

// visible returns the lead with id if the principal may see it.
// Returns E_NOT_FOUND otherwise.
func (s *Service) visible(ctx context.Context, p apikit.Principal, id string) (*Lead, error) {
	return db.Visible(p, "Lead", id, func() (*Lead, error) { return s.store.ByID(ctx, p.WorkspaceID, id) },
		func(l *Lead) *string { return l.ClientID })
}

// VisibleByIDs returns the leads among ids the principal may see, in one
// read (unknown ids and other clients' leads are left out): what a page
// that names many leads at once reads instead of one Get each.
func (s *Service) VisibleByIDs(ctx context.Context, p apikit.Principal, ids []string) ([]Lead, error) {
	ls, err := s.store.ByIDs(ctx, p.WorkspaceID, ids)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ls, func(l Lead) bool { return !p.SeesClient(apikit.Deref(l.ClientID)) }), nil
}

// Get returns the lead detail.
// Returns E_NOT_FOUND if the lead is not visible to the principal.
func (s *Service) Get(ctx context.Context, p apikit.Principal, id string) (*LeadDetail, error) {
	l, err := s.visible(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return s.detail(ctx, l)
}

func (s *Service) detail(ctx context.Context, l *Lead) (*LeadDetail, error) {
	tags, err := s.store.Tags(ctx, l.ID)
	if err != nil {
		return nil, err
	}
	if l.Custom == nil {
		l.Custom = map[string]any{}
	}
	d := &LeadDetail{Lead: *l, Tags: tags, ProfileData: l.Profile, SenderState: []SenderState{}, Enrollments: []EnrollmentRef{}}
	if s.engine != nil {
		if d.Enrollments, err = s.engine.LeadEnrollments(ctx, l.WorkspaceID, l.ID); err != nil {
			return nil, err
		}
		if d.SenderState, err = s.engine.LeadSenderState(ctx, l.WorkspaceID, l.ID); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// List returns one page of the leads visible to the principal.
// Returns E_FORBIDDEN for a client filter outside a scoped key's clients
// and E_PAYLOAD_INVALID for a bad limit or offset.
func (s *Service) List(ctx context.Context, p apikit.Principal, f Filter) (apikit.Page[Lead], error) {
	if err := apikit.CheckPage(&f.Limit, f.Offset); err != nil {
		return apikit.Page[Lead]{}, err
	}
	if err := apikit.CheckClientFilter(p, f.ClientID); err != nil {
		return apikit.Page[Lead]{}, err
	}
	f.Q = strings.TrimSpace(f.Q)
	f.Email = strings.TrimSpace(f.Email)
	f.PublicIdentifier = strings.ToLower(strings.TrimSpace(f.PublicIdentifier))
	leads, total, err := s.store.List(ctx, p.WorkspaceID, p.ClientIDs, f)
	if err != nil {
		return apikit.Page[Lead]{}, err
	}
	for i := range leads {
		if leads[i].Custom == nil {
			leads[i].Custom = map[string]any{}
		}
	}
	return apikit.NewPage(leads, total, f.Limit, f.Offset), nil
}

// Timeline returns the lead's events, newest first.
// Returns E_NOT_FOUND if the lead is not visible to the principal.
func (s *Service) Timeline(ctx context.Context, p apikit.Principal, id string, limit int) ([]TimelineEvent, error) {
	if _, err := s.visible(ctx, p, id); err != nil {
		return nil, err
	}
	evs, _, err := s.log.ForLead(ctx, p.WorkspaceID, id, limit, 0)
	if err != nil {
		return nil, err
	}
	out := make([]TimelineEvent, 0, len(evs))
	for _, e := range evs {
		out = append(out, TimelineEvent{ID: e.ID, Kind: e.Kind, CreatedAt: e.CreatedAt,
			MemberID: nonEmpty(e.MemberID), KeyID: nonEmpty(e.KeyID), Data: e.Data})
	}
	return out, nil
}

// emit writes lead events, each naming its lead.
func (s *Service) emit(ctx context.Context, workspaceID string, evs ...events.Event) error {
	for i := range evs {
		evs[i].WorkspaceID = workspaceID
	}
	return s.log.EmitMany(ctx, evs)
}

func leadEvent(leadID, kind string, data map[string]any) events.Event {
	return events.Event{LeadID: leadID, Kind: kind, Data: data}
}

// deref is the value of an optional text field.
var deref = apikit.Deref

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
