package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
)

// The state every process on one database must see alike lives in the
// database when the network is shared (Shared): the result of each action
// by key, the inbound events and the meetings booked not yet handed over.
// An API replica's member reply and a worker's sequence step then reach
// one network, and what one hands over no other hands over again. The
// audit (counts, violations, what was performed) stays with the process:
// it judges the runs of one process, as simulate and the tests do.

type actionRow struct {
	bun.BaseModel `bun:"table:sandbox_actions"`
	Key           string `bun:"key,pk"`
	Result        string `bun:"result"`
}

type inboundRow struct {
	bun.BaseModel `bun:"table:sandbox_inbound"`
	ID            int64     `bun:"id,pk,autoincrement"`
	DueAt         time.Time `bun:"due_at"`
	Event         string    `bun:"event"`
}

type bookingRow struct {
	bun.BaseModel `bun:"table:sandbox_bookings"`
	ID            int64     `bun:"id,pk,autoincrement"`
	DueAt         time.Time `bun:"due_at"`
	Booking       string    `bun:"booking"`
}

// shared is the network's state in the database.
type shared struct{ db *db.DB }

// Shared keeps the network's actions, pending inbound events and bookings
// in d, so that every process on d sees one sandbox network. Provider ids
// are then made from the action's key rather than from a count of the
// process's calls, so that two processes never give out the same one.
func (n *Network) Shared(d *db.DB) *Network {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.shared = &shared{db: d}
	return n
}

// hashID is a provider id made from a key, the same in every process.
func hashID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:10])
}

// result returns the result of the action performed under key.
func (s *shared) result(ctx context.Context, key string) (senders.Result, bool, error) {
	var row actionRow
	err := s.db.IDB(ctx).NewSelect().Model(&row).Where("key = ?", key).Scan(ctx)
	if db.IsNoRows(err) {
		return senders.Result{}, false, nil
	}
	if err != nil {
		return senders.Result{}, false, err
	}
	var r senders.Result
	return r, true, json.Unmarshal([]byte(row.Result), &r)
}

// claim records res under key, unless another process performed the key
// first: then it returns that result and false.
func (s *shared) claim(ctx context.Context, key string, res senders.Result) (senders.Result, bool, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return res, false, err
	}
	added, err := db.InsertIfAbsent(ctx, s.db.IDB(ctx), &actionRow{Key: key, Result: string(b)}, "key")
	if err != nil || added {
		return res, added, err
	}
	won, _, err := s.result(ctx, key)
	return won, false, err
}

func (s *shared) queue(ctx context.Context, in senders.Inbound) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = s.db.IDB(ctx).NewInsert().Model(&inboundRow{DueAt: in.At.UTC(), Event: string(b)}).Exec(ctx)
	return err
}

func (s *shared) book(ctx context.Context, bk bookings.Booking) error {
	b, err := json.Marshal(bk)
	if err != nil {
		return err
	}
	_, err = s.db.IDB(ctx).NewInsert().Model(&bookingRow{DueAt: bk.CreatedAt.UTC(), Booking: string(b)}).Exec(ctx)
	return err
}

// take removes and returns, once across processes, the inbound events due
// up to until, in order.
func (s *shared) take(ctx context.Context, until time.Time) ([]senders.Inbound, error) {
	var rows []inboundRow
	return due[senders.Inbound](ctx, s, &rows, until, func(r inboundRow) (time.Time, int64, string) { return r.DueAt, r.ID, r.Event })
}

// bookings removes and returns, once across processes, the meetings
// booked due up to until, in order.
func (s *shared) bookings(ctx context.Context, until time.Time) ([]bookings.Booking, error) {
	var rows []bookingRow
	return due[bookings.Booking](ctx, s, &rows, until, func(r bookingRow) (time.Time, int64, string) { return r.DueAt, r.ID, r.Booking })
}

// due deletes the rows due up to until and returns what they hold, in
// the order they are due: a DELETE … RETURNING hands each row to one
// process only.
func due[T, R any](ctx context.Context, s *shared, rows *[]R, until time.Time, of func(R) (time.Time, int64, string)) ([]T, error) {
	if _, err := s.db.IDB(ctx).NewDelete().Model(rows).Where("due_at <= ?", until.UTC()).Returning("*").Exec(ctx); err != nil {
		return nil, err
	}
	rs := *rows
	sort.Slice(rs, func(i, j int) bool {
		ti, ii, _ := of(rs[i])
		tj, ij, _ := of(rs[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return ii < ij
	})
	out := make([]T, len(rs))
	for i, r := range rs {
		_, _, v := of(r)
		if err := json.Unmarshal([]byte(v), &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// next returns when the next inbound event or booking is due.
func (s *shared) next(ctx context.Context) (time.Time, bool) {
	var next time.Time
	for _, table := range []string{"sandbox_inbound", "sandbox_bookings"} {
		var due []time.Time
		if err := s.db.IDB(ctx).NewSelect().Table(table).Column("due_at").OrderExpr("due_at").Limit(1).Scan(ctx, &due); err != nil || len(due) == 0 {
			continue
		}
		if next.IsZero() || due[0].Before(next) {
			next = due[0]
		}
	}
	return next, !next.IsZero()
}
