package enrollments

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/sequences"
)

// liveStatuses are the statuses that hold a lead.
var liveStatuses = []Status{Active, Paused}

// Filter narrows a list of enrollments.
type Filter struct {
	SequenceID string
	LeadID     string
	SenderID   string
	Status     Status
	Limit      int
	Offset     int
}

// Store is the heart of the enrollments' persistence, what
// enrollmentstest holds every store to: BunStore serves it on SQLite and
// Postgres, and every method joins the transaction in ctx. The runner
// and the views use more of BunStore.
type Store interface {
	// Insert inserts enrollments. A lead that already has a live
	// enrollment in the workspace makes it fail with a unique violation.
	Insert(ctx context.Context, es []Enrollment) error
	// Save updates e: the columns that changed since it was read, or
	// every column of one that was not read.
	Save(ctx context.Context, e *Enrollment) error
	// ByID returns the workspace's enrollment with id. Returns
	// sql.ErrNoRows if the workspace has none.
	ByID(ctx context.Context, workspaceID, id string) (*Enrollment, error)
	// Live returns the live (active or paused) enrollments of the leads.
	Live(ctx context.Context, workspaceID string, leadIDs []string) ([]Enrollment, error)
	// ForLead returns the lead's enrollments, newest first.
	ForLead(ctx context.Context, workspaceID, leadID string) ([]Enrollment, error)
	// Claim leases up to limit enrollments due at now (active, not held,
	// no lease running) until leaseUntil, the earliest due first, and
	// returns their workspace, id and senders.
	Claim(ctx context.Context, now, leaseUntil time.Time, limit int) ([]Enrollment, error)
	// ContactedAt returns when each of the enrollments among ids first
	// contacted its lead; one that has not is left out.
	ContactedAt(ctx context.Context, ids []string) (map[string]time.Time, error)
	// Waiting returns how many of the sequence's active enrollments wait
	// for each of reasons; a reason none waits for is left out.
	Waiting(ctx context.Context, sequenceID string, reasons []string) (map[string]int, error)
}

var _ Store = (*BunStore)(nil)

// BunStore is the enrollments' store on bun, for both engines. Every
// method joins the transaction in ctx.
type BunStore struct {
	db *db.DB
	// byID is ByID's statement, without and with a row lock.
	byID     [2]string
	byIDOnce sync.Once
	// forRun are ByIDsForRun's statements, without and with row locks.
	forRun [2]*db.InQuery
}

// NewBunStore returns the store on d.
func NewBunStore(d *db.DB) *BunStore {
	b := &BunStore{db: d}
	for lock := range b.forRun {
		b.forRun[lock] = db.NewInQuery(func(marks string) string {
			q := d.NewSelect().Model((*Enrollment)(nil)).Where("e.id IN (?)", bun.Safe(marks)).OrderExpr("e.id")
			if lock == 1 {
				q = q.For("UPDATE")
			}
			return q.String()
		})
	}
	return b
}

func (b *BunStore) idb(ctx context.Context) bun.IDB { return b.db.IDB(ctx) }

// chunks calls fn on ids in chunks small enough for one statement.
func chunks(ids []string, fn func(part []string) error) error {
	for start := 0; start < len(ids); start += 500 {
		if err := fn(ids[start:min(start+500, len(ids))]); err != nil {
			return err
		}
	}
	return nil
}

// Insert inserts enrollments. A lead that gained a live enrollment in the
// meantime makes it fail with a unique violation.
func (b *BunStore) Insert(ctx context.Context, es []Enrollment) error {
	for start := 0; start < len(es); start += 200 {
		part := es[start:min(start+200, len(es))]
		if _, err := b.idb(ctx).NewInsert().Model(&part).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Save updates e: the columns that changed since it was loaded, or every
// column of one that was not loaded. The changed columns are written by a
// statement prepared once per connection for each set of columns: the
// runner saves at every step, and its steps change a few sets again and
// again. In a runner transaction the save is queued and written with the
// transaction's others just before its commit (see saveRows).
func (b *BunStore) Save(ctx context.Context, e *Enrollment) error {
	if e.loaded == nil {
		if _, err := b.idb(ctx).NewUpdate().Model(e).WherePK().Exec(ctx); err != nil {
			return err
		}
		e.remember()
		return nil
	}
	cols, args := e.changes(b.db)
	if len(cols) == 0 {
		return nil
	}
	if batched(ctx) && db.Later(ctx, "enrollments", savedRow{id: e.ID, cols: cols, args: args}, b.saveRows) {
		e.remember()
		return nil
	}
	if err := b.saveRow(ctx, savedRow{id: e.ID, cols: cols, args: args}); err != nil {
		return err
	}
	e.remember()
	return nil
}

// savedRow is the changed columns of one enrollment and their values.
type savedRow struct {
	id   string
	cols []string
	args []any
}

// batchedKey marks a runner transaction, whose saves of the enrollments
// it locked are written together before its commit: it reads none of them
// again.
type batchedKey struct{}

// Batched marks ctx as a runner transaction's, whose enrollment saves wait
// for the commit.
func Batched(ctx context.Context) context.Context { return context.WithValue(ctx, batchedKey{}, true) }

func batched(ctx context.Context) bool { return ctx.Value(batchedKey{}) != nil }

// enrollmentTypes are the Postgres types of the columns Save writes, for
// the first row of a VALUES list.
var enrollmentTypes = map[string]string{
	"id": "uuid", "sender_id": "uuid", "email_sender_id": "uuid", "waiting_sender_id": "uuid",
	"attempt": "integer", "held": "boolean",
	"step_started_at": "timestamptz", "next_run_at": "timestamptz", "waiting_until": "timestamptz",
	"failed_at": "timestamptz", "ended_at": "timestamptz", "contacted_at": "timestamptz",
	"lease_until": "timestamptz", "updated_at": "timestamptz",
}

// saveRows writes the saves a runner transaction queued: an enrollment
// saved twice gets its columns merged, the later value winning, and the
// enrollments whose changed columns are the same are updated by one
// statement from a VALUES list.
func (b *BunStore) saveRows(ctx context.Context, rows []savedRow) error {
	merged := map[string]int{}
	var out []savedRow
	for _, r := range rows {
		i, seen := merged[r.id]
		if !seen {
			merged[r.id] = len(out)
			out = append(out, savedRow{id: r.id, cols: slices.Clone(r.cols), args: slices.Clone(r.args)})
			continue
		}
		m := &out[i]
		for k, c := range r.cols {
			if j := slices.Index(m.cols, c); j >= 0 {
				m.args[j] = r.args[k]
			} else {
				m.cols, m.args = append(m.cols, c), append(m.args, r.args[k])
			}
		}
	}
	bySet := map[string][]savedRow{}
	var sets []string
	for _, r := range out {
		// One order of columns per set, whatever order the merge left.
		idx := make([]int, len(r.cols))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return strings.Compare(r.cols[a], r.cols[b]) })
		sorted := savedRow{id: r.id}
		for _, i := range idx {
			sorted.cols, sorted.args = append(sorted.cols, r.cols[i]), append(sorted.args, r.args[i])
		}
		key := strings.Join(sorted.cols, ",")
		if _, ok := bySet[key]; !ok {
			sets = append(sets, key)
		}
		bySet[key] = append(bySet[key], sorted)
	}
	for _, key := range sets {
		group := bySet[key]
		if len(group) == 1 {
			if err := b.saveRow(ctx, group[0]); err != nil {
				return err
			}
			continue
		}
		rows := make([][]any, len(group))
		for i, r := range group {
			rows[i] = append([]any{r.id}, r.args...)
		}
		if err := b.db.UpdateRows(ctx, "enrollments", group[0].cols, enrollmentTypes, rows); err != nil {
			return err
		}
	}
	return nil
}

// saveRow updates one enrollment's changed columns, by a statement
// prepared once per connection for each set of columns.
func (b *BunStore) saveRow(ctx context.Context, r savedRow) error {
	cols, args := r.cols, r.args
	var sb strings.Builder
	sb.WriteString("UPDATE enrollments SET ")
	for i, c := range cols {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(c + " = ?")
	}
	sb.WriteString(" WHERE id = ?")
	return b.db.ExecPrepared(ctx, sb.String(), append(slices.Clone(args), r.id)...)
}

// remember keeps e as loaded, for the next save.
func (e *Enrollment) remember() {
	c := *e
	c.loaded = nil
	e.loaded = &c
}

// ByID returns the workspace's enrollment with id. Inside a transaction on
// Postgres the row is locked until commit.
// The runner reads an enrollment at each step: the statement is prepared
// once per connection.
func (b *BunStore) ByID(ctx context.Context, workspaceID, id string) (*Enrollment, error) {
	_, lock := b.idb(ctx).(bun.Tx)
	lock = lock && b.db.Engine == db.Postgres
	b.byIDOnce.Do(func() {
		q := b.db.NewSelect().Model((*Enrollment)(nil)).Where("e.workspace_id = ? AND e.id = ?", bun.Safe("?"), bun.Safe("?"))
		b.byID[0] = q.String()
		b.byID[1] = q.For("UPDATE").String()
	})
	var out []Enrollment
	if err := b.db.SelectPrepared(ctx, &out, b.byID[btoi(lock)], workspaceID, id); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, sql.ErrNoRows
	}
	e := &out[0]
	e.remember()
	return e, nil
}

// ByIDsForRun returns the enrollments with ids, by id, read as ByID reads
// one: on Postgres in a transaction locked, in the order of their ids, so
// that two transactions that lock several wait for each other instead of
// deadlocking.
func (b *BunStore) ByIDsForRun(ctx context.Context, ids []string) (map[string]*Enrollment, error) {
	_, lock := b.idb(ctx).(bun.Tx)
	lock = lock && b.db.Engine == db.Postgres
	if lock && len(ids) > db.MaxPreparedList {
		// Read in parts: each part locks after the one before it.
		ids = slices.Sorted(slices.Values(ids))
	}
	out, err := db.SelectList[Enrollment](ctx, b.db, b.forRun[btoi(lock)], nil, ids)
	if err != nil {
		return nil, err
	}
	m := make(map[string]*Enrollment, len(out))
	for i := range out {
		out[i].remember()
		m[out[i].ID] = &out[i]
	}
	return m, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// EndReplied moves enrollments to replied, as Runner.ended does one, in
// one statement (reply-stop of an ingest batch).
func (b *BunStore) EndReplied(ctx context.Context, ids []string, now time.Time) error {
	return chunks(ids, func(part []string) error {
		_, err := b.idb(ctx).NewUpdate().Model((*Enrollment)(nil)).Set("status = ?", Replied).Set("ended_at = ?", now).
			Set("next_run_at = NULL").Set("waiting_for = NULL").Set("waiting_until = NULL").Set("lease_until = NULL").Set("updated_at = ?", now).
			Where("id IN (?)", bun.In(part)).Exec(ctx)
		return err
	})
}

// Live returns the live enrollments of the leads.
func (b *BunStore) Live(ctx context.Context, workspaceID string, leadIDs []string) ([]Enrollment, error) {
	var out []Enrollment
	err := chunks(leadIDs, func(part []string) error {
		var es []Enrollment
		err := b.idb(ctx).NewSelect().Model(&es).
			Where("e.workspace_id = ? AND e.lead_id IN (?) AND e.status IN (?)", workspaceID, bun.In(part), bun.In(liveStatuses)).Scan(ctx)
		out = append(out, es...)
		return err
	})
	return out, err
}

// InSequence returns which of the leads have any enrollment in the sequence.
func (b *BunStore) InSequence(ctx context.Context, sequenceID string, leadIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := chunks(leadIDs, func(part []string) error {
		var ids []string
		// By the leads: each has few enrollments, a sequence may have
		// hundreds of thousands.
		err := b.idb(ctx).NewSelect().TableExpr(b.db.IndexedBy("enrollments AS e", "enrollments_lead")).Column("e.lead_id").
			Where("e.lead_id IN (?) AND e.sequence_id = ?", bun.In(part), sequenceID).Scan(ctx, &ids)
		for _, id := range ids {
			out[id] = true
		}
		return err
	})
	return out, err
}

// ContactedBy returns, for each of the leads that one of the senders already
// sent an action to, the sender that did.
func (b *BunStore) ContactedBy(ctx context.Context, leadIDs, senderIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(senderIDs) == 0 {
		return out, nil
	}
	err := chunks(leadIDs, func(part []string) error {
		var rows []struct {
			LeadID   string `bun:"lead_id"`
			SenderID string `bun:"sender_id"`
		}
		err := b.idb(ctx).NewSelect().Model((*ActionRecord)(nil)).Column("lead_id", "sender_id").
			Where("a.lead_id IN (?) AND a.sender_id IN (?) AND a.status = 'sent'", bun.In(part), bun.In(senderIDs)).
			Scan(ctx, &rows)
		for _, r := range rows {
			out[r.LeadID] = r.SenderID
		}
		return err
	})
	return out, err
}

// LiveLoad returns how many live enrollments each sender carries.
func (b *BunStore) LiveLoad(ctx context.Context, senderIDs []string) (map[string]int, error) {
	out := map[string]int{}
	if len(senderIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		SenderID string `bun:"sender_id"`
		N        int    `bun:"n"`
	}
	err := b.idb(ctx).NewSelect().Model((*Enrollment)(nil)).Column("sender_id").ColumnExpr("count(*) AS n").
		Where("e.sender_id IN (?) AND e.status IN (?)", bun.In(senderIDs), bun.In(liveStatuses)).Group("sender_id").Scan(ctx, &rows)
	for _, r := range rows {
		out[r.SenderID] = r.N
	}
	return out, err
}

// budgetWaits are the waits of due work on a sender's spent budget.
var budgetWaits = []string{"daily_cap_reached", "weekly_invite_cap_reached", "warmup_limit"}

// WaitingOnBudget returns, for each of the senders that has any, how many
// active enrollments wait for its spent budget.
func (b *BunStore) WaitingOnBudget(ctx context.Context, senderIDs []string) (map[string]int, error) {
	out := map[string]int{}
	err := chunks(senderIDs, func(part []string) error {
		var rows []struct {
			SenderID string `bun:"waiting_sender_id"`
			N        int    `bun:"n"`
		}
		err := b.idb(ctx).NewSelect().Model((*Enrollment)(nil)).Column("waiting_sender_id").ColumnExpr("count(*) AS n").
			Where("e.waiting_sender_id IN (?) AND e.status = 'active' AND e.waiting_for IN (?)", bun.In(part), bun.In(budgetWaits)).
			Group("waiting_sender_id").Scan(ctx, &rows)
		for _, r := range rows {
			out[r.SenderID] = r.N
		}
		return err
	})
	return out, err
}

// LastActionAt returns when each of the sequences that has recorded an
// action recorded its latest, each through the index of its actions.
func (b *BunStore) LastActionAt(ctx context.Context, sequenceIDs []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := chunks(sequenceIDs, func(part []string) error {
		var rows []struct {
			ID   string     `bun:"id"`
			Last *time.Time `bun:"last"`
		}
		err := b.idb(ctx).NewSelect().TableExpr(sequences.Rows("q")).Column("q.id").
			ColumnExpr("(SELECT max(a.created_at) FROM actions AS a WHERE a.sequence_id = q.id) AS last").
			Where("q.id IN (?)", bun.In(part)).Scan(ctx, &rows)
		for _, r := range rows {
			if r.Last != nil {
				out[r.ID] = *r.Last
			}
		}
		return err
	})
	return out, err
}

// List returns one page of the workspace's enrollments, newest first.
func (b *BunStore) List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Enrollment, int, error) {
	q := db.List[Enrollment](b.idb(ctx), "e", workspaceID, scope).Equal("sequence_id", f.SequenceID).Equal("lead_id", f.LeadID)
	if f.SenderID != "" {
		q.Where("(e.sender_id = ? OR e.email_sender_id = ?)", f.SenderID, f.SenderID)
	}
	return q.Equal("status", string(f.Status)).Page(ctx, "e.id DESC", f.Limit, f.Offset)
}

// ForLead returns the lead's enrollments, newest first.
func (b *BunStore) ForLead(ctx context.Context, workspaceID, leadID string) ([]Enrollment, error) {
	var out []Enrollment
	err := b.idb(ctx).NewSelect().Model(&out).Where("e.workspace_id = ? AND e.lead_id = ?", workspaceID, leadID).
		OrderExpr("e.created_at DESC, e.id DESC").Scan(ctx)
	return out, err
}

// Claim leases up to limit due enrollments until leaseUntil and returns
// them (workspace, id, sequence and senders). On Postgres, rows other runners hold are
// skipped; on SQLite the claim is one write in the single-writer queue.
func (b *BunStore) Claim(ctx context.Context, now, leaseUntil time.Time, limit int) ([]Enrollment, error) {
	var out []Enrollment
	// A lease lost in a crash only lets the enrollment be claimed again:
	// the claim commits without waiting for the disk.
	err := b.db.InTxNoFlush(ctx, func(ctx context.Context) error {
		return b.db.SelectPrepared(ctx, &out, `UPDATE enrollments SET lease_until = ? WHERE id IN (
			SELECT id FROM enrollments WHERE status = 'active' AND NOT held AND next_run_at <= ?
			  AND (lease_until IS NULL OR lease_until <= ?)
			ORDER BY next_run_at LIMIT ?`+b.db.SkipLocked()+`) RETURNING workspace_id, id, sequence_id, sender_id, email_sender_id`,
			b.db.TimeArg(&leaseUntil), b.db.TimeArg(&now), b.db.TimeArg(&now), limit)
	})
	return out, err
}

// NextDue returns when the runner next has an enrollment to run after now:
// the earliest next_run_at of runnable enrollments that no lease holds, or
// the end of a lease that holds a due one.
func (b *BunStore) NextDue(ctx context.Context, now time.Time) (time.Time, bool, error) {
	// One statement, one round trip: the earliest free enrollment by its
	// due time, and the earliest lease of a due one to run out.
	var due []struct {
		Free   *time.Time `bun:"free"`
		Leased *time.Time `bun:"leased"`
	}
	at := b.db.TimeArg(&now)
	if err := b.db.SelectPrepared(ctx, &due, `SELECT
		(SELECT e.next_run_at FROM enrollments AS e WHERE e.status = 'active' AND NOT e.held AND e.next_run_at IS NOT NULL
			AND (e.lease_until IS NULL OR e.lease_until <= ?) ORDER BY e.next_run_at LIMIT 1) AS free,
		(SELECT min(e.lease_until) FROM enrollments AS e WHERE e.status = 'active' AND NOT e.held AND e.next_run_at <= ?
			AND e.lease_until > ?) AS leased`, at, at, at); err != nil {
		return time.Time{}, false, err
	}
	var out time.Time
	for _, t := range []*time.Time{due[0].Free, due[0].Leased} {
		if t != nil && !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = *t
		}
	}
	return out, !out.IsZero(), nil
}

// SetHeld holds or releases the live enrollments of a sequence. Released
// ones keep their next run time, so those whose time has come are due.
func (b *BunStore) SetHeld(ctx context.Context, sequenceID string, held bool) error {
	_, err := b.idb(ctx).NewUpdate().Model((*Enrollment)(nil)).Set("held = ?", held).
		Where("sequence_id = ? AND status IN (?) AND held <> ?", sequenceID, bun.In(liveStatuses), held).Exec(ctx)
	return err
}

// Wake makes the lead's active enrollment, if it waits for reason, due
// now. It is found as the lead's one live enrollment in the workspace
// (enrollments_live), so that no plan walks every enrollment of the
// workspace that waits for reason instead.
func (b *BunStore) Wake(ctx context.Context, workspaceID, leadID, reason string, now time.Time) error {
	_, err := b.idb(ctx).NewUpdate().Model((*Enrollment)(nil)).Set("next_run_at = ?", now).
		Where("id = (SELECT id FROM enrollments WHERE workspace_id = ? AND lead_id = ? AND status IN (?))", workspaceID, leadID, bun.In(liveStatuses)).
		Where("status = 'active' AND coalesce(waiting_for, '') = ?", reason).Exec(ctx)
	return err
}

// InsertAction records an action about to go out. Inside a transaction
// the action is written with the transaction's others, in one statement
// just before the commit (db.Later): the runner writes one per step, and
// reads none of them back before the commit.
func (b *BunStore) InsertAction(ctx context.Context, a *ActionRecord) error {
	if db.Later(ctx, "actions", *a, b.insertActions) {
		return nil
	}
	return b.insertActions(ctx, []ActionRecord{*a})
}

func (b *BunStore) insertActions(ctx context.Context, as []ActionRecord) error {
	if len(as) > 1 {
		_, err := b.idb(ctx).NewInsert().Model(&as).Exec(ctx)
		return err
	}
	a := &as[0]
	return b.db.ExecPrepared(ctx, `INSERT INTO actions (id, workspace_id, enrollment_id, sequence_id, step_id, attempt, sender_id, lead_id,
		action, idem_key, status, with_note, day, error_code, created_at, done_at, variant_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.WorkspaceID, a.EnrollmentID, a.SequenceID, a.StepID, a.Attempt, a.SenderID, a.LeadID,
		a.Action, a.IdemKey, a.Status, a.WithNote, a.Day, a.ErrorCode, b.db.TimeArg(&a.CreatedAt), b.db.TimeArg(a.DoneAt), a.VariantID)
}

// SaveAction writes a's outcome: its status, done_at and error_code, the
// only fields that change after InsertAction. Inside a transaction it is
// written with the transaction's other outcomes just before the commit, as
// InsertAction writes actions.
func (b *BunStore) SaveAction(ctx context.Context, a *ActionRecord) error {
	if db.Later(ctx, "actions outcome", *a, b.saveActions) {
		return nil
	}
	return b.saveActions(ctx, []ActionRecord{*a})
}

func (b *BunStore) saveActions(ctx context.Context, as []ActionRecord) error {
	if len(as) == 1 {
		a := &as[0]
		return b.db.ExecPrepared(ctx, `UPDATE actions SET status = ?, done_at = ?, error_code = ? WHERE id = ?`,
			a.Status, b.db.TimeArg(a.DoneAt), a.ErrorCode, a.ID)
	}
	rows := make([][]any, len(as))
	for i, a := range as {
		rows[i] = []any{a.ID, a.Status, b.db.TimeArg(a.DoneAt), a.ErrorCode}
	}
	return b.db.UpdateRows(ctx, "actions", []string{"status", "done_at", "error_code"},
		map[string]string{"id": "uuid", "done_at": "timestamptz"}, rows)
}

// DeleteAction removes an action that was never performed.
func (b *BunStore) DeleteAction(ctx context.Context, a *ActionRecord) error {
	_, err := b.idb(ctx).NewDelete().Model(a).WherePK().Exec(ctx)
	return err
}

// SendingAction returns the enrollment's action still marked sending, if any.
func (b *BunStore) SendingAction(ctx context.Context, enrollmentID string) (*ActionRecord, error) {
	a := new(ActionRecord)
	err := b.idb(ctx).NewSelect().Model(a).Where("a.enrollment_id = ? AND a.status = 'sending'", enrollmentID).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return a, err
}

// CountStep adds n to a step's entered, done or failed count. Inside a
// transaction the counts are added up and written last, before the
// commit, in one statement whose rows are in a fixed order: concurrent
// runners then hold a sequence's hot counter rows only for their commit,
// and never lock two of them in opposite orders.
func (b *BunStore) CountStep(ctx context.Context, sequenceID, stepID, column string, n int) error {
	col := slices.Index(stepColumns, column)
	if col < 0 {
		return fmt.Errorf("enrollments: no step count %q", column)
	}
	memo := db.TxMemo(ctx)
	if memo == nil {
		counts := map[stepKey]*[3]int{{sequenceID, stepID}: new([3]int)}
		counts[stepKey{sequenceID, stepID}][col] = n
		return b.writeStepCounts(ctx, counts)
	}
	v, _ := memo.LoadOrStore(stepCountsMemo, &stepCounts{m: map[stepKey]*[3]int{}})
	sc := v.(*stepCounts)
	sc.mu.Lock()
	c := sc.m[stepKey{sequenceID, stepID}]
	if c == nil {
		c = new([3]int)
		sc.m[stepKey{sequenceID, stepID}] = c
	}
	c[col] += n
	sc.mu.Unlock()
	db.BeforeCommit(ctx, stepCountsMemo, func(ctx context.Context) error {
		sc.mu.Lock()
		m := sc.m
		sc.m = map[stepKey]*[3]int{}
		sc.mu.Unlock()
		return b.writeStepCounts(ctx, m)
	})
	return nil
}

var stepColumns = []string{"entered", "done", "failed"}

const stepCountsMemo = "enrollments:step_stats"

// StepShards is how many rows per step the step counters spread over on
// Postgres.
const StepShards = 8

type stepKey struct{ sequence, step string }

type stepCounts struct {
	mu sync.Mutex
	m  map[stepKey]*[3]int
}

// writeStepCounts adds counts to step_stats, its rows in key order.
func (b *BunStore) writeStepCounts(ctx context.Context, counts map[stepKey]*[3]int) error {
	if len(counts) == 0 {
		return nil
	}
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b stepKey) int {
		return cmp.Or(cmp.Compare(a.sequence, b.sequence), cmp.Compare(a.step, b.step))
	})
	var sb strings.Builder
	args := make([]any, 0, 5*len(keys))
	// On Postgres each transaction writes one of StepShards rows per step,
	// so that concurrent runner workers do not queue on one; SQLite has
	// one writer and one shard.
	shard := 0
	if b.db.Engine == db.Postgres {
		shard = rand.IntN(StepShards)
	}
	sb.WriteString("INSERT INTO step_stats (sequence_id, step_id, shard, entered, done, failed) VALUES ")
	for i, k := range keys {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(?, ?, ?, ?, ?, ?)")
		c := counts[k]
		args = append(args, k.sequence, k.step, shard, c[0], c[1], c[2])
	}
	sb.WriteString(` ON CONFLICT (sequence_id, step_id, shard) DO UPDATE SET entered = step_stats.entered + excluded.entered,
		done = step_stats.done + excluded.done, failed = step_stats.failed + excluded.failed`)
	// The runner writes one or two rows at a time: those shapes repeat and
	// are prepared once per connection.
	return b.db.Exec(ctx, sb.String(), len(keys) <= 2, args...)
}

// Failed returns the sequence's failed enrollments, or those among ids.
func (b *BunStore) Failed(ctx context.Context, sequenceID string, ids []string) ([]Enrollment, error) {
	var out []Enrollment
	q := b.idb(ctx).NewSelect().Model(&out).Where("e.sequence_id = ? AND e.status = ?", sequenceID, Failed)
	if ids != nil {
		if len(ids) == 0 {
			return nil, nil
		}
		q = q.Where("e.id IN (?)", bun.In(ids))
	}
	return out, q.OrderExpr("e.id").Scan(ctx)
}

// WakeWaiting makes the active enrollments of a workspace (or of one
// sender, when senderID is set) that wait for one of reasons due now.
func (b *BunStore) WakeWaiting(ctx context.Context, workspaceID, senderID string, reasons []string, now time.Time) error {
	q := b.idb(ctx).NewUpdate().Model((*Enrollment)(nil)).Set("next_run_at = ?", now).Set("waiting_for = NULL").Set("waiting_until = NULL").
		Where("workspace_id = ? AND status = 'active' AND waiting_for IN (?)", workspaceID, bun.In(reasons))
	if senderID != "" {
		q = q.Where("(sender_id = ? OR email_sender_id = ?)", senderID, senderID)
	}
	_, err := q.Exec(ctx)
	return err
}
