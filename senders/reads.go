package senders

import (
	"context"
	"time"

	"github.com/leadline/leadline/internal/db"
)

// What other areas read of the senders' tables goes through the service
// (Refs, Costs, Usage, LeadInvitations) or, inside a statement that must stay
// one for its plan, through a read view this file names
// (JoinAcceptedInvitations): the senders own the shape of their tables.

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

// Cost is what the cost reports read of a sender: its id, client, monthly
// cost and when it was added.
type Cost struct {
	ID          string    `bun:"id"`
	ClientID    *string   `bun:"client_id"`
	MonthlyCost float64   `bun:"monthly_cost"`
	CreatedAt   time.Time `bun:"created_at"`
}

// Costs returns the cost of every sender of the workspace, by name and
// id: four columns, none of the settings a Sender decodes.
func (b *BunStore) Costs(ctx context.Context, workspaceID string) ([]Cost, error) {
	return db.Refs[Cost](ctx, b.db.IDB(ctx), "senders", workspaceID, nil, "id", "client_id", "monthly_cost", "created_at")
}

// Costs returns the id, client, monthly cost and creation time of every
// sender of the workspace, by name and id.
func (svc *Service) Costs(ctx context.Context, workspaceID string) ([]Cost, error) {
	return svc.store.Costs(ctx, workspaceID)
}

// Usage returns the sender's counters from fromDay to toDay (its local
// days, both included); a day with no use has no row.
func (svc *Service) Usage(ctx context.Context, senderID, fromDay, toDay string) ([]Usage, error) {
	return svc.store.Usage(ctx, senderID, fromDay, toDay)
}

// LeadInvitations returns the sender, acceptance and withdrawal of each
// invitation sent to the lead.
func (b *BunStore) LeadInvitations(ctx context.Context, leadID string) ([]Invitation, error) {
	var out []Invitation
	err := b.db.IDB(ctx).NewSelect().Table("invitations").Column("sender_id", "accepted_at", "withdrawn_at").
		Where("lead_id = ?", leadID).Scan(ctx, &out)
	return out, err
}

// LeadInvitations returns the invitations sent to the lead, with their
// sender, acceptance and withdrawal set (no other field), in no order.
func (svc *Service) LeadInvitations(ctx context.Context, leadID string) ([]Invitation, error) {
	return svc.store.LeadInvitations(ctx, leadID)
}

// JoinAcceptedInvitations is a read view for another area's statement: the
// JOIN clause that keeps the rows whose sender (the column senderCol) has
// an invitation the lead (leadCol) accepted, through the invitations'
// (sender_id, lead_id) index. The rows joined are named alias and have
// the columns sender_id, lead_id and accepted_at.
func JoinAcceptedInvitations(alias, senderCol, leadCol string) string {
	return "JOIN invitations AS " + alias + " ON " + alias + ".sender_id = " + senderCol + " AND " + alias + ".lead_id = " + leadCol +
		" AND " + alias + ".accepted_at IS NOT NULL"
}
