package tasks

import (
	"context"
	"strings"
	"time"

	"github.com/leadline/leadline/internal/db"
)

// Store is the persistence the tasks service needs. BunStore serves it on
// SQLite and Postgres; every method joins the transaction in ctx.
type Store interface {
	// Insert adds t unless its enrollment already has a task for the same
	// visit of the step; it reports whether it added it. When t has no
	// assignee and owners are given, the task goes to the first member
	// they name, in order, found in the INSERT itself; t.AssigneeID is set
	// to what was stored.
	Insert(ctx context.Context, t *Task, owners ...Owner) (bool, error)
	// ForVisit returns the task of one visit of a step by an enrollment.
	// Returns sql.ErrNoRows (db.IsNoRows) if the visit has none.
	ForVisit(ctx context.Context, enrollmentID, stepID string, stepStartedAt time.Time) (*Task, error)
	// ByID returns the workspace's task with id. Returns sql.ErrNoRows
	// (db.IsNoRows) if the workspace has none.
	ByID(ctx context.Context, workspaceID, id string) (*Task, error)
	// Finish completes t if it is still open; it reports whether it did.
	Finish(ctx context.Context, t *Task) (bool, error)
	// SetAssignee writes t's assignee and updated_at.
	SetAssignee(ctx context.Context, t *Task) error
	// List returns one page of the workspace's tasks, limited to the
	// clients in scope when scope is not empty, the earliest due first,
	// and their total.
	List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Task, int, error)
}

// Owner names, as an SQL expression and its arguments, the member a new
// task t goes to, or NULL: a read view of the area that knows (the lead's
// thread, the enrollment's log), of the column's type (a bare NULL has
// none on Postgres). The INSERT evaluates it, so finding the owner costs
// the runner no statement of its own.
type Owner func(t *Task) (expr string, args []any)

// Filter narrows a list of tasks.
type Filter struct {
	Status     Status
	AssigneeID string // a member id; "none": unassigned
	SequenceID string
	LeadID     string
	ClientID   string
	DueBefore  *time.Time
	Limit      int
	Offset     int
}

var _ Store = (*BunStore)(nil)

// BunStore is the Store on bun, for both engines.
type BunStore struct{ db *db.DB }

// NewBunStore returns the store on d.
func NewBunStore(d *db.DB) *BunStore { return &BunStore{db: d} }

// Insert adds t unless its visit already has a task.
func (b *BunStore) Insert(ctx context.Context, t *Task, owners ...Owner) (bool, error) {
	const visit = "CONFLICT (enrollment_id, step_id, step_started_at) DO NOTHING"
	if t.AssigneeID != nil || len(owners) == 0 {
		return db.InsertIfAbsent(ctx, b.db.IDB(ctx), t, "enrollment_id, step_id, step_started_at")
	}
	exprs, args := make([]string, 0, len(owners)+1), []any(nil)
	for _, o := range owners {
		e, a := o(t)
		exprs, args = append(exprs, e), append(args, a...)
	}
	if len(exprs) == 1 {
		exprs = append(exprs, "NULL")
	}
	var stored []struct {
		AssigneeID *string `bun:"assignee_id"`
	}
	_, err := b.db.IDB(ctx).NewInsert().Model(t).Value("assignee_id", "COALESCE("+strings.Join(exprs, ", ")+")", args...).
		On(visit).Returning("assignee_id").Exec(ctx, &stored)
	if err != nil || len(stored) == 0 {
		return false, err
	}
	t.AssigneeID = stored[0].AssigneeID
	return true, nil
}

// ForVisit returns the task of one visit of a step.
func (b *BunStore) ForVisit(ctx context.Context, enrollmentID, stepID string, stepStartedAt time.Time) (*Task, error) {
	t := new(Task)
	err := b.db.IDB(ctx).NewSelect().Model(t).
		Where("t.enrollment_id = ? AND t.step_id = ? AND t.step_started_at = ?", enrollmentID, stepID, stepStartedAt).Scan(ctx)
	return t, err
}

// ByID returns the workspace's task with id.
func (b *BunStore) ByID(ctx context.Context, workspaceID, id string) (*Task, error) {
	t := new(Task)
	err := b.db.IDB(ctx).NewSelect().Model(t).Where("t.workspace_id = ? AND t.id = ?", workspaceID, id).Scan(ctx)
	return t, err
}

// Finish writes t's completion if it is still open: two members completing
// one task at once cannot both succeed.
func (b *BunStore) Finish(ctx context.Context, t *Task) (bool, error) {
	return db.Changed(b.db.IDB(ctx).NewUpdate().Model(t).
		Column("status", "note", "completed_by", "completed_at", "updated_at").
		WherePK().Where("status = ?", Open).Exec(ctx))
}

// SetAssignee writes t's assignee.
func (b *BunStore) SetAssignee(ctx context.Context, t *Task) error {
	_, err := b.db.IDB(ctx).NewUpdate().Model(t).Column("assignee_id", "updated_at").WherePK().Exec(ctx)
	return err
}

// List returns one page of the workspace's tasks, the earliest due first.
func (b *BunStore) List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Task, int, error) {
	q := db.List[Task](b.db.IDB(ctx), "t", workspaceID, scope).EqualOrNone("assignee_id", f.AssigneeID).
		Equal("status", string(f.Status)).Equal("sequence_id", f.SequenceID).Equal("lead_id", f.LeadID).Equal("client_id", f.ClientID)
	if f.DueBefore != nil {
		q.Where("t.due_at < ?", *f.DueBefore)
	}
	return q.Page(ctx, "t.due_at, t.id", f.Limit, f.Offset)
}
