package leads

import (
	"context"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// Names returns the names of the workspace's leads among ids, by id.
func (s *BunStore) Names(ctx context.Context, workspaceID string, ids []string) (map[string]string, error) {
	if ids == nil {
		ids = []string{}
	}
	rows, err := db.Refs[struct {
		ID   string  `bun:"id"`
		Name *string `bun:"name"`
	}](ctx, s.idb(ctx), "leads", workspaceID, ids, "id", "name")
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.ID] = apikit.Deref(r.Name)
	}
	return out, err
}

// Names returns the names of the workspace's leads among ids, by id (a
// lead with no name maps to ""). An id that does not exist is left out.
func (s *Service) Names(ctx context.Context, workspaceID string, ids []string) (map[string]string, error) {
	return s.store.Names(ctx, workspaceID, ids)
}
