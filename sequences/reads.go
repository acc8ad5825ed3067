package sequences

import (
	"context"

	"github.com/leadline/leadline/internal/db"
)

// What other areas read of the sequences table goes through the service
// (ByID, Visible, Refs) or, inside a statement that must stay one for its
// plan, through the read view this file names (Rows): the sequences own
// the shape of their table.

// Ref is what other areas show of a sequence: its id, name and client.
type Ref struct {
	ID       string  `bun:"id"`
	Name     string  `bun:"name"`
	ClientID *string `bun:"client_id"`
}

// Refs returns the workspace's sequences among ids (all of them when ids
// is nil), by name and id.
func (b *BunStore) Refs(ctx context.Context, workspaceID string, ids []string) ([]Ref, error) {
	return db.Refs[Ref](ctx, b.db.IDB(ctx), "sequences", workspaceID, ids, "id", "name", "client_id")
}

// Refs returns the id, name and client of the workspace's sequences among
// ids (all of them when ids is nil), by name and id. An id that does not
// exist is left out.
func (svc *Service) Refs(ctx context.Context, workspaceID string, ids []string) ([]Ref, error) {
	return svc.store.Refs(ctx, workspaceID, ids)
}

// Rows is a read view for another area's statement: the table expression
// of the sequences under alias, of which other areas read the columns id,
// workspace_id, client_id, name and status, and no other.
func Rows(alias string) string { return "sequences AS " + alias }
