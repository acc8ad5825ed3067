package db_test

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// TestRider: a rider is taken once; the statement that carries it runs its
// write and reads its columns beside its own; its Done's error is the
// carrying statement's; a carrying statement that fails writes nothing of
// the rider's; alone, it runs as a statement of its own. Without a rider,
// Carry runs the statement as it is, on both engines.
func TestRider(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		probeTable(t, d, "rider_probe")
		var n int
		is.NoErr(d.Carry(ctx, db.TakeRider(ctx), "? + 1 AS n", []any{41}, &n))
		is.Equal(n, 42)
		if d.Engine != db.Postgres {
			return // riders hold an INSERT in a WITH: Postgres only
		}
		stored := func() int {
			var v int
			is.NoErr(d.NewRaw("SELECT coalesce(sum(v), 0) FROM rider_probe").Scan(ctx, &v))
			return v
		}
		var got int
		var done int
		r := &db.Rider{
			With:   `w AS (INSERT INTO rider_probe (k, v) VALUES (?, 1) ON CONFLICT (k) DO UPDATE SET v = rider_probe.v + 1 RETURNING v)`,
			Select: `(SELECT v FROM w) AS ridden`,
			Args:   []any{"a"},
			Dest:   []any{&got},
			Done:   func(context.Context) error { done++; return nil },
		}
		rctx := db.WithRider(ctx, r)
		taken := db.TakeRider(rctx)
		is.True(taken == r)
		is.True(db.TakeRider(rctx) == nil) // once
		is.NoErr(d.Carry(rctx, taken, "? + 1 AS n", []any{1}, &n))
		is.Equal(got, 1)
		is.Equal(n, 2)
		is.Equal(done, 1)

		// A carrying statement that fails: the rider's write is undone.
		err := d.Carry(ctx, r, "1 / (? - 1) AS n", []any{1}, &n)
		is.True(err != nil)
		is.Equal(done, 1)
		is.Equal(stored(), 1)

		// Done's error stops the work; the count stays.
		stop := errors.New("stop")
		r.Done = func(context.Context) error { return stop }
		is.Equal(d.RunRider(ctx, r), stop)
		is.Equal(got, 2)
		is.Equal(stored(), 2)
	})
}
