// Package engine is leadline's runner: it claims due enrollments, runs
// their steps in two phases around each transport call, and takes in what
// the transports report happened outside. The files follow the run of one
// tick: runner.go (the Runner, Tick, Run, NextDue), claim.go (the claim's
// split between workers), group.go (group transactions), execute.go (phase
// one: the rules and the reservation), report.go (phase two: the outcome),
// tasks.go, checks.go (hourly duties) and ingest.go (inbound reports).
package engine

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// Runner defaults.
const (
	// DefaultTick is how often a runner looks for due work (`leadline
	// work --tick`).
	DefaultTick  = 5 * time.Second
	DefaultBatch = 100
	// DefaultWorkers run a batch in parallel on Postgres.
	DefaultWorkers = 8
	// DefaultGroup enrollments share each transaction, for up to
	// DefaultGroupHold.
	DefaultGroup       = 64
	DefaultGroupHold   = 20 * time.Millisecond
	DefaultLease       = 5 * time.Minute
	DefaultMaxAttempts = 4
	// OutOfOfficeDelay is how long an auto-reply delays the next step.
	OutOfOfficeDelay = 3 * 24 * time.Hour
	// maxStepsPerRun bounds how many steps one enrollment goes through in
	// one run; graphs have no loop without a wait, so this is a backstop.
	maxStepsPerRun = 32
)

// deferKey is one sender's action, whose spent limit a tick remembers.
type deferKey struct {
	sender string
	action senders.Action
}

// Runner executes due steps. Several runners may share one database: each
// claims due enrollments with a lease, and budgets are taken under the
// lock of their counter rows.
type Runner struct {
	svc   *deps
	queue *Queue
	// unmatched counts inbound reports that matched no lead.
	unmatched atomic.Int64
	// observer hears steps, transport errors and inbound reports (Observe).
	observer Observer
	// housekeeping runs with the hourly checks (OnChecks).
	housekeeping []func(ctx context.Context, now time.Time) error
	transports   map[string]senders.Transport
	logger       *slog.Logger
	Batch        int
	// IngestWorkers take inbound reports in parallel (Postgres only: on
	// SQLite writes are serial anyway).
	IngestWorkers int
	Lease         time.Duration
	MaxAttempts   int
	// Backoff is the wait before retrying a transient error, by attempt.
	Backoff func(attempt int) time.Duration

	// Workers run the enrollments of a claimed batch in parallel, each
	// worker the enrollments of some of the senders (Postgres only: on
	// SQLite writes are serial anyway).
	Workers int
	// Group runs that many enrollments together, each phase of all of
	// them in one transaction, so that they share its begin, its commit
	// and its counter writes. On SQLite that is one writer's commits, which
	// cost more than most of the statements; on Postgres the round trips.
	// The counters that every worker shares (step and report counters)
	// are written last, before the commit, in one order, so that a group
	// holds them only for its commit and cannot deadlock on them.
	Group int
	// GroupHold bounds how long one group transaction runs, so that other
	// writers wait behind the runner for no longer.
	GroupHold time.Duration
	// Cadence is how often the runner ticks (Run sets it; a simulation
	// its own tick): it acts on a due enrollment up to that late, and the
	// sender's plan of slots allows for it (pace.go).
	Cadence time.Duration

	mu         sync.Mutex
	paces      map[paceKey]*pace // the slots wakeAt handed out, by sender and day (pace.go)
	dry        map[dryKey]bool   // running-dry alerts this runner saw written
	nextChecks time.Time
	// tick holds what one tick read of workspaces, sequences and senders,
	// and the sender limits it found spent; a new tick reads afresh.
	// tickMu guards its maps, which the workers share.
	tick   tickCache
	tickMu sync.Mutex

	spent Spent
}

// Spent is the wall time a runner spent in each part of its ticks, added up
// since it was made: what `simulate` reports, to show where a run goes.
type Spent struct {
	Ingest, Checks, Claims, Runs, NextDue time.Duration
}

// Spent returns the wall time the runner's ticks spent so far, by part.
func (r *Runner) Spent() Spent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spent
}

// charge adds the time since began to one part of Spent.
func (r *Runner) charge(part *time.Duration, began time.Time) {
	d := time.Since(began)
	r.mu.Lock()
	*part += d
	r.mu.Unlock()
}

// tickCache is what a runner remembers within one tick.
type tickCache struct {
	workspaces map[string]*workspace.Workspace
	sequences  map[string]*sequences.Sequence
	senders    map[string]*senders.Sender
	blocked    map[deferKey]*senders.Blocked
	blacklists map[string]*workspace.Blacklist // nil: too large, checked in the database
}

func (r *Runner) workspace(ctx context.Context, id string) (*workspace.Workspace, error) {
	return cached(r, r.tick.workspaces, id, func() (*workspace.Workspace, error) { return r.svc.catalog.WorkspaceByID(ctx, id) })
}

func (r *Runner) sequence(ctx context.Context, workspaceID, id string) (*sequences.Sequence, error) {
	return cached(r, r.tick.sequences, id, func() (*sequences.Sequence, error) { return r.svc.sequences.ByID(ctx, workspaceID, id) })
}

func (r *Runner) sender(ctx context.Context, workspaceID, id string) (*senders.Sender, error) {
	return cached(r, r.tick.senders, id, func() (*senders.Sender, error) { return r.svc.senders.ByID(ctx, workspaceID, id) })
}

// cached returns m[id], loading and keeping it on a miss. The tick's
// workers share m; what it holds is never changed in place, only
// replaced.
func cached[T any](r *Runner, m map[string]*T, id string, load func() (*T, error)) (*T, error) {
	r.tickMu.Lock()
	v, ok := m[id]
	r.tickMu.Unlock()
	if ok {
		return v, nil
	}
	v, err := load()
	if err == nil {
		r.tickMu.Lock()
		m[id] = v
		r.tickMu.Unlock()
	}
	return v, err
}

// preload reads the sequences and senders of claimed enrollments that
// the tick has not read yet, one statement for each kind, into the tick's
// cache: a tick with many enrollments would read them one at a time.
func (r *Runner) preload(ctx context.Context, claimed []enrollments.Enrollment) error {
	if len(claimed) < 2 {
		return nil
	}
	r.tickMu.Lock()
	defer r.tickMu.Unlock()
	var qs, ss []string
	for _, e := range claimed {
		if _, ok := r.tick.sequences[e.SequenceID]; !ok && e.SequenceID != "" {
			qs = append(qs, e.SequenceID)
		}
		for _, id := range []*string{e.SenderID, e.EmailSenderID} {
			if id == nil {
				continue
			}
			if _, ok := r.tick.senders[*id]; !ok {
				ss = append(ss, *id)
			}
		}
	}
	if err := fill(r.tick.sequences, qs, func(ids []string) ([]sequences.Sequence, error) { return r.svc.sequences.ByIDs(ctx, ids) },
		func(q *sequences.Sequence) string { return q.ID }); err != nil {
		return err
	}
	return fill(r.tick.senders, ss, func(ids []string) ([]senders.Sender, error) { return r.svc.senders.ByIDs(ctx, ids) },
		func(s *senders.Sender) string { return s.ID })
}

// fill loads the distinct ids, when more than one, in one call and keeps
// each in m by its id.
func fill[T any](m map[string]*T, ids []string, load func([]string) ([]T, error), id func(*T) string) error {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) < 2 {
		return nil
	}
	got, err := load(ids)
	for i := range got {
		m[id(&got[i])] = &got[i]
	}
	return err
}

// blockedFor returns the spent limit of a sender's action this tick found,
// if any.
func (r *Runner) blockedFor(k deferKey) *senders.Blocked {
	r.tickMu.Lock()
	defer r.tickMu.Unlock()
	return r.tick.blocked[k]
}

// Config is what a Runner works with: the database, the clock and the
// areas it drives. Enrollments, Leads, Catalog, Sequences, Senders, Tasks,
// Inbox, Bookings and Log are required.
type Config struct {
	DB          *db.DB
	Clock       apikit.Clock
	Logger      *slog.Logger // default: slog.Default()
	Enrollments *enrollments.Service
	Leads       enrollments.Leads
	Catalog     enrollments.Catalog
	Sequences   enrollments.Sequences
	Senders     enrollments.Senders
	Tasks       Tasks
	Inbox       Inbox
	Bookings    Bookings
	Log         events.Emitter
	// Rules run what a sequence's rules say a reply or a booked meeting
	// does (nil: nothing beyond reply-stop).
	Rules Rules
	// Queue is the inbound queue pushed events wait in (nil: none).
	Queue *Queue
	// Transports are what the runner sends with, by a sender's transport
	// name; their inbound reports are what it takes in.
	Transports map[string]senders.Transport
}

// Store is what the runner reads of the enrollments area's rows, and the
// action records it keeps. It writes no enrollment: every change of one
// goes through enrollments.Service (Advance, Fail, End, Save, Record,
// Park, Wake), the enrollments' one writer. Every method joins the
// transaction ctx carries and returns only the database's errors.
type Store interface {
	// Claim leases up to limit due enrollments until leaseUntil.
	Claim(ctx context.Context, now, leaseUntil time.Time, limit int) ([]enrollments.Enrollment, error)
	// NextDue returns when the next enrollment is due, false when none is.
	NextDue(ctx context.Context, now time.Time) (time.Time, bool, error)
	// ByIDsForRun locks and reads the enrollments for a run, by id.
	ByIDsForRun(ctx context.Context, ids []string) (map[string]*enrollments.Enrollment, error)
	// ByID reads one enrollment of the workspace (db.IsNoRows when none).
	ByID(ctx context.Context, workspaceID, id string) (*enrollments.Enrollment, error)
	// Live returns the live enrollments of the leads.
	Live(ctx context.Context, workspaceID string, leadIDs []string) ([]enrollments.Enrollment, error)
	// SendingAction returns the enrollment's action recorded as sending,
	// or nil.
	SendingAction(ctx context.Context, enrollmentID string) (*enrollments.ActionRecord, error)
	InsertAction(ctx context.Context, a *enrollments.ActionRecord) error
	SaveAction(ctx context.Context, a *enrollments.ActionRecord) error
	DeleteAction(ctx context.Context, a *enrollments.ActionRecord) error
	// WaitingOnBudget counts, per sender, the enrollments waiting for its
	// budget.
	WaitingOnBudget(ctx context.Context, senderIDs []string) (map[string]int, error)
	// LastActionAt returns each sequence's latest action.
	LastActionAt(ctx context.Context, sequenceIDs []string) (map[string]time.Time, error)
	// Waiting counts the sequence's enrollments waiting for each reason.
	Waiting(ctx context.Context, sequenceID string, reasons []string) (map[string]int, error)
}

// deps are the runner's areas, as Config gives them.
type deps struct {
	db          *db.DB
	store       Store
	clock       apikit.Clock
	enrollments *enrollments.Service
	leads       enrollments.Leads
	catalog     enrollments.Catalog
	sequences   enrollments.Sequences
	senders     enrollments.Senders
	tasks       Tasks
	inbox       Inbox
	bookings    Bookings
	rules       Rules
	log         events.Emitter
}

// New returns a runner on cfg.
func New(cfg Config) *Runner {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	ingest, workers := 1, 1
	if cfg.DB.Engine == db.Postgres {
		ingest, workers = 4, DefaultWorkers
	}
	svc := &deps{db: cfg.DB, store: cfg.Enrollments.Store(), clock: cfg.Clock, enrollments: cfg.Enrollments, leads: cfg.Leads, catalog: cfg.Catalog,
		sequences: cfg.Sequences, senders: cfg.Senders, tasks: cfg.Tasks, inbox: cfg.Inbox, bookings: cfg.Bookings, rules: cfg.Rules, log: cfg.Log}
	return &Runner{svc: svc, queue: cfg.Queue, transports: cfg.Transports, logger: logger, observer: nopObserver{}, Batch: DefaultBatch, IngestWorkers: ingest, Workers: workers, Group: DefaultGroup,
		GroupHold: DefaultGroupHold, Lease: DefaultLease, paces: map[paceKey]*pace{}, dry: map[dryKey]bool{},
		MaxAttempts: DefaultMaxAttempts, Backoff: func(attempt int) time.Duration { return time.Duration(1<<min(attempt, 10)) * time.Minute }}
}

// call is an action reserved in phase one, to be performed by its transport.
type call struct {
	e      *enrollments.Enrollment
	q      *sequences.Sequence
	step   sequences.Step
	sender *senders.Sender
	action *enrollments.ActionRecord
	req    senders.Request
	// leadClient is the lead's client: its thread's scope.
	leadClient *string
	// recover: the action was recorded by an earlier run that did not
	// record its outcome; ask the transport instead of sending.
	recover bool
}

// Tick takes in what the transports report, then runs every due
// enrollment once, and returns how many it ran.
func (r *Runner) Tick(ctx context.Context) (int, error) {
	r.tick = tickCache{workspaces: map[string]*workspace.Workspace{}, sequences: map[string]*sequences.Sequence{},
		senders: map[string]*senders.Sender{}, blocked: map[deferKey]*senders.Blocked{}, blacklists: map[string]*workspace.Blacklist{}}
	began := time.Now()
	err := r.Ingest(ctx)
	r.charge(&r.spent.Ingest, began)
	if err != nil {
		return 0, err
	}
	began = time.Now()
	err = r.Checks(ctx)
	r.charge(&r.spent.Checks, began)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		r.logger.Error("runner: checks", "error", err)
	}
	n := 0
	for {
		now := r.svc.clock.Now()
		began = time.Now()
		claimed, err := r.svc.store.Claim(ctx, now, now.Add(r.Lease), r.Batch)
		r.charge(&r.spent.Claims, began)
		if err != nil {
			return n, err
		}
		if err := r.preload(ctx, claimed); err != nil {
			return n, err
		}
		began = time.Now()
		ran, err := r.runBatch(ctx, claimed)
		r.charge(&r.spent.Runs, began)
		n += ran
		if err != nil {
			return n, err
		}
		if len(claimed) < r.Batch {
			return n, nil
		}
	}
}

// Run ticks every interval until ctx ends.
func (r *Runner) Run(ctx context.Context, interval time.Duration) {
	r.Cadence = interval
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := r.Tick(ctx); err != nil && ctx.Err() == nil {
			r.logger.Error("runner: tick", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// NextDue returns when the runner next has something to do: the earliest
// due enrollment or inbound event. For simulated time.
func (r *Runner) NextDue(ctx context.Context) (time.Time, bool, error) {
	defer r.charge(&r.spent.NextDue, time.Now())
	t, ok, err := r.svc.store.NextDue(ctx, r.svc.clock.Now())
	if err != nil {
		return t, ok, err
	}
	for _, tr := range r.transports {
		if at, has := tr.NextInbound(); has && (!ok || at.Before(t)) {
			t, ok = at, true
		}
	}
	// The hourly checks count as due work only while there is other work:
	// an idle engine has nothing to check.
	r.mu.Lock()
	checks := r.nextChecks
	r.mu.Unlock()
	if ok && !checks.IsZero() && checks.Before(t) {
		t = checks
	}
	return t, ok, nil
}

func ptr[T any](v T) *T { return &v }

// principalOf is the engine's own view of a workspace, for reads that
// take a principal.
func principalOf(workspaceID string) apikit.Principal {
	return apikit.Principal{WorkspaceID: workspaceID, Role: apikit.RoleOwner}
}
