package sequences

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
)

// Senders is what the sequences area needs of the senders area.
type Senders interface {
	// ByName returns the workspace's sender named name. Returns an error
	// that db.IsNoRows recognises if the workspace has none.
	ByName(ctx context.Context, workspaceID, name string) (*senders.Sender, error)
	// All returns every sender of the workspace, by name. Returns only
	// the database's errors.
	All(ctx context.Context, workspaceID string) ([]senders.Sender, error)
}

// EventLog is what the sequences area needs of the activity log.
type EventLog = events.Emitter

// Activity-log kinds of sequence changes.
const (
	EventActivated = "sequence.activated"
	EventPaused    = "sequence.paused"
)

// Service holds the sequence rules.
type Service struct {
	db      *db.DB
	store   Store
	clock   apikit.Clock
	senders Senders
	catalog Catalog
	log     EventLog
	// onStatus are called, inside the transaction, when a sequence is
	// activated or paused: enrollments hold or release their work.
	onStatus []func(ctx context.Context, q *Sequence) error
}

// OnStatusChange registers fn to run, in the same transaction, whenever a
// sequence is activated or paused.
func (svc *Service) OnStatusChange(fn func(ctx context.Context, q *Sequence) error) {
	svc.onStatus = append(svc.onStatus, fn)
}

func (svc *Service) statusChanged(ctx context.Context, q *Sequence) error {
	for _, fn := range svc.onStatus {
		if err := fn(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// NewService returns the sequences Service on d; cat checks what the
// sequences' rules name.
func NewService(d *db.DB, clock apikit.Clock, ss Senders, cat Catalog, log EventLog) *Service {
	return &Service{db: d, store: NewBunStore(d), clock: clock, senders: ss, catalog: cat, log: log}
}

// SenderRef names a sender of a sequence.
type SenderRef struct {
	ID      string          `json:"id" format:"uuid"`
	Name    string          `json:"name"`
	Channel senders.Channel `json:"channel" enum:"linkedin,email"`
}

// SequenceView is a sequence as the API shows it: with its senders and the
// problems of its graph.
type SequenceView struct {
	Sequence
	Senders  []SenderRef `json:"senders"`
	Problems []Problem   `json:"problems" doc:"Why the graph cannot run; activation needs none."`
}

// Visible returns the sequence with id if the principal may see it.
// Returns E_NOT_FOUND otherwise.
func (svc *Service) Visible(ctx context.Context, p apikit.Principal, id string) (*Sequence, error) {
	return db.Visible(p, "Sequence", id, func() (*Sequence, error) { return svc.store.ByID(ctx, p.WorkspaceID, id) },
		func(q *Sequence) *string { return q.ClientID })
}

// ByID returns the workspace's sequence with id, for the engine.
func (svc *Service) ByID(ctx context.Context, workspaceID, id string) (*Sequence, error) {
	return svc.store.ByID(ctx, workspaceID, id)
}

// ByIDs returns the sequences with ids, of any workspace, for the engine:
// a tick reads those of its enrollments in one statement.
func (svc *Service) ByIDs(ctx context.Context, ids []string) ([]Sequence, error) {
	return svc.store.ByIDs(ctx, ids)
}

// ByName returns the workspace's sequence named name.
func (svc *Service) ByName(ctx context.Context, workspaceID, name string) (*Sequence, error) {
	return svc.store.ByName(ctx, workspaceID, name)
}

// SendersOf returns q's senders, in its rotation order.
func (svc *Service) SendersOf(ctx context.Context, q *Sequence) ([]senders.Sender, error) {
	all, err := svc.senders.All(ctx, q.WorkspaceID)
	if err != nil {
		return nil, err
	}
	return sendersOf(q, all), nil
}

// sendersOf returns q's senders among all, its workspace's, in its
// rotation order.
func sendersOf(q *Sequence, all []senders.Sender) []senders.Sender {
	out := []senders.Sender{}
	for _, id := range q.SenderIDs {
		if i := slices.IndexFunc(all, func(s senders.Sender) bool { return s.ID == id }); i >= 0 {
			out = append(out, all[i])
		}
	}
	return out
}

// Problems returns the problems of q's graph with its current senders.
func (svc *Service) Problems(ctx context.Context, q *Sequence) ([]Problem, error) {
	ss, err := svc.SendersOf(ctx, q)
	if err != nil {
		return nil, err
	}
	return problemsWith(q, ss), nil
}

func problemsWith(q *Sequence, ss []senders.Sender) []Problem {
	var channels []senders.Channel
	for _, s := range ss {
		channels = append(channels, s.Channel)
	}
	ps := append(Validate(q, channels), Unsupported(q, ss)...)
	if ps == nil {
		ps = []Problem{}
	}
	return ps
}

// View returns q with its senders and problems.
func (svc *Service) View(ctx context.Context, q *Sequence) (*SequenceView, error) {
	ss, err := svc.SendersOf(ctx, q)
	if err != nil {
		return nil, err
	}
	return viewWith(q, ss), nil
}

// viewWith is q with its senders ss and its problems.
func viewWith(q *Sequence, ss []senders.Sender) *SequenceView {
	v := &SequenceView{Sequence: *q, Senders: []SenderRef{}, Problems: problemsWith(q, ss)}
	if v.Winners == nil {
		v.Winners = map[string]Winner{}
	}
	if v.OnReply == nil {
		v.OnReply = map[string]Rule{}
	}
	for _, s := range ss {
		v.Senders = append(v.Senders, SenderRef{ID: s.ID, Name: s.Name, Channel: s.Channel})
	}
	return v
}

// List returns one page of the sequences visible to the principal, by name.
// Returns E_FORBIDDEN for a client filter outside a scoped key's clients
// and E_PAYLOAD_INVALID for a bad limit or offset.
func (svc *Service) List(ctx context.Context, p apikit.Principal, f Filter) (apikit.Page[SequenceView], error) {
	if err := apikit.CheckPage(&f.Limit, f.Offset); err != nil {
		return apikit.Page[SequenceView]{}, err
	}
	if err := apikit.CheckClientFilter(p, f.ClientID); err != nil {
		return apikit.Page[SequenceView]{}, err
	}
	qs, total, err := svc.store.List(ctx, p.WorkspaceID, p.ClientIDs, f)
	if err != nil {
		return apikit.Page[SequenceView]{}, err
	}
	// The page's sequences are the workspace's: its senders are read
	// once for all of them.
	var all []senders.Sender
	if len(qs) > 0 {
		if all, err = svc.senders.All(ctx, p.WorkspaceID); err != nil {
			return apikit.Page[SequenceView]{}, err
		}
	}
	out := make([]SequenceView, 0, len(qs))
	for i := range qs {
		out = append(out, *viewWith(&qs[i], sendersOf(&qs[i], all)))
	}
	return apikit.NewPage(out, total, f.Limit, f.Offset), nil
}

// Activate makes a sequence run. Activating an active sequence changes
// nothing.
// Returns E_NOT_FOUND if the sequence is not visible to the principal and
// E_GRAPH_INVALID, naming every problem, if its graph cannot run.
func (svc *Service) Activate(ctx context.Context, p apikit.Principal, id string) (*SequenceView, error) {
	var q *Sequence
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if q, err = svc.Visible(ctx, p, id); err != nil {
			return err
		}
		ps, err := svc.Problems(ctx, q)
		if err != nil {
			return err
		}
		if len(ps) > 0 {
			return GraphInvalid(q.Name, ps)
		}
		if q.Status == Active {
			return nil
		}
		now := db.Now(ctx, svc.clock)
		q.Status, q.ActivatedAt, q.UpdatedAt = Active, &now, now
		if err := svc.store.Save(ctx, q, false); err != nil {
			return err
		}
		if err := svc.statusChanged(ctx, q); err != nil {
			return err
		}
		return svc.log.EmitMany(ctx, []events.Event{{WorkspaceID: q.WorkspaceID, SequenceID: q.ID, Kind: EventActivated,
			Data: map[string]any{"sequence_id": q.ID, "name": q.Name}}})
	})
	if err != nil {
		return nil, err
	}
	return svc.View(ctx, q)
}

// Pause stops a sequence: its enrollments keep their place and go on when
// it is activated again. Pausing a paused sequence changes nothing.
// Returns E_NOT_FOUND if the sequence is not visible to the principal and
// E_CONFLICT for a draft, which never ran.
func (svc *Service) Pause(ctx context.Context, p apikit.Principal, id string) (*SequenceView, error) {
	var q *Sequence
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if q, err = svc.Visible(ctx, p, id); err != nil {
			return err
		}
		switch q.Status {
		case Paused:
			return nil
		case Draft:
			return apikit.Conflict(fmt.Sprintf("Sequence %q is a draft: it is not running, so it cannot be paused.", q.Name),
				"Activate it with POST /v1/sequences/{id}/activate when it should run.")
		}
		now := db.Now(ctx, svc.clock)
		q.Status, q.PausedAt, q.UpdatedAt = Paused, &now, now
		if err := svc.store.Save(ctx, q, false); err != nil {
			return err
		}
		if err := svc.statusChanged(ctx, q); err != nil {
			return err
		}
		return svc.log.EmitMany(ctx, []events.Event{{WorkspaceID: q.WorkspaceID, SequenceID: q.ID, Kind: EventPaused,
			Data: map[string]any{"sequence_id": q.ID, "name": q.Name}}})
	})
	if err != nil {
		return nil, err
	}
	return svc.View(ctx, q)
}

// ActivateByName activates the workspace's sequence named name, for setup
// programs and the demo.
// Returns E_GRAPH_INVALID if its graph cannot run.
func (svc *Service) ActivateByName(ctx context.Context, workspaceID, name string) error {
	q, err := svc.store.ByName(ctx, workspaceID, name)
	if err != nil {
		return err
	}
	_, err = svc.Activate(ctx, apikit.Principal{WorkspaceID: workspaceID}, q.ID)
	return err
}

// GraphInvalid is the E_GRAPH_INVALID error naming every problem.
func GraphInvalid(name string, ps []Problem) *apikit.Error {
	msgs := make([]string, 0, len(ps))
	for _, p := range ps {
		msgs = append(msgs, p.Code+": "+p.Message)
	}
	return apikit.GraphInvalid(fmt.Sprintf("Sequence %q cannot run: %s", name, strings.Join(msgs, " ")),
		"Fix every problem in the setup file (GET /v1/sequences/{id} lists them), apply it, then activate again.")
}

// deref is the value of an optional text field.
var deref = apikit.Deref

// Activity-log kinds of stalls.
const (
	EventStalled   = "sequence.stalled"
	EventRecovered = "sequence.recovered"
)

// Running returns every active sequence, for the engine's checks.
func (svc *Service) Running(ctx context.Context) ([]Sequence, error) {
	var out []Sequence
	return out, svc.db.IDB(ctx).NewSelect().Model(&out).Where("q.status = ?", Active).OrderExpr("q.id").Scan(ctx)
}

// SetStalled records that q stalled at (or recovered, for nil), with its
// event.
func (svc *Service) SetStalled(ctx context.Context, q *Sequence, at *time.Time, data map[string]any) error {
	kind := EventStalled
	if at == nil {
		kind = EventRecovered
	}
	q.StalledAt = at
	if _, err := svc.db.IDB(ctx).NewUpdate().Model(q).Column("stalled_at").WherePK().Exec(ctx); err != nil {
		return err
	}
	data["sequence_id"], data["name"] = q.ID, q.Name
	return svc.log.EmitMany(ctx, []events.Event{{WorkspaceID: q.WorkspaceID, SequenceID: q.ID, Kind: kind, Data: data}})
}
