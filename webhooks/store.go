package webhooks

import (
	"context"
	"database/sql"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
)

// Store is the persistence the webhooks service and its worker need: the
// webhooks and their deliveries (the outbox). BunStore serves it on SQLite
// and Postgres; every method joins the transaction in ctx.
type Store interface {
	// Insert adds w.
	Insert(ctx context.Context, w *Webhook) error
	// Live returns the workspace's webhook with id unless it was deleted.
	// Returns sql.ErrNoRows (db.IsNoRows) when the workspace has no such
	// webhook, or it was deleted.
	Live(ctx context.Context, workspaceID, id string) (*Webhook, error)
	// ByIDs returns the webhooks among ids, deleted ones too, of any
	// workspace; unknown ids are left out.
	ByIDs(ctx context.Context, ids []string) ([]Webhook, error)
	// Update writes w's columns cols and its updated_at.
	Update(ctx context.Context, w *Webhook, cols ...string) error
	// List returns one page of the workspace's webhooks that were not
	// deleted, oldest first, and their total.
	List(ctx context.Context, workspaceID string, limit, offset int) ([]Webhook, int, error)
	// Subscribed returns the workspace's enabled webhooks that were not
	// deleted; none when it has none.
	Subscribed(ctx context.Context, workspaceID string) ([]Webhook, error)
	// CountFailure adds one to the webhook's failures in a row;
	// ResetFailures sets them back to 0 (and its updated_at to now) when
	// they are not.
	CountFailure(ctx context.Context, webhookID string, now time.Time) error
	ResetFailures(ctx context.Context, webhookID string, now time.Time) error
	// SwitchOff switches the webhook off at now if it is on and has failed
	// at least after times in a row, and reports whether it did.
	SwitchOff(ctx context.Context, webhookID string, after int, now time.Time) (bool, error)

	// InsertDeliveries adds ds, in statements of at most 500 rows.
	InsertDeliveries(ctx context.Context, ds []Delivery) error
	// Delivery returns the workspace's delivery with id.
	// Returns sql.ErrNoRows (db.IsNoRows) when the workspace has none.
	Delivery(ctx context.Context, workspaceID, id string) (*Delivery, error)
	// Deliveries returns up to limit of the workspace's deliveries (of one
	// webhook, of one status, when f says so), the latest updated first.
	Deliveries(ctx context.Context, workspaceID string, f DeliveryFilter, limit int) ([]Delivery, error)
	// Claim leases up to limit pending deliveries due at now whose lease
	// (if any) ended before now, until leaseUntil, the earliest due first,
	// and returns them. On Postgres rows another worker is claiming are
	// skipped.
	Claim(ctx context.Context, now, leaseUntil time.Time, limit int) ([]Delivery, error)
	// NextDue returns when the earliest pending delivery is due, and false
	// when none is pending.
	NextDue(ctx context.Context) (time.Time, bool, error)
	// Succeeded ends the deliveries among ids as succeeded at now, the
	// endpoint having answered code: one more attempt, no lease, no next
	// attempt, no error.
	Succeeded(ctx context.Context, ids []string, code int, now time.Time) error
	// SaveAttempt writes a delivery's attempt: its status, attempts, next
	// attempt, lease, last status code, last error and updated_at.
	SaveAttempt(ctx context.Context, d *Delivery) error
	// DropPending fails the webhook's pending deliveries at now, with why.
	DropPending(ctx context.Context, webhookID, why string, now time.Time) error
	// Purge removes the deliveries created before before that are no
	// longer pending.
	Purge(ctx context.Context, before time.Time) error
	// Pending counts the pending deliveries of every workspace.
	Pending(ctx context.Context) (int, error)
}

var _ Store = (*BunStore)(nil)

// BunStore is the Store on bun, for both engines.
type BunStore struct{ db *db.DB }

// NewBunStore returns the store on d.
func NewBunStore(d *db.DB) *BunStore { return &BunStore{db: d} }

func (b *BunStore) idb(ctx context.Context) bun.IDB { return b.db.IDB(ctx) }

// Insert adds w.
func (b *BunStore) Insert(ctx context.Context, w *Webhook) error {
	_, err := b.idb(ctx).NewInsert().Model(w).Exec(ctx)
	return err
}

// Live returns the workspace's webhook with id unless it was deleted.
func (b *BunStore) Live(ctx context.Context, workspaceID, id string) (*Webhook, error) {
	w := new(Webhook)
	err := b.idb(ctx).NewSelect().Model(w).Where("wh.workspace_id = ? AND wh.id = ? AND wh.deleted_at IS NULL", workspaceID, id).Scan(ctx)
	return w, err
}

// ByIDs returns the webhooks among ids, deleted ones too.
func (b *BunStore) ByIDs(ctx context.Context, ids []string) ([]Webhook, error) {
	var out []Webhook
	if len(ids) == 0 {
		return out, nil
	}
	err := b.idb(ctx).NewSelect().Model(&out).Where("wh.id IN (?)", bun.In(ids)).Scan(ctx)
	return out, err
}

// Update writes w's columns cols and its updated_at.
func (b *BunStore) Update(ctx context.Context, w *Webhook, cols ...string) error {
	_, err := b.idb(ctx).NewUpdate().Model(w).Column(append(cols, "updated_at")...).WherePK().Exec(ctx)
	return err
}

// List returns one page of the workspace's webhooks, oldest first.
func (b *BunStore) List(ctx context.Context, workspaceID string, limit, offset int) ([]Webhook, int, error) {
	// Webhooks belong to the workspace, not to a client: no scope.
	return db.List[Webhook](b.idb(ctx), "wh", workspaceID, nil).Where("wh.deleted_at IS NULL").
		Page(ctx, "wh.created_at, wh.id", limit, offset)
}

// Subscribed returns the workspace's enabled webhooks.
func (b *BunStore) Subscribed(ctx context.Context, workspaceID string) ([]Webhook, error) {
	// Most workspaces have no webhook: every write asks, so the question
	// is a statement prepared once per connection.
	var hooks []Webhook
	exists, err := b.db.ExistsPrepared(ctx, "SELECT 1 FROM webhooks WHERE workspace_id = ? AND deleted_at IS NULL AND enabled LIMIT 1", workspaceID)
	if err != nil || !exists {
		return nil, err
	}
	err = b.idb(ctx).NewSelect().Model(&hooks).Where("wh.workspace_id = ? AND wh.deleted_at IS NULL AND wh.enabled", workspaceID).Scan(ctx)
	return hooks, err
}

// CountFailure adds one to the webhook's failures in a row.
func (b *BunStore) CountFailure(ctx context.Context, webhookID string, now time.Time) error {
	_, err := b.idb(ctx).NewUpdate().Model((*Webhook)(nil)).Set("consecutive_failures = consecutive_failures + 1").Set("updated_at = ?", now).
		Where("id = ?", webhookID).Exec(ctx)
	return err
}

// ResetFailures sets the webhook's failures in a row back to 0.
func (b *BunStore) ResetFailures(ctx context.Context, webhookID string, now time.Time) error {
	_, err := b.idb(ctx).NewUpdate().Model((*Webhook)(nil)).Set("consecutive_failures = 0").Set("updated_at = ?", now).
		Where("id = ? AND consecutive_failures <> 0", webhookID).Exec(ctx)
	return err
}

// SwitchOff switches the webhook off after as many failures in a row.
func (b *BunStore) SwitchOff(ctx context.Context, webhookID string, after int, now time.Time) (bool, error) {
	return db.Changed(b.idb(ctx).NewUpdate().Model((*Webhook)(nil)).Set("enabled = ?", false).Set("disabled_at = ?", now).Set("updated_at = ?", now).
		Where("id = ? AND enabled AND consecutive_failures >= ?", webhookID, after).Exec(ctx))
}

// InsertDeliveries adds ds, 500 rows a statement.
func (b *BunStore) InsertDeliveries(ctx context.Context, ds []Delivery) error {
	for start := 0; start < len(ds); start += 500 {
		chunk := ds[start:min(start+500, len(ds))]
		if _, err := b.idb(ctx).NewInsert().Model(&chunk).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Delivery returns the workspace's delivery with id.
func (b *BunStore) Delivery(ctx context.Context, workspaceID, id string) (*Delivery, error) {
	d := new(Delivery)
	err := b.idb(ctx).NewSelect().Model(d).Where("dl.workspace_id = ? AND dl.id = ?", workspaceID, id).Scan(ctx)
	return d, err
}

// Deliveries returns the workspace's latest deliveries.
func (b *BunStore) Deliveries(ctx context.Context, workspaceID string, f DeliveryFilter, limit int) ([]Delivery, error) {
	out := []Delivery{}
	q := b.idb(ctx).NewSelect().Model(&out)
	if f.WebhookID != "" {
		q = q.Where("dl.webhook_id = ? AND dl.workspace_id = ?", f.WebhookID, workspaceID)
	} else {
		q = q.Where("dl.workspace_id = ?", workspaceID)
	}
	if f.Status != "" {
		q = q.Where("dl.status = ?", f.Status)
	}
	err := q.OrderExpr("dl.updated_at DESC, dl.id DESC").Limit(int64(limit)).Scan(ctx)
	return out, err
}

// Claim leases up to limit due deliveries, in the transaction ctx carries
// or its own.
func (b *BunStore) Claim(ctx context.Context, now, leaseUntil time.Time, limit int) ([]Delivery, error) {
	var out []Delivery
	err := b.db.InTx(ctx, func(ctx context.Context) error {
		idb := b.idb(ctx)
		sub := idb.NewSelect().Model((*Delivery)(nil)).Column("id").
			Where("status = ? AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)", Pending, now, now).
			OrderExpr("next_attempt_at").Limit(int64(limit))
		if b.db.Engine == db.Postgres {
			sub = sub.For("UPDATE SKIP LOCKED")
		}
		var ids []string
		if err := sub.Scan(ctx, &ids); err != nil || len(ids) == 0 {
			return err
		}
		if _, err := idb.NewUpdate().Model((*Delivery)(nil)).Set("lease_until = ?", leaseUntil).Where("id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
			return err
		}
		return idb.NewSelect().Model(&out).Where("dl.id IN (?)", bun.In(ids)).OrderExpr("dl.next_attempt_at, dl.id").Scan(ctx)
	})
	return out, err
}

// NextDue returns when the earliest pending delivery is due.
func (b *BunStore) NextDue(ctx context.Context) (time.Time, bool, error) {
	var next []time.Time
	err := b.idb(ctx).NewSelect().Model((*Delivery)(nil)).Column("next_attempt_at").Where("status = ? AND next_attempt_at IS NOT NULL", Pending).
		OrderExpr("next_attempt_at").Limit(1).Scan(ctx, &next)
	if err != nil || len(next) == 0 {
		return time.Time{}, false, err
	}
	return next[0], true, nil
}

// Succeeded ends the deliveries among ids as succeeded.
func (b *BunStore) Succeeded(ctx context.Context, ids []string, code int, now time.Time) error {
	_, err := b.idb(ctx).NewUpdate().Model((*Delivery)(nil)).Set("status = ?", Succeeded).Set("attempts = attempts + 1").
		Set("next_attempt_at = NULL").Set("lease_until = NULL").Set("last_status_code = ?", code).Set("last_error = NULL").
		Set("updated_at = ?", now).Where("id IN (?)", bun.In(ids)).Exec(ctx)
	return err
}

// SaveAttempt writes a delivery's attempt.
func (b *BunStore) SaveAttempt(ctx context.Context, d *Delivery) error {
	_, err := b.idb(ctx).NewUpdate().Model(d).Column("status", "attempts", "next_attempt_at", "lease_until", "last_status_code", "last_error", "updated_at").
		WherePK().Exec(ctx)
	return err
}

// DropPending fails the webhook's pending deliveries.
func (b *BunStore) DropPending(ctx context.Context, webhookID, why string, now time.Time) error {
	_, err := b.idb(ctx).NewUpdate().Model((*Delivery)(nil)).Set("status = ?", Failed).Set("last_error = ?", why).
		Set("next_attempt_at = NULL").Set("updated_at = ?", now).Where("webhook_id = ? AND status = ?", webhookID, Pending).Exec(ctx)
	return err
}

// Purge removes old deliveries that are no longer pending.
func (b *BunStore) Purge(ctx context.Context, before time.Time) error {
	_, err := b.idb(ctx).NewDelete().Model((*Delivery)(nil)).Where("created_at < ? AND status <> ?", before, Pending).Exec(ctx)
	return err
}

// Pending counts the pending deliveries.
func (b *BunStore) Pending(ctx context.Context) (int, error) {
	n, err := b.idb(ctx).NewSelect().Model((*Delivery)(nil)).Where("status = ?", Pending).Count(ctx)
	return int(n), err
}

// one is the only webhook of ws, or sql.ErrNoRows.
func one(ws []Webhook, err error) (*Webhook, error) {
	if err != nil {
		return nil, err
	}
	if len(ws) == 0 {
		return nil, sql.ErrNoRows
	}
	return &ws[0], nil
}
