package senders

import (
	"context"

	"github.com/leadline/leadline/internal/db"
)

// Ref is what other areas show of a sender: its id, name, client and
// channel.
type Ref struct {
	ID       string  `bun:"id"`
	Name     string  `bun:"name"`
	ClientID *string `bun:"client_id"`
	Channel  Channel `bun:"channel"`
}

// Refs returns the workspace's senders among ids (all of them when ids is
// nil), by name and id.
func (b *BunStore) Refs(ctx context.Context, workspaceID string, ids []string) ([]Ref, error) {
	return db.Refs[Ref](ctx, b.db.IDB(ctx), "senders", workspaceID, ids, "id", "name", "client_id", "channel")
}

// Refs returns the id, name, client and channel of the workspace's senders
// among ids (all of them when ids is nil), by name and id. An id that does
// not exist is left out.
func (svc *Service) Refs(ctx context.Context, workspaceID string, ids []string) ([]Ref, error) {
	return svc.store.Refs(ctx, workspaceID, ids)
}

// Usage returns the sender's counters from fromDay to toDay (its local
// days, both included); a day with no use has no row.
func (svc *Service) Usage(ctx context.Context, senderID, fromDay, toDay string) ([]Usage, error) {
	return svc.store.Usage(ctx, senderID, fromDay, toDay)
}
