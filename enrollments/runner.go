package enrollments

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// Activity-log kinds the runner writes.
const (
	EventActionSent      = "action.sent"
	EventInviteAccepted  = "invite.accepted"
	EventReplyReceived   = "reply.received"
	EventEmailBounced    = "email.bounced"
	EventSequenceWebhook = "sequence.webhook"
)

// Runner defaults.
const (
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

// deferKey counts the enrollments deferred to one sender's action on one
// local day.
type deferKey struct {
	sender string
	action senders.Action
	day    string
}

// Runner executes due steps. Several runners may share one database: each
// claims due enrollments with a lease, and budgets are taken under the
// lock of their counter rows.
type Runner struct {
	svc        *Service
	transports map[string]senders.Transport
	logger     *slog.Logger
	Batch      int
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

	mu         sync.Mutex
	deferred   map[deferKey]int
	dry        map[dryKey]bool // running-dry alerts this runner saw written
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

// blockedFor returns the spent limit of a sender's action this tick found,
// if any.
func (r *Runner) blockedFor(k deferKey) *senders.Blocked {
	r.tickMu.Lock()
	defer r.tickMu.Unlock()
	return r.tick.blocked[k]
}

// NewRunner returns a runner that sends through transports, by a sender's
// transport name. Members' replies in the inbox go through the same ones.
func (svc *Service) NewRunner(transports map[string]senders.Transport, logger *slog.Logger) *Runner {
	if logger == nil {
		logger = slog.Default()
	}
	// Members' replies go through the transports the runner sends with.
	svc.inbox.UseTransports(transports)
	ingest, workers := 1, 1
	if svc.db.Engine == db.Postgres {
		ingest, workers = 4, DefaultWorkers
	}
	return &Runner{svc: svc, transports: transports, logger: logger, Batch: DefaultBatch, IngestWorkers: ingest, Workers: workers, Group: DefaultGroup,
		GroupHold: DefaultGroupHold, Lease: DefaultLease, deferred: map[deferKey]int{}, dry: map[dryKey]bool{},
		MaxAttempts: DefaultMaxAttempts, Backoff: func(attempt int) time.Duration { return time.Duration(1<<min(attempt, 10)) * time.Minute }}
}

// call is an action reserved in phase one, to be performed by its transport.
type call struct {
	e      *Enrollment
	q      *sequences.Sequence
	step   sequences.Step
	sender *senders.Sender
	action *ActionRecord
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

// runBatch runs claimed enrollments and returns how many it ran. With more
// than one worker, each worker takes the enrollments of some senders (see
// partition), so that a sender's budget rows are written by one worker at
// a time.
func (r *Runner) runBatch(ctx context.Context, claimed []Enrollment) (int, error) {
	workers := max(min(r.Workers, len(claimed)), 1)
	parts := partition(claimed, workers)
	size := max(r.Group, 1)
	var n atomic.Int64
	run := func(part []Enrollment) error {
		for start := 0; start < len(part); start += size {
			group := part[start:min(start+size, len(part))]
			if err := r.runGroup(ctx, group); err != nil {
				return err
			}
			n.Add(int64(len(group)))
		}
		return nil
	}
	if workers == 1 {
		err := run(parts[0])
		return int(n.Load()), err
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i, part := range parts {
		wg.Go(func() { errs[i] = run(part) })
	}
	wg.Wait()
	return int(n.Load()), errors.Join(errs...)
}

// partition splits claimed enrollments between workers so that no two
// workers use the same sender: an enrollment uses its LinkedIn sender and
// its email sender, so senders that share an enrollment go to one worker
// together (the connected groups of senders), the largest groups first,
// each to the worker with the fewest enrollments yet. Otherwise two
// workers would queue on a shared mailbox's budget row, each holding it
// until its transaction commits. Each worker keeps the claimed order.
func partition(claimed []Enrollment, workers int) [][]Enrollment {
	parts := make([][]Enrollment, workers)
	if workers == 1 {
		parts[0] = claimed
		return parts
	}
	parent := map[string]string{}
	var find func(x string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok || p == x {
			parent[x] = x
			return x
		}
		root := find(p)
		parent[x] = root
		return root
	}
	for _, c := range claimed {
		if c.SenderID == nil || c.EmailSenderID == nil {
			continue
		}
		a, b := find(*c.SenderID), find(*c.EmailSenderID)
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	var roots []string
	members := map[string][]int{}
	for i, c := range claimed {
		// An enrollment with no LinkedIn sender goes with its mailbox;
		// one with no sender at all with the others that have none.
		root := find(cmp.Or(deref(c.SenderID), deref(c.EmailSenderID)))
		if _, seen := members[root]; !seen {
			roots = append(roots, root)
		}
		members[root] = append(members[root], i)
	}
	slices.SortStableFunc(roots, func(a, b string) int { return cmp.Compare(len(members[b]), len(members[a])) })
	owner := make([]int, len(claimed))
	load := make([]int, workers)
	for _, root := range roots {
		w := 0
		for i := range load {
			if load[i] < load[w] {
				w = i
			}
		}
		for _, i := range members[root] {
			owner[i] = w
		}
		load[w] += len(members[root])
	}
	for i, c := range claimed {
		parts[owner[i]] = append(parts[owner[i]], c)
	}
	return parts
}

// Run ticks every interval until ctx ends.
func (r *Runner) Run(ctx context.Context, interval time.Duration) {
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

// runGroup runs claimed enrollments (often just one) through as many
// steps as are due, each phase of all of them in one transaction: their
// first steps' phase one, then their actions through the transports, then
// together the actions' phase two and the next steps' phase one, and so
// on. When a shared transaction fails, its phase is run again for each
// enrollment alone, so that one enrollment's error holds back only that
// one, which keeps its lease and is looked at again when the lease ends.
//
// A run's transactions commit without waiting for the disk on Postgres:
// one lost in a crash is redone the same way, under the same idempotency
// key, which a transport performs at most once and answers from its record
// (the Transport contract).
func (r *Runner) runGroup(ctx context.Context, group []Enrollment) error {
	calls := make([]*call, len(group))
	logErr := func(i int, err error) {
		r.logger.Error("runner: enrollment", "enrollment_id", group[i].ID, "error", err)
	}
	// phase runs fn for each of idx in one transaction, or in several
	// when one would hold the write lock longer than GroupHold; fn sets
	// calls[i].
	phase := func(idx []int, fn func(ctx context.Context, i int) error) error {
		var lastErr error
		for len(idx) > 0 {
			n := 0
			err := r.inTx(ctx, func(ctx context.Context) error {
				n = 0
				// Wall time, not the clock: this bounds how long API
				// writes wait behind the runner, and decides no outcome.
				start := time.Now()
				ctx, err := r.prefetchGroup(ctx, group, idx)
				if err != nil {
					return err
				}
				for _, i := range idx {
					if n > 0 && time.Since(start) >= r.GroupHold {
						break
					}
					if err := fn(ctx, i); err != nil {
						return err
					}
					n++
				}
				return nil
			})
			if err != nil {
				lastErr = err
				break
			}
			idx = idx[n:]
		}
		if len(idx) == 0 || ctx.Err() != nil {
			return ctx.Err()
		}
		if len(group) == 1 {
			// Alone already: it keeps its lease.
			calls[idx[0]] = nil
			logErr(idx[0], lastErr)
			return nil
		}
		for _, i := range idx {
			if err := r.inTx(ctx, func(ctx context.Context) error { return fn(ctx, i) }); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				calls[i] = nil
				logErr(i, err)
			}
		}
		return nil
	}
	all := make([]int, len(group))
	for i := range all {
		all[i] = i
	}
	err := phase(all, func(ctx context.Context, i int) error {
		var err error
		calls[i], err = r.next(ctx, group[i].WorkspaceID, group[i].ID, nil)
		return err
	})
	results := make([]senders.Result, len(group))
	perrs := make([]error, len(group))
	for steps := 1; err == nil; steps++ {
		done := slices.Clone(calls)
		// The group's calls go out DefaultWorkers at a time, as many as
		// the Postgres workers make, so that the last of them leaves soon
		// after its checks too.
		failed := make([]error, len(group))
		var wg sync.WaitGroup
		slots := make(chan struct{}, DefaultWorkers)
		for i, c := range done {
			if c != nil {
				slots <- struct{}{}
				wg.Go(func() {
					defer func() { <-slots }()
					results[i], perrs[i], failed[i] = r.perform(ctx, c)
				})
			}
		}
		wg.Wait()
		var idx []int
		for i, c := range done {
			if c == nil {
				continue
			}
			if failed[i] != nil {
				// The outcome is unknown: the enrollment keeps its lease.
				calls[i] = nil
				logErr(i, failed[i])
				continue
			}
			idx = append(idx, i)
		}
		if len(idx) == 0 {
			return nil
		}
		err = phase(idx, func(ctx context.Context, i int) error {
			calls[i] = nil
			e, again, err := r.finish(ctx, done[i], results[i], perrs[i])
			if err != nil || !again {
				return err
			}
			if steps >= maxStepsPerRun {
				return r.svc.store.Save(ctx, e)
			}
			calls[i], err = r.next(ctx, group[i].WorkspaceID, group[i].ID, e)
			return err
		})
	}
	return err
}

// prefetchKey carries what a group transaction read for all its
// enrollments at once.
type prefetchKey struct{}

// prefetched are enrollments and leads a group transaction read together,
// each handed out once (a second look reads the database again).
type prefetched struct {
	enrollments map[string]*Enrollment
	leads       map[string]*leads.Lead
}

// prefetchGroup reads the enrollments of group at idx and their leads, two
// statements for the group instead of two for each, and returns ctx
// carrying them. The enrollments are locked as ByID locks one.
func (r *Runner) prefetchGroup(ctx context.Context, group []Enrollment, idx []int) (context.Context, error) {
	if len(idx) < 2 {
		return ctx, nil
	}
	ids := make([]string, len(idx))
	for k, i := range idx {
		ids[k] = group[i].ID
	}
	es, err := r.svc.store.ByIDsForRun(ctx, ids)
	if err != nil {
		return ctx, err
	}
	byWorkspace := map[string][]string{}
	for _, e := range es {
		byWorkspace[e.WorkspaceID] = append(byWorkspace[e.WorkspaceID], e.LeadID)
	}
	ls := map[string]*leads.Lead{}
	for ws, leadIDs := range byWorkspace {
		got, err := r.svc.leads.ByIDs(ctx, ws, slices.Compact(slices.Sorted(slices.Values(leadIDs))))
		if err != nil {
			return ctx, err
		}
		for i := range got {
			ls[got[i].ID] = &got[i]
		}
	}
	return context.WithValue(ctx, prefetchKey{}, &prefetched{enrollments: es, leads: ls}), nil
}

// enrollment returns the enrollment with id as the runner reads it: from
// the group's prefetch the first time, from the database after.
func (r *Runner) enrollment(ctx context.Context, workspaceID, id string) (*Enrollment, error) {
	if p, ok := ctx.Value(prefetchKey{}).(*prefetched); ok {
		if e, ok := p.enrollments[id]; ok && e.WorkspaceID == workspaceID {
			delete(p.enrollments, id)
			return e, nil
		}
	}
	return r.svc.store.ByID(ctx, workspaceID, id)
}

// lead returns the enrollment's lead: from the group's prefetch the first
// time, from the database after.
func (r *Runner) lead(ctx context.Context, e *Enrollment) (*leads.Lead, error) {
	if p, ok := ctx.Value(prefetchKey{}).(*prefetched); ok {
		if l, ok := p.leads[e.LeadID]; ok && l.WorkspaceID == e.WorkspaceID {
			delete(p.leads, e.LeadID)
			return l, nil
		}
	}
	ls, err := r.svc.leads.ByIDs(ctx, e.WorkspaceID, []string{e.LeadID})
	if err != nil || len(ls) == 0 {
		return nil, errors.Join(err, fmt.Errorf("lead %s of enrollment %s is gone", e.LeadID, e.ID))
	}
	return &ls[0], nil
}

// inTx runs fn in a transaction of the runner, again if Postgres rolled
// it back for a deadlock with another runner's: what fn does is read
// afresh each time, and an action's transport call is outside it.
func (r *Runner) inTx(ctx context.Context, fn func(ctx context.Context) error) error {
	// The runner reads each enrollment it saves once, at the start: its
	// saves can wait for the commit.
	ctx = context.WithValue(ctx, batchedKey{}, true)
	for attempt := 1; ; attempt++ {
		err := r.svc.db.InTxNoFlush(ctx, fn)
		if err == nil || attempt == 5 || !db.IsRetryable(err) {
			return err
		}
	}
}

// next loads the enrollment (unless e is given) and runs its due steps
// until one is an action, which it returns reserved, or until it waits.
func (r *Runner) next(ctx context.Context, workspaceID, id string, e *Enrollment) (*call, error) {
	for range maxStepsPerRun {
		if e == nil {
			var err error
			if e, err = r.enrollment(ctx, workspaceID, id); err != nil {
				return nil, err
			}
		}
		now := r.svc.clock.Now()
		if e.Status != Active || e.Held || e.NextRunAt == nil || e.NextRunAt.After(now) {
			// Saves what an earlier step left unsaved, if anything.
			e.LeaseUntil = nil
			return nil, r.svc.store.Save(ctx, e)
		}
		if deref(e.WaitingFor) == waitingSending {
			a, err := r.svc.store.SendingAction(ctx, e.ID)
			if err != nil {
				return nil, err
			}
			if a != nil {
				return r.recovering(ctx, e, a)
			}
		}
		c, again, err := r.prepare(ctx, e, now)
		if err != nil || c != nil || !again {
			return c, err
		}
	}
	return nil, r.svc.store.Save(ctx, e)
}

// waitingSending marks an enrollment whose action is out with its
// transport: a run that finds it so after a lease asks the transport.
const waitingSending = "sending"

// perform calls the transport for c: the action, or for a recovered one
// the lookup of its key.
func (r *Runner) perform(ctx context.Context, c *call) (senders.Result, error, error) {
	t := r.transports[c.sender.Transport]
	if c.recover {
		res, found, err := t.Lookup(ctx, c.action.IdemKey)
		if err != nil {
			return res, nil, err
		}
		if !found {
			return res, errNotPerformed, nil
		}
		return res, nil, nil
	}
	res, perr := t.Perform(ctx, c.req)
	if _, ok := senders.AsTransportError(perr); perr != nil && !ok {
		// The outcome is unknown: keep the action as sending and the
		// lease; the next run after the lease asks the transport.
		return res, nil, fmt.Errorf("transport: %w", perr)
	}
	return res, perr, nil
}

// actionKey is the idempotency key of an action: the enrollment, the step,
// when the enrollment entered the step (a step on a loop is entered more
// than once) and the attempt.
func actionKey(e *Enrollment, stepID string) string {
	return fmt.Sprintf("%s:%s:%d:%d", e.ID, stepID, e.StepStartedAt.UnixMicro(), e.Attempt)
}

// errNotPerformed is a recovered action the transport never performed.
var errNotPerformed = errors.New("not performed")

// recovering prepares the outcome lookup of an action an earlier run
// recorded as sending.
func (r *Runner) recovering(ctx context.Context, e *Enrollment, a *ActionRecord) (*call, error) {
	q, err := r.sequence(ctx, e.WorkspaceID, e.SequenceID)
	if err != nil {
		return nil, err
	}
	s, err := r.sender(ctx, e.WorkspaceID, a.SenderID)
	if err != nil {
		return nil, err
	}
	step, _ := q.StepByID(a.StepID)
	return &call{e: e, q: q, step: step, sender: s, action: a, recover: true}, nil
}

// prepare is phase one: it checks every rule for the enrollment's step at
// this moment. Steps that send nothing are done here; an action is
// reserved and recorded as sending and returned for its transport.
// again reports that the enrollment is due again at once; it is then left
// unsaved, for the run of its next step to save with that step's changes
// (or for the caller to save, if it stops there).
func (r *Runner) prepare(ctx context.Context, e *Enrollment, now time.Time) (*call, bool, error) {
	svc := r.svc
	save := func() (*call, bool, error) {
		e.UpdatedAt = now
		if e.Status == Active && e.NextRunAt != nil && !e.NextRunAt.After(now) {
			return nil, true, nil
		}
		e.LeaseUntil = nil
		return nil, false, svc.store.Save(ctx, e)
	}
	ws, err := r.workspace(ctx, e.WorkspaceID)
	if err != nil {
		return nil, false, err
	}
	if ws.Suspended {
		// Suspension is lifted through setup; look again in an hour.
		e.wait("workspace_suspended", ptr(now.Add(time.Hour)))
		return save()
	}
	q, err := r.sequence(ctx, e.WorkspaceID, e.SequenceID)
	if err != nil {
		return nil, false, err
	}
	if q.Status != sequences.Active {
		e.Held = true
		return save()
	}
	step, ok := q.StepByID(e.StepID)
	if !ok {
		if err := r.fail(ctx, e, "step_removed", fmt.Sprintf("Step %q no longer exists in the sequence.", e.StepID), now); err != nil {
			return nil, false, err
		}
		return save()
	}
	// A sender limit this tick already found spent needs no second look:
	// the enrollment is postponed without reading its lead.
	if a, isAction := step.Action(); isAction {
		if s, err := r.senderFor(ctx, e, a.Channel()); err == nil {
			if b := r.blockedFor(deferKey{sender: s.ID, action: a}); b != nil && b.Until.After(now) {
				until := r.postpone(s, a, b.Until)
				e.waitOn(s.ID, a, b.Code, &until)
				return save()
			}
		}
	}
	lead, err := r.lead(ctx, e)
	if err != nil {
		return nil, false, err
	}
	if stop, reason, err := r.stopReason(ctx, lead); err != nil {
		return nil, false, err
	} else if stop != "" {
		if err := r.end(ctx, e, stop, reason, now); err != nil {
			return nil, false, err
		}
		return save()
	}
	switch step.Type {
	case sequences.TypeWait:
		s, _ := r.senderFor(ctx, e, senders.LinkedIn)
		due := waitUntil(e.StepStartedAt, step, s)
		if due.After(now) {
			e.wait("wait_step", &due)
			return save()
		}
		err = r.advance(ctx, e, q, step, q.After(step), now)
	case sequences.TypeCondition:
		var next string
		if next, err = r.condition(ctx, e, step, lead, now); err == nil && next == "" {
			return save() // waits for an acceptance
		}
		if err == nil {
			err = r.advance(ctx, e, q, step, next, now)
		}
	case sequences.TypeWebhook:
		err = svc.log.EmitMany(ctx, []events.Event{r.event(e, EventSequenceWebhook, step.ID, map[string]any{
			"sequence_id": e.SequenceID, "enrollment_id": e.ID, "lead_id": e.LeadID, "step_id": step.ID, "payload": step.Payload})})
		if err == nil {
			err = r.advance(ctx, e, q, step, q.After(step), now)
		}
	case sequences.TypeTask:
		err = r.task(ctx, e, q, step, lead, now)
	default:
		return r.prepareAction(ctx, e, q, step, lead, now, save)
	}
	if err != nil {
		return nil, false, err
	}
	return save()
}

// stopReason says whether the lead may get nothing more: replied, do-not-
// contact or blacklisted.
func (r *Runner) stopReason(ctx context.Context, l *leads.Lead) (Status, string, error) {
	if l.Replied {
		return Replied, "replied", nil
	}
	if l.DoNotContact {
		return Stopped, "do_not_contact", nil
	}
	// The blacklist is read once a tick per workspace (it changes through
	// setup files); a very large one is checked in the database.
	people := []workspace.Person{l.Person()}
	r.tickMu.Lock()
	bl, read := r.tick.blacklists[l.WorkspaceID]
	r.tickMu.Unlock()
	if !read {
		var err error
		if bl, err = r.svc.catalog.BlacklistSnapshot(ctx, l.WorkspaceID); err != nil {
			return "", "", err
		}
		r.tickMu.Lock()
		r.tick.blacklists[l.WorkspaceID] = bl
		r.tickMu.Unlock()
	}
	var hits []string
	if bl != nil {
		hits = bl.Hits(people)
	} else {
		var err error
		if hits, err = r.svc.catalog.BlacklistHits(ctx, l.WorkspaceID, people); err != nil {
			return "", "", err
		}
	}
	if hits[0] != "" {
		return Stopped, "blacklisted: " + hits[0], nil
	}
	return "", "", nil
}

// senderFor returns the enrollment's sender for a channel.
func (r *Runner) senderFor(ctx context.Context, e *Enrollment, c senders.Channel) (*senders.Sender, error) {
	id := deref(e.SenderID)
	if c == senders.Email && e.EmailSenderID != nil {
		id = *e.EmailSenderID
	}
	if id == "" {
		return nil, errors.New("no sender")
	}
	s, err := r.sender(ctx, e.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if c == senders.Email && s.Channel != senders.Email {
		return nil, errors.New("no email sender")
	}
	return s, nil
}

// waitUntil is when a wait step that started at start ends. Working days
// are the days the sender's schedule has a window on.
func waitUntil(start time.Time, step sequences.Step, s *senders.Sender) time.Time {
	loc := time.UTC
	if s != nil {
		loc = s.Location()
	}
	// Days are local calendar days: a wait over a daylight-saving change
	// ends at the same local time, neither an hour early nor late.
	lt := start.In(loc)
	day := step.Days
	if step.WorkingDays && s != nil {
		counted := 0
		for day = 0; counted < step.Days && day < 3660; {
			day++
			d := time.Date(lt.Year(), lt.Month(), lt.Day()+day, 12, 0, 0, 0, loc)
			if s.Schedule.WorkingDay(d.Year(), d.Month(), d.Day(), loc) {
				counted++
			}
		}
	}
	end := time.Date(lt.Year(), lt.Month(), lt.Day()+day, lt.Hour(), lt.Minute(), lt.Second(), lt.Nanosecond(), loc)
	return end.Add(time.Duration(step.Hours) * time.Hour).UTC()
}

// condition evaluates a condition step: the next step id, or "" when the
// enrollment waits (for an acceptance within the step's days).
func (r *Runner) condition(ctx context.Context, e *Enrollment, step sequences.Step, l *leads.Lead, now time.Time) (string, error) {
	branch := func(ok bool) string {
		if ok {
			return step.Then
		}
		return step.Else
	}
	switch step.If {
	case sequences.IfHasEmail:
		return branch(hasEmail(l)), nil
	case sequences.IfHasLinkedIn:
		return branch(hasLinkedIn(l)), nil
	}
	connected, err := r.svc.senders.Connected(ctx, deref(e.SenderID), e.LeadID)
	if err != nil {
		return "", err
	}
	if step.If == sequences.IfConnected || connected {
		return branch(connected), nil
	}
	deadline := e.StepStartedAt.AddDate(0, 0, step.WithinDays)
	if now.Before(deadline) {
		e.wait("awaiting_acceptance", &deadline)
		return "", nil
	}
	return step.Else, nil
}

// prepareAction checks an action step's rules and reserves its budget.
func (r *Runner) prepareAction(ctx context.Context, e *Enrollment, q *sequences.Sequence, step sequences.Step, lead *leads.Lead,
	now time.Time, save func() (*call, bool, error)) (*call, bool, error) {
	action, _ := step.Action()
	failWith := func(code, msg string) (*call, bool, error) {
		if err := r.fail(ctx, e, code, msg, now); err != nil {
			return nil, false, err
		}
		return save()
	}
	s, err := r.senderFor(ctx, e, action.Channel())
	if err != nil {
		return failWith("no_sender", fmt.Sprintf("The enrollment has no %s sender for step %q.", action.Channel(), step.ID))
	}
	if _, ok := r.transports[s.Transport]; !ok {
		return failWith("no_transport", fmt.Sprintf("Sender %s uses transport %q, which this runner does not have.", s.Name, s.Transport))
	}
	loc := s.Location()
	switch {
	case s.Status == senders.Paused:
		e.waitOn(s.ID, action, "sender_paused", nil)
		return save()
	case s.Health == senders.Disconnected:
		e.waitOn(s.ID, action, "sender_disconnected", nil)
		return save()
	case s.Health == senders.Restricted:
		e.waitOn(s.ID, action, "sender_restricted", ptr(senders.NextMidnight(now, loc)))
		return save()
	}
	if !s.Schedule.Open(now, loc) {
		next, _ := s.Schedule.NextOpen(now, loc)
		e.waitOn(s.ID, action, "outside_schedule", &next)
		return save()
	}
	rec := lead.Recipient()
	if action.Channel() == senders.LinkedIn && !hasLinkedIn(lead) {
		return failWith("missing_linkedin", "The lead has no LinkedIn id, provider id or public identifier.")
	}
	if action == senders.SendEmail && !hasEmail(lead) {
		return failWith("missing_email", "The lead has no email address.")
	}
	texts, err := render(step, lead)
	if err != nil {
		return failWith("missing_variable", err.Error())
	}
	blocked, err := r.svc.senders.Reserve(ctx, s, action, now)
	if err != nil {
		return nil, false, err
	}
	if blocked != nil {
		r.tickMu.Lock()
		r.tick.blocked[deferKey{sender: s.ID, action: action}] = blocked
		r.tickMu.Unlock()
		until := r.postpone(s, action, blocked.Until)
		e.waitOn(s.ID, action, blocked.Code, &until)
		return save()
	}
	withNote := false
	if action == senders.Invite && texts["note"] != "" {
		ok, err := r.svc.senders.TakeNote(ctx, s, now)
		if err != nil {
			return nil, false, err
		}
		switch {
		case ok:
			withNote = true
		case step.NoteFallback == sequences.NoteFallbackWithoutNote:
			texts["note"] = ""
		default:
			if err := r.svc.senders.GiveBack(ctx, s, action, now); err != nil {
				return nil, false, err
			}
			e.waitOn(s.ID, action, "note_quota", ptr(senders.NextMonth(now, loc)))
			return save()
		}
	}
	a := &ActionRecord{ID: newID(), WorkspaceID: e.WorkspaceID, EnrollmentID: e.ID, SequenceID: e.SequenceID, StepID: step.ID,
		Attempt: e.Attempt, SenderID: s.ID, LeadID: e.LeadID, Action: string(action), IdemKey: actionKey(e, step.ID),
		Status: "sending", WithNote: withNote, Day: senders.LocalDate(now, loc), CreatedAt: now}
	if err := r.svc.store.InsertAction(ctx, a); err != nil {
		return nil, false, err
	}
	sending := waitingSending
	e.WaitingFor, e.WaitingUntil, e.WaitingSenderID, e.WaitingAction, e.UpdatedAt = &sending, nil, nil, nil, now
	if err := r.svc.store.Save(ctx, e); err != nil {
		return nil, false, err
	}
	req := senders.Request{Key: a.IdemKey, Sender: s, Action: action, Lead: rec, Note: texts["note"], Subject: texts["subject"], Body: texts["body"], Purpose: senders.PurposeSequence}
	return &call{e: e, q: q, step: step, sender: s, action: a, req: req, leadClient: lead.ClientID}, false, nil
}

// render fills a step's note, subject and body with the lead's variables.
func render(step sequences.Step, lead *leads.Lead) (map[string]string, error) {
	vars := varsOf(lead)
	texts := map[string]string{}
	for field, t := range map[string]string{"note": step.Note, "subject": step.Subject, "body": step.Body} {
		out, missing, err := sequences.Render(t, vars)
		if err != nil || len(missing) > 0 {
			return nil, fmt.Errorf("Step %q, %s: the lead has no value for {{%v}} and the template gives no fallback.", step.ID, field, missing)
		}
		texts[field] = out
	}
	return texts, nil
}

// finish is phase two: it records the transport's answer and moves the
// enrollment on. An enrollment due again at once is returned unsaved, as
// prepare leaves one.
func (r *Runner) finish(ctx context.Context, c *call, res senders.Result, perr error) (*Enrollment, bool, error) {
	e, err := r.enrollment(ctx, c.e.WorkspaceID, c.e.ID)
	if err != nil {
		return nil, false, err
	}
	again, err := r.record(ctx, e, c, res, perr)
	return e, again, err
}

// record writes the outcome of c's action on e.
func (r *Runner) record(ctx context.Context, e *Enrollment, c *call, res senders.Result, perr error) (bool, error) {
	svc := r.svc
	now := svc.clock.Now()
	a := c.action
	action := senders.Action(a.Action)
	giveBack := func() error { return svc.senders.GiveBack(ctx, c.sender, action, a.CreatedAt) }
	if errors.Is(perr, errNotPerformed) {
		// Never sent: free the budget and the key, and run the step again.
		if err := giveBack(); err != nil {
			return false, err
		}
		if err := svc.store.DeleteAction(ctx, a); err != nil {
			return false, err
		}
		e.NextRunAt, e.WaitingFor, e.UpdatedAt = &now, nil, now
		return true, nil // saved by the step's run again
	}
	if perr == nil {
		a.Status, a.DoneAt = "sent", &now
		if err := svc.store.SaveAction(ctx, a); err != nil {
			return false, err
		}
		data := map[string]any{"action": a.Action, "purpose": senders.PurposeSequence}
		if e.ContactedAt == nil && action.Contacts() {
			// The enrollment's first contact: reports count the lead
			// contacted, and time its reply from here.
			e.ContactedAt, data["first_contact"] = &now, true
		}
		if action == senders.Invite {
			data["with_note"] = a.WithNote
			if err := svc.senders.RecordInvite(ctx, c.sender, e.LeadID, a.WithNote); err != nil {
				return false, err
			}
		}
		if res.ProviderMessageID != "" {
			data["provider_message_id"] = res.ProviderMessageID
		}
		ev := r.event(e, EventActionSent, a.StepID, data)
		ev.SenderID = c.sender.ID
		if err := svc.log.EmitMany(ctx, []events.Event{ev}); err != nil {
			return false, err
		}
		if err := r.toThread(ctx, e, c, res, now); err != nil {
			return false, err
		}
		if e.Status != Active || e.StepID != a.StepID {
			// Paused, exited or moved while the action was out: it was
			// sent, and the enrollment stays where it now is.
			if deref(e.WaitingFor) == waitingSending {
				e.WaitingFor = nil
			}
			e.LeaseUntil = nil
			return false, svc.store.Save(ctx, e)
		}
		if err := r.advance(ctx, e, c.q, c.step, c.q.After(c.step), now); err != nil {
			return false, err
		}
		return r.saveAfter(ctx, e, now)
	}
	te, _ := senders.AsTransportError(perr)
	if err := giveBack(); err != nil {
		return false, err
	}
	a.Status, a.DoneAt, a.ErrorCode = "failed", &now, &te.Code
	if err := svc.store.SaveAction(ctx, a); err != nil {
		return false, err
	}
	msg := te.Message
	e.LastErrorCode, e.LastError = &te.Code, &msg
	switch te.Kind {
	case senders.Transient:
		e.Attempt++
		if e.Attempt >= r.MaxAttempts {
			if err := r.fail(ctx, e, te.Code, fmt.Sprintf("%s (after %d attempts)", te.Message, e.Attempt), now); err != nil {
				return false, err
			}
		} else {
			e.wait("retrying", ptr(now.Add(r.Backoff(e.Attempt))))
		}
	case senders.SenderLevel:
		e.Attempt++
		// The tick's workers share the cached sender: the signal changes a
		// copy, which then replaces it.
		s := *c.sender
		if err := svc.senders.Signal(ctx, &s, te.Signal, te.Message); err != nil {
			return false, err
		}
		r.tickMu.Lock()
		r.tick.senders[s.ID] = &s
		r.tickMu.Unlock()
		e.waitOn(s.ID, action, "sender_"+string(s.Health), ptr(senders.NextMidnight(now, s.Location())))
		if s.Health == senders.Disconnected {
			e.waitOn(s.ID, action, "sender_disconnected", nil)
		}
	default:
		if err := r.fail(ctx, e, te.Code, te.Message, now); err != nil {
			return false, err
		}
	}
	return r.saveAfter(ctx, e, now)
}

// saveAfter saves e after its action's outcome, unless it is due again at
// once: the run of its next step then saves it with that step's changes.
func (r *Runner) saveAfter(ctx context.Context, e *Enrollment, now time.Time) (bool, error) {
	e.UpdatedAt = now
	if e.Status == Active && e.NextRunAt != nil && !e.NextRunAt.After(now) {
		return true, nil
	}
	e.LeaseUntil = nil
	return false, r.svc.store.Save(ctx, e)
}

// postpone returns when an enrollment whose action's budget is spent should
// look again: not at the reset itself but when the sender's next window
// opens after it, and spread over the following working days by the
// day's cap, so that a backlog of thousands is not woken all at once each
// day only for most of it to wait again. The budget check at that moment
// decides; this only saves runs.
func (r *Runner) postpone(s *senders.Sender, a senders.Action, from time.Time) time.Time {
	loc := s.Location()
	t, ok := s.Schedule.NextOpen(from, loc)
	if !ok {
		return from
	}
	day := senders.LocalDate(t, loc)
	r.mu.Lock()
	n := r.deferred[deferKey{s.ID, a, day}]
	r.deferred[deferKey{s.ID, a, day}] = n + 1
	if len(r.deferred) > 100000 {
		clear(r.deferred)
	}
	r.mu.Unlock()
	perDay := max(s.Limits(a, day).EffectiveCap, 1)
	for range min(n/perDay, 60) {
		if next, ok := s.Schedule.NextOpen(senders.NextMidnight(t, loc), loc); ok {
			t = next
		}
	}
	return t
}

// advance moves the enrollment from step to next, or finishes it.
func (r *Runner) advance(ctx context.Context, e *Enrollment, q *sequences.Sequence, step sequences.Step, next string, now time.Time) error {
	if err := r.svc.store.CountStep(ctx, q.ID, step.ID, "done", 1); err != nil {
		return err
	}
	e.Attempt, e.WaitingFor, e.WaitingUntil, e.WaitingSenderID, e.WaitingAction, e.LastErrorCode, e.LastError = 0, nil, nil, nil, nil, nil, nil
	if next == sequences.End {
		e.Status, e.EndedAt, e.NextRunAt = Finished, &now, nil
		return r.svc.log.EmitMany(ctx, []events.Event{r.event(e, EventFinished, step.ID, map[string]any{"sequence_id": e.SequenceID})})
	}
	e.StepID, e.StepStartedAt, e.NextRunAt = next, now, &now
	return r.svc.store.CountStep(ctx, q.ID, next, "entered", 1)
}

// fail marks the enrollment failed at its step with a code.
func (r *Runner) fail(ctx context.Context, e *Enrollment, code, msg string, now time.Time) error {
	e.Status, e.FailedAt, e.LastErrorCode, e.LastError, e.NextRunAt, e.WaitingFor, e.WaitingUntil = Failed, &now, &code, &msg, nil, nil, nil
	if err := r.svc.store.CountStep(ctx, e.SequenceID, e.StepID, "failed", 1); err != nil {
		return err
	}
	return r.svc.log.EmitMany(ctx, []events.Event{r.event(e, EventFailed, e.StepID, map[string]any{"sequence_id": e.SequenceID, "code": code, "message": msg})})
}

// end moves the enrollment to a terminal status.
func (r *Runner) end(ctx context.Context, e *Enrollment, status Status, reason string, now time.Time) error {
	return r.svc.log.EmitMany(ctx, []events.Event{r.ended(e, status, reason, now)})
}

// ended moves the enrollment to a terminal status and returns the event
// that says so, for the caller to write.
func (r *Runner) ended(e *Enrollment, status Status, reason string, now time.Time) events.Event {
	e.Status, e.EndedAt, e.NextRunAt, e.WaitingFor, e.WaitingUntil = status, &now, nil, nil, nil
	if status == Stopped {
		code, _, _ := strings.Cut(reason, ":")
		e.LastErrorCode = &code
	}
	kind := EventStopped
	if status == Replied {
		kind = EventReplied
	}
	return r.event(e, kind, e.StepID, map[string]any{"sequence_id": e.SequenceID, "reason": reason})
}

func (r *Runner) event(e *Enrollment, kind, stepID string, data map[string]any) events.Event {
	return events.Event{WorkspaceID: e.WorkspaceID, LeadID: e.LeadID, SequenceID: e.SequenceID, EnrollmentID: e.ID,
		SenderID: deref(e.SenderID), ClientID: deref(e.ClientID), StepID: stepID, Kind: kind, Data: data}
}

func ptr[T any](v T) *T { return &v }

// principalOf is the engine's own view of a workspace, for reads that
// take a principal.
func principalOf(workspaceID string) apikit.Principal {
	return apikit.Principal{WorkspaceID: workspaceID, Role: apikit.RoleOwner}
}
