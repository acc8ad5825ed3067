package sequences

import (
	"context"

	"github.com/leadline/leadline/internal/db"
)

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
