package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/matryer/is"
	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// TestMigrateConcurrently starts several "replicas" migrating one fresh
// database at once: every migration is applied exactly once.
func TestMigrateConcurrently(t *testing.T) {
	for _, eng := range dbtest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			is := is.New(t)
			dsn := dbtest.NewDSN(t, eng)
			var wg sync.WaitGroup
			applied := make(chan []string, 4)
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					d, err := db.Open(context.Background(), dsn)
					if err != nil {
						t.Error(err)
						return
					}
					defer d.Close()
					names, err := d.Migrate(context.Background())
					if err != nil {
						t.Error(err)
					}
					applied <- names
				}()
			}
			wg.Wait()
			close(applied)
			total := 0
			for names := range applied {
				total += len(names)
			}
			d, err := db.Open(context.Background(), dsn)
			is.NoErr(err)
			defer d.Close()
			var n int
			is.NoErr(d.NewRaw("SELECT count(*) FROM schema_migrations").Scan(context.Background(), &n))
			is.Equal(total, n) // each migration applied by exactly one replica
			again, err := d.Migrate(context.Background())
			is.NoErr(err)
			is.Equal(len(again), 0)
		})
	}
}

func TestTxAndConflict(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		insert := func(ctx context.Context, id, name string) error {
			_, err := d.IDB(ctx).NewRaw(`INSERT INTO workspaces (id, name, timezone, plan, suspended, created_at, updated_at)
				VALUES (?, ?, 'UTC', 'starter', false, '2026-01-01 00:00:00+00:00', '2026-01-01 00:00:00+00:00')`, id, name).Exec(ctx)
			return err
		}
		is.NoErr(insert(ctx, apikit.NewID(), "one"))
		err := insert(ctx, apikit.NewID(), "one")
		is.True(db.IsUniqueViolation(err))
		is.Equal(apikit.ErrorCode(db.Conflict(err, "taken", "pick another")), apikit.EConflict)

		// A failing function rolls back everything done in its transaction,
		// including nested InTx calls, which join the outer one.
		boom := apikit.Invalid("boom", "")
		err = d.InTx(ctx, func(ctx context.Context) error {
			if err := insert(ctx, apikit.NewID(), "two"); err != nil {
				return err
			}
			return d.InTx(ctx, func(ctx context.Context) error {
				if err := insert(ctx, apikit.NewID(), "three"); err != nil {
					return err
				}
				return boom
			})
		})
		is.Equal(err, error(boom))
		var n int
		is.NoErr(d.NewRaw("SELECT count(*) FROM workspaces").Scan(ctx, &n))
		is.Equal(n, 1)
	})
}

// TestPreparedStatements runs the prepared statements of hot paths inside
// and outside a transaction: a rolled-back write is gone, a committed one
// stays, and the ? placeholders work on both engines.
func TestPreparedStatements(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		probeTable(t, d, "prepared_probe")
		const upsert = "INSERT INTO prepared_probe (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = prepared_probe.v + excluded.v"
		const exists = "SELECT 1 FROM prepared_probe WHERE k = ? AND v >= ?"
		is.NoErr(d.ExecPrepared(ctx, upsert, "a", 1))
		is.NoErr(d.InTx(ctx, func(ctx context.Context) error { return d.ExecPrepared(ctx, upsert, "a", 2) }))
		_ = d.InTx(ctx, func(ctx context.Context) error {
			is.NoErr(d.ExecPrepared(ctx, upsert, "a", 100))
			found, err := d.ExistsPrepared(ctx, exists, "a", 103) // the transaction sees its own write
			is.NoErr(err)
			is.True(found)
			return apikit.Invalid("roll back", "")
		})
		found, err := d.ExistsPrepared(ctx, exists, "a", 3)
		is.NoErr(err)
		is.True(found)
		found, err = d.ExistsPrepared(ctx, exists, "a", 4) // 100 was rolled back
		is.NoErr(err)
		is.True(!found)
	})
}

// TestSelectList reads rows by a list of keys through InQuery: the
// values before the list come first, a list longer than MaxPreparedList is
// read in parts, an empty list reads nothing, each length's text is built
// once, and First turns no row into sql.ErrNoRows.
func TestSelectList(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		probeTable(t, d, "list_probe")
		keys := make([]string, db.MaxPreparedList+30)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%03d", i)
			is.NoErr(d.ExecPrepared(ctx, "INSERT INTO list_probe (k, v) VALUES (?, ?)", keys[i], i%2))
		}
		type row struct {
			K string `bun:"k"`
			V int    `bun:"v"`
		}
		built := map[string]int{}
		q := db.NewInQuery(func(marks string) string {
			built[marks]++
			return "SELECT k, v FROM list_probe WHERE v = ? AND k IN (" + marks + ")"
		})
		odd, err := db.SelectList[row](ctx, d, q, []any{1}, keys)
		is.NoErr(err)
		is.Equal(len(odd), len(keys)/2) // both parts, the odd ones only
		for _, r := range odd {
			is.Equal(r.V, 1)
		}
		_, err = db.SelectList[row](ctx, d, q, []any{1}, keys) // the same lengths again
		is.NoErr(err)
		is.Equal(len(built), 2) // MaxPreparedList and 30, each built once
		for _, n := range built {
			is.Equal(n, 1)
		}
		none, err := db.SelectList[row](ctx, d, q, []any{1}, []string{})
		is.NoErr(err)
		is.Equal(len(none), 0)
		first, err := db.First(db.SelectList[row](ctx, d, q, []any{0}, []string{"k000", "k001"}))
		is.NoErr(err)
		is.Equal(first.K, "k000")
		_, err = db.First(db.SelectList[row](ctx, d, q, []any{0}, []string{"k001"}))
		is.True(errors.Is(err, sql.ErrNoRows))
	})
}

// TestNoFlush: InTxNoFlush and NoFlush commit without waiting for the disk
// on Postgres (and are plain transactions on SQLite); prepared statements
// and the transaction's rollback work there as in InTx, and a transaction
// ctx already carries is joined, not changed.
func TestNoFlush(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		probeTable(t, d, "noflush_probe")
		const upsert = "INSERT INTO noflush_probe (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = noflush_probe.v + excluded.v"
		syncCommit := func(ctx context.Context) (v string) {
			is.NoErr(d.IDB(ctx).NewRaw("SHOW synchronous_commit").Scan(ctx, &v))
			return v
		}
		is.NoErr(d.InTxNoFlush(ctx, func(ctx context.Context) error {
			if d.Engine == db.Postgres {
				is.Equal(syncCommit(ctx), "off")
			}
			return d.ExecPrepared(ctx, upsert, "a", 1)
		}))
		_ = d.InTxNoFlush(ctx, func(ctx context.Context) error {
			is.NoErr(d.ExecPrepared(ctx, upsert, "a", 100))
			return apikit.Invalid("roll back", "")
		})
		is.NoErr(d.InTx(ctx, func(ctx context.Context) error {
			return d.InTxNoFlush(ctx, func(ctx context.Context) error {
				if d.Engine == db.Postgres {
					is.Equal(syncCommit(ctx), "on") // joined the caller's transaction
				}
				return d.ExecPrepared(ctx, upsert, "a", 2)
			})
		}))
		_, err := d.NoFlush(ctx).NewRaw(upsert, "a", 4).Exec(ctx)
		is.NoErr(err)
		var v int
		is.NoErr(d.NewSelect().Table("noflush_probe").Column("v").Where("k = 'a'").Scan(ctx, &v))
		is.Equal(v, 7)
		if d.Engine == db.Postgres {
			is.Equal(syncCommit(ctx), "on") // the main pool waits for the disk
		}
	})
}

// BeforeCommit runs a hook once per key, last in the transaction and
// inside it: a failing hook rolls the transaction back, and outside a
// transaction nothing is registered.
func TestBeforeCommit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		probeTable(t, d, "commit_probe")
		count := func() (n int) {
			is.NoErr(d.NewRaw("SELECT coalesce(sum(v), 0) FROM commit_probe").Scan(ctx, &n))
			return n
		}
		is.True(!db.BeforeCommit(ctx, "x", func(context.Context) error { return nil }))

		for _, inTx := range []func(context.Context, func(context.Context) error) error{d.InTx, d.InTxNoFlush} {
			var order []string
			runs := 0
			err := inTx(ctx, func(ctx context.Context) error {
				for range 3 {
					is.True(db.BeforeCommit(ctx, "probe", func(ctx context.Context) error {
						runs++
						order = append(order, "hook")
						_, err := d.IDB(ctx).ExecContext(ctx, "INSERT INTO commit_probe (k, v) VALUES (?, 1)", apikit.NewID())
						return err
					}))
				}
				order = append(order, "body")
				return nil
			})
			is.NoErr(err)
			is.Equal(runs, 1)
			is.Equal(order, []string{"body", "hook"})
		}
		is.Equal(count(), 2)

		// A hook's error rolls back the body's writes too.
		boom := apikit.Invalid("boom", "")
		err := d.InTx(ctx, func(ctx context.Context) error {
			_, err := d.IDB(ctx).ExecContext(ctx, "INSERT INTO commit_probe (k, v) VALUES (?, 5)", apikit.NewID())
			db.BeforeCommit(ctx, "fails", func(context.Context) error { return boom })
			return err
		})
		is.True(errors.Is(err, boom))
		is.Equal(count(), 2)

		// Hooks run in the order of their keys, whatever the order they
		// were asked for in, so that transactions lock their rows alike.
		var order []string
		is.NoErr(d.InTx(ctx, func(ctx context.Context) error {
			for _, k := range []string{"reports", "enrollments", "webhooks", "a"} {
				db.BeforeCommit(ctx, k, func(context.Context) error {
					order = append(order, k)
					return nil
				})
			}
			return nil
		}))
		is.Equal(order, []string{"a", "enrollments", "reports", "webhooks"})
	})
}

// TestLater queues rows in a transaction and finds them written together,
// once, before the other hooks and before the commit; a rollback writes
// none, and outside a transaction nothing is queued.
func TestLater(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		probeTable(t, d, "later_probe")
		count := func() (n int) {
			is.NoErr(d.NewRaw("SELECT count(*) FROM later_probe").Scan(ctx, &n))
			return n
		}
		var flushes [][]string
		var order []string
		flush := func(ctx context.Context, ks []string) error {
			flushes = append(flushes, ks)
			order = append(order, "later")
			for _, k := range ks {
				if _, err := d.IDB(ctx).ExecContext(ctx, "INSERT INTO later_probe (k, v) VALUES (?, 1)", k); err != nil {
					return err
				}
			}
			return nil
		}
		is.True(!db.Later(ctx, "probe", "outside", flush))
		is.NoErr(d.InTx(ctx, func(ctx context.Context) error {
			db.BeforeCommit(ctx, "counters", func(ctx context.Context) error {
				order = append(order, "counters")
				return nil
			})
			for _, k := range []string{"a", "b", "c"} {
				is.True(db.Later(ctx, "probe", k, flush))
			}
			is.Equal(count(), 0) // not written before the commit
			return nil
		}))
		is.Equal(flushes, [][]string{{"a", "b", "c"}})
		is.Equal(order, []string{"later", "counters"})
		is.Equal(count(), 3)

		// A transaction that fails writes nothing it queued.
		boom := apikit.Invalid("boom", "")
		err := d.InTx(ctx, func(ctx context.Context) error {
			db.Later(ctx, "probe", "d", flush)
			return boom
		})
		is.True(errors.Is(err, boom))
		is.Equal(count(), 3)
		is.Equal(len(flushes), 1)

		// A queued row that cannot be written fails the transaction.
		err = d.InTx(ctx, func(ctx context.Context) error {
			db.Later(ctx, "probe", "e", flush)
			db.Later(ctx, "probe", "a", flush) // taken
			return nil
		})
		is.True(err != nil)
		is.Equal(count(), 3)
	})
}

func TestIsRetryable(t *testing.T) {
	is := is.New(t)
	is.True(db.IsRetryable(fmt.Errorf("update: %w", &pgconn.PgError{Code: "40P01"})))
	is.True(db.IsRetryable(&pgconn.PgError{Code: "40001"}))
	is.True(!db.IsRetryable(&pgconn.PgError{Code: "23505"}))
	is.True(!db.IsRetryable(errors.New("deadlock")))
}

// TestPrepareWithEveryConnectionInATransaction holds every connection of
// the no-flush pool in a transaction and has each prepare a statement no
// connection has seen: none may wait for a free connection of the pool.
func TestPrepareWithEveryConnectionInATransaction(t *testing.T) {
	if len(dbtest.Engines()) < 2 {
		t.Skip(dbtest.EnvPostgres + " is not set")
	}
	is := is.New(t)
	d := dbtest.Open(t, db.Postgres)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	probeTable(t, d, "prepare_probe")
	const conns = 10 // the no-flush pool's size
	var inTx, wg sync.WaitGroup
	inTx.Add(conns)
	for i := range conns {
		wg.Go(func() {
			err := d.InTxNoFlush(ctx, func(ctx context.Context) error {
				if err := d.ExecPrepared(ctx, "SELECT 1"); err != nil { // takes the connection
					return err
				}
				inTx.Done()
				inTx.Wait()
				return d.ExecPrepared(ctx, "INSERT INTO prepare_probe (k, v) VALUES (?, ?)", fmt.Sprint(i), i)
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var n int
	is.NoErr(d.NewRaw("SELECT count(*) FROM prepare_probe").Scan(ctx, &n))
	is.Equal(n, conns)
}

// probeTable creates a table of keys and counts for a test.
func probeTable(t *testing.T, d *db.DB, name string) {
	t.Helper()
	if _, err := d.ExecContext(context.Background(), "CREATE TABLE "+name+" (k TEXT PRIMARY KEY, v BIGINT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
}

// TestNow freezes the time once per transaction: every call in one reads
// the clock's first reading, a nested InTx joins it, and the next
// transaction reads the clock again.
func TestNow(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	d := dbtest.Open(t, dbtest.Engines()[0])
	ctx := context.Background()
	start := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	clock := apikit.NewFakeClock(start)
	is.Equal(db.Now(ctx, clock), start) // outside a transaction: the clock
	err := d.InTx(ctx, func(ctx context.Context) error {
		first := db.Now(ctx, clock)
		clock.Advance(time.Second)
		is.Equal(db.Now(ctx, clock), first)
		return d.InTx(ctx, func(ctx context.Context) error {
			clock.Advance(time.Second)
			is.Equal(db.Now(ctx, clock), first) // joined: the same transaction
			return nil
		})
	})
	is.NoErr(err)
	err = d.InTx(ctx, func(ctx context.Context) error {
		is.Equal(db.Now(ctx, clock), start.Add(2*time.Second))
		return nil
	})
	is.NoErr(err)
}

// Every Postgres connection of both pools reads ahead at least
// db.PrefetchBlocks heap blocks in a bitmap heap scan, and keeps a higher
// value set elsewhere (here by the URL).
func TestPostgresPrefetch(t *testing.T) {
	if os.Getenv(dbtest.EnvPostgres) == "" {
		t.Skip("no Postgres server: set " + dbtest.EnvPostgres)
	}
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	dsn := dbtest.NewDSN(t, db.Postgres)
	for _, c := range []struct {
		query string
		want  int
	}{{"", db.PrefetchBlocks}, {"effective_io_concurrency=300", 300}} {
		u := dsn
		if c.query != "" {
			u += map[bool]string{true: "&", false: "?"}[strings.Contains(u, "?")] + c.query
		}
		d, err := db.Open(ctx, u)
		is.NoErr(err)
		for _, pool := range []bun.IDB{d.IDB(ctx), d.NoFlush(ctx)} {
			var v int
			is.NoErr(pool.NewRaw("SELECT current_setting('effective_io_concurrency')::int").Scan(ctx, &v))
			is.Equal(v, c.want) // the URL's value, else PrefetchBlocks
		}
		is.NoErr(d.Close())
	}
}
