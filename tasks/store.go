package tasks

import (
	"context"
	"time"

	"github.com/leadline/leadline/internal/db"
)

// Store is the persistence the tasks service needs. BunStore serves it on
// SQLite and Postgres; every method joins the transaction in ctx.
type Store interface {
	// Insert adds t unless its enrollment already has a task for the same
	// visit of the step; it reports whether it added it.
	Insert(ctx context.Context, t *Task) (bool, error)
	// ForVisit returns the task of one visit of a step by an enrollment.
	// Returns sql.ErrNoRows (db.IsNoRows) if the visit has none.
	ForVisit(ctx context.Context, enrollmentID, stepID string, stepStartedAt time.Time) (*Task, error)
	// ByID returns the workspace's task with id. Returns sql.ErrNoRows
	// (db.IsNoRows) if the workspace has none.
	ByID(ctx context.Context, workspaceID, id string) (*Task, error)
	// Finish completes t if it is still open; it reports whether it did.
	Finish(ctx context.Context, t *Task) (bool, error)
	// List returns one page of the workspace's tasks, limited to the
	// clients in scope when scope is not empty, the earliest due first,
	// and their total.
	List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Task, int, error)
}

// Filter narrows a list of tasks.
type Filter struct {
	Status     Status
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
func (b *BunStore) Insert(ctx context.Context, t *Task) (bool, error) {
	return db.InsertIfAbsent(ctx, b.db.IDB(ctx), t, "enrollment_id, step_id, step_started_at")
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

// List returns one page of the workspace's tasks, the earliest due first.
func (b *BunStore) List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Task, int, error) {
	q := db.List[Task](b.db.IDB(ctx), "t", workspaceID, scope).
		Equal("status", string(f.Status)).Equal("sequence_id", f.SequenceID).Equal("lead_id", f.LeadID).Equal("client_id", f.ClientID)
	if f.DueBefore != nil {
		q.Where("t.due_at < ?", *f.DueBefore)
	}
	return q.Page(ctx, "t.due_at, t.id", f.Limit, f.Offset)
}
