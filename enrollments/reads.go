package enrollments

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// ContactedAt returns when each of the enrollments among ids first
// contacted its lead, through the primary key.
func (b *BunStore) ContactedAt(ctx context.Context, ids []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID          string    `bun:"id"`
		ContactedAt time.Time `bun:"contacted_at"`
	}
	err := b.idb(ctx).NewSelect().Table("enrollments").Column("id", "contacted_at").
		Where("id IN (?) AND contacted_at IS NOT NULL", bun.In(slices.Compact(slices.Sorted(slices.Values(ids))))).Scan(ctx, &rows)
	for _, r := range rows {
		out[r.ID] = r.ContactedAt
	}
	return out, err
}

// ContactedAt returns when each of the enrollments among ids first
// contacted its lead; one that has not, or that does not exist, is left
// out. It joins the transaction in ctx.
func (svc *Service) ContactedAt(ctx context.Context, ids []string) (map[string]time.Time, error) {
	return svc.store.ContactedAt(ctx, ids)
}

// Waiting returns how many of the sequence's active enrollments wait for
// each of reasons; a reason none waits for is left out.
func (b *BunStore) Waiting(ctx context.Context, sequenceID string, reasons []string) (map[string]int, error) {
	var rows []struct {
		WaitingFor string `bun:"waiting_for"`
		N          int    `bun:"n"`
	}
	err := b.idb(ctx).NewSelect().Model((*Enrollment)(nil)).Column("waiting_for").ColumnExpr("count(*) AS n").
		Where("e.sequence_id = ? AND e.status = 'active' AND e.waiting_for IN (?)", sequenceID, bun.In(reasons)).
		Group("waiting_for").Scan(ctx, &rows)
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.WaitingFor] = r.N
	}
	return out, err
}
