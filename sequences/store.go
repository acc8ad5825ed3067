package sequences

import (
	"context"

	"github.com/leadline/leadline/internal/db"
)

// Store is the persistence the sequences service needs. BunStore serves it
// on SQLite and Postgres; every method joins the transaction in ctx.
type Store interface {
	// Save inserts q (E_CONFLICT when its workspace has a sequence of its
	// name) or updates it.
	Save(ctx context.Context, q *Sequence, insert bool) error
	// ByID and ByName return sql.ErrNoRows (db.IsNoRows) when the
	// workspace has no such sequence.
	ByID(ctx context.Context, workspaceID, id string) (*Sequence, error)
	ByIDs(ctx context.Context, ids []string) ([]Sequence, error)
	ByName(ctx context.Context, workspaceID, name string) (*Sequence, error)
	List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Sequence, int, error)
	Refs(ctx context.Context, workspaceID string, ids []string) ([]Ref, error)
}

// Filter narrows a list of sequences.
type Filter struct {
	ClientID string
	Status   Status
	Limit    int
	Offset   int
}

// BunStore is the Store on bun, for both engines.
type BunStore struct {
	db *db.DB
	// byID and byIDs read sequences by id, which the runner does every
	// tick: prepared once per connection.
	byID, byIDs *db.InQuery
}

// NewBunStore returns the store on d.
func NewBunStore(d *db.DB) *BunStore {
	b := &BunStore{db: d}
	b.byID, b.byIDs = db.IDQueries(d, (*Sequence)(nil), "q")
	return b
}

// Save inserts or updates q.
func (b *BunStore) Save(ctx context.Context, q *Sequence, insert bool) error {
	idb := b.db.IDB(ctx)
	if insert {
		_, err := idb.NewInsert().Model(q).Exec(ctx)
		return db.Conflict(err, "A sequence named "+q.Name+" already exists in this workspace.", "Give each sequence a unique name.")
	}
	_, err := idb.NewUpdate().Model(q).WherePK().Exec(ctx)
	return err
}

// ByID returns the workspace's sequence with id.
func (b *BunStore) ByID(ctx context.Context, workspaceID, id string) (*Sequence, error) {
	return db.First(db.SelectList[Sequence](ctx, b.db, b.byID, []any{workspaceID}, []string{id}))
}

// ByIDs returns the sequences with ids, of any workspace.
func (b *BunStore) ByIDs(ctx context.Context, ids []string) ([]Sequence, error) {
	return db.SelectList[Sequence](ctx, b.db, b.byIDs, nil, ids)
}

// ByName returns the workspace's sequence named name.
func (b *BunStore) ByName(ctx context.Context, workspaceID, name string) (*Sequence, error) {
	q := new(Sequence)
	err := b.db.IDB(ctx).NewSelect().Model(q).Where("q.workspace_id = ? AND q.name = ?", workspaceID, name).Scan(ctx)
	return q, err
}

// List returns one page of the workspace's sequences, by name, limited to
// the clients in scope when scope is not empty.
func (b *BunStore) List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Sequence, int, error) {
	return db.List[Sequence](b.db.IDB(ctx), "q", workspaceID, scope).
		Equal("client_id", f.ClientID).Equal("status", string(f.Status)).
		Page(ctx, "q.name, q.id", f.Limit, f.Offset)
}
