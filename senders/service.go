package senders

import (
	"context"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// EventLog is what the senders area needs of the activity log.
type EventLog = events.Emitter

// Service holds the sender rules.
type Service struct {
	db    *db.DB
	store Store
	clock apikit.Clock
	log   EventLog
}

// NewService returns the senders Service on d.
func NewService(d *db.DB, clock apikit.Clock, log EventLog) *Service {
	return &Service{db: d, store: NewBunStore(d), clock: clock, log: log}
}

// Visible returns the sender with id if the principal may see it: a
// client-scoped key sees only its clients' senders.
// Returns E_NOT_FOUND otherwise.
func (svc *Service) Visible(ctx context.Context, p apikit.Principal, id string) (*Sender, error) {
	return db.Visible(p, "Sender", id, func() (*Sender, error) { return svc.store.ByID(ctx, p.WorkspaceID, id) },
		func(s *Sender) *string { return s.ClientID })
}

// ByID returns the workspace's sender with id, for the engine.
func (svc *Service) ByID(ctx context.Context, workspaceID, id string) (*Sender, error) {
	return svc.store.ByID(ctx, workspaceID, id)
}

// ByIDs returns the senders with ids, of any workspace, for the engine: a
// tick reads those of its enrollments in one statement.
func (svc *Service) ByIDs(ctx context.Context, ids []string) ([]Sender, error) {
	return svc.store.ByIDs(ctx, ids)
}

// ByName returns the workspace's sender named name.
func (svc *Service) ByName(ctx context.Context, workspaceID, name string) (*Sender, error) {
	return svc.store.ByName(ctx, workspaceID, name)
}

// All returns every sender of the workspace, by name.
func (svc *Service) All(ctx context.Context, workspaceID string) ([]Sender, error) {
	return svc.store.InWorkspace(ctx, workspaceID)
}

// List returns one page of the senders visible to the principal, by name.
// Returns E_FORBIDDEN for a client filter outside a scoped key's clients
// and E_PAYLOAD_INVALID for a bad limit or offset.
func (svc *Service) List(ctx context.Context, p apikit.Principal, f Filter) (apikit.Page[Sender], error) {
	if err := apikit.CheckPage(&f.Limit, f.Offset); err != nil {
		return apikit.Page[Sender]{}, err
	}
	if err := apikit.CheckClientFilter(p, f.ClientID); err != nil {
		return apikit.Page[Sender]{}, err
	}
	out, total, err := svc.store.List(ctx, p.WorkspaceID, p.ClientIDs, f)
	if err != nil {
		return apikit.Page[Sender]{}, err
	}
	return apikit.NewPage(out, total, f.Limit, f.Offset), nil
}

// Health returns the health view of a sender.
// Returns E_NOT_FOUND if the sender is not visible to the principal.
func (svc *Service) Health(ctx context.Context, p apikit.Principal, id string) (*HealthView, error) {
	s, err := svc.Visible(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return svc.health(ctx, s)
}

// Budgets returns a sender's budgets for its local today.
// Returns E_NOT_FOUND if the sender is not visible to the principal.
func (svc *Service) Budgets(ctx context.Context, p apikit.Principal, id string) (*Budgets, error) {
	s, err := svc.Visible(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return svc.budgets(ctx, s, svc.clock.Now())
}

// deref is the value of an optional text field.
var deref = apikit.Deref

// Sender returns the sender with id in any workspace, for the engine's
// inbound path, which knows senders by id only.
func (svc *Service) Sender(ctx context.Context, id string) (*Sender, error) {
	return db.First(svc.store.ByIDs(ctx, []string{id}))
}

// Every returns every sender of every workspace, for the engine's checks.
func (svc *Service) Every(ctx context.Context) ([]Sender, error) {
	var out []Sender
	return out, svc.db.IDB(ctx).NewSelect().Model(&out).OrderExpr("s.id").Scan(ctx)
}

// ByTransport returns every sender of every workspace whose transport is
// transport, paused ones too (their mailboxes still receive replies), by
// id: the senders a transport's background reader serves.
func (svc *Service) ByTransport(ctx context.Context, transport string) ([]*Sender, error) {
	var out []*Sender
	return out, svc.db.IDB(ctx).NewSelect().Model(&out).Where("s.transport = ?", transport).OrderExpr("s.id").Scan(ctx)
}

// Once reports whether this is the first call for (s, key) on s's local
// day at t: it is how daily alerts fire once a day.
func (svc *Service) Once(ctx context.Context, s *Sender, key string, t time.Time) (bool, error) {
	return svc.store.Take(ctx, s.ID, LocalDate(t, s.Location()), key, 1)
}
