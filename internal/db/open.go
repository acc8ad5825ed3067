package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" driver
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DefaultDSN is the embedded default: a SQLite file in the working directory.
const DefaultDSN = "./leadline.db"

// IsPostgres reports whether dsn names a Postgres database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens dsn: a postgres:// URL opens Postgres, anything else is a
// SQLite file path or file: URL. It checks the connection before returning.
func Open(ctx context.Context, dsn string) (*DB, error) {
	if dsn == "" {
		dsn = DefaultDSN
	}
	if scheme, _, ok := strings.Cut(dsn, "://"); ok && !IsPostgres(dsn) && !strings.HasPrefix(dsn, "file:") {
		return nil, fmt.Errorf("unsupported database %q: leadline runs on SQLite (a file path or file: URL) or PostgreSQL (postgres://…)", scheme+"://…")
	}
	var d *DB
	if IsPostgres(dsn) {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		// bun writes each statement's values into its text, so that no
		// two statements share one: pgx's default of preparing and caching
		// every new text would cost each statement a second round trip and
		// a plan of its own. The simple protocol sends it once.
		// ExecPrepared's statements are prepared explicitly and still run
		// as prepared ones.
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		sqldb := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(prefetch))
		sqldb.SetMaxOpenConns(20)
		sqldb.SetMaxIdleConns(20)
		d = &DB{DB: bun.NewDB(sqldb, pgdialect.New()), Engine: Postgres}
		nfCfg := cfg.Copy()
		nfCfg.RuntimeParams["synchronous_commit"] = "off"
		nf := stdlib.OpenDB(*nfCfg, stdlib.OptionAfterConnect(prefetch))
		nf.SetMaxOpenConns(10)
		nf.SetMaxIdleConns(10)
		d.noFlush = bun.NewDB(nf, pgdialect.New())
	} else {
		sqldb, err := sql.Open("sqlite", sqliteDSN(dsn))
		if err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		// WAL lets readers run beside the single writer; more connections
		// than that only queue on the write lock.
		sqldb.SetMaxOpenConns(8)
		sqldb.SetMaxIdleConns(8)
		d = &DB{DB: bun.NewDB(sqldb, sqlitedialect.New()), Engine: SQLite, Path: sqlitePath(dsn)}
	}
	if err := d.ping(ctx); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("connect to %s database: %w", d.Engine, err)
	}
	return d, nil
}

// PrefetchBlocks is the least effective_io_concurrency a leadline
// connection to Postgres reads with.
const PrefetchBlocks = 64

// prefetch raises the connection's effective_io_concurrency to
// PrefetchBlocks, never lowering a higher value the server, the role or
// the URL set. It is how many heap blocks a bitmap heap scan asks the
// kernel to read ahead: a text search visits one block per match (about
// 3,300 for a common company word at 1M leads), and Postgres 15's default
// of 1 reads them one at a time when they are not cached (p95 61 ms
// against 37 ms with 64, after a restart with an empty file cache:
// docs/performance/2026-11-27-console-pages.md). A server whose platform cannot prefetch refuses
// any value but 0; the connection then keeps the server's.
func prefetch(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, fmt.Sprintf(`SELECT set_config('effective_io_concurrency', '%d', false)
		WHERE current_setting('effective_io_concurrency')::int < %d`, PrefetchBlocks, PrefetchBlocks))
	if err != nil && ctx.Err() != nil {
		return err
	}
	return nil
}

// ping checks the connection. A new SQLite file that another process or
// connection is switching to WAL at the same moment answers SQLITE_BUSY
// without waiting for the busy timeout; the first connection is then
// retried for up to about five seconds.
func (d *DB) ping(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := d.PingContext(ctx)
		var sqErr *sqlite.Error
		if err == nil || d.Engine != SQLite || attempt >= 100 || !errors.As(err, &sqErr) || sqErr.Code()&0xff != sqlite3.SQLITE_BUSY {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sqliteDSN turns a path or file: URL into a modernc DSN with the pragmas
// leadline relies on. Immediate transactions take the write lock at BEGIN,
// so concurrent writers wait (busy_timeout) instead of failing with
// SQLITE_BUSY half-way through.
func sqliteDSN(dsn string) string {
	path, query, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	vals, _ := url.ParseQuery(query)
	// Each connection gets a 32 MiB page cache (SQLite's default is 2 MiB)
	// and reads the file through a memory map of up to 2 GiB (the largest
	// SQLite allows by default): a page it maps is read without a system
	// call, and the mapped pages are the system's file cache, shared by
	// every connection. Sorts and temporary indexes stay in memory.
	// docs/performance/2026-11-22-leads-api-hardening.md and
	// docs/performance/2026-11-27-console-pages.md have the measurements.
	// The log is copied back into the file (a checkpoint, with its fsync)
	// once it holds 10,000 pages (about 40 MiB) rather than SQLite's 1,000:
	// a runner rewrites the same enrollment, counter and index pages
	// commit after commit, and a page written ten times between two
	// checkpoints is copied once (docs/performance/2026-11-29-prepared.md).
	// busy_timeout comes first: switching to WAL takes a lock, and a
	// process that opens the file while another does must wait for it.
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)",
		"cache_size(-32768)", "mmap_size(2147418112)", "temp_store(MEMORY)", "wal_autocheckpoint(10000)"} {
		vals.Add("_pragma", p)
	}
	if vals.Get("_txlock") == "" {
		vals.Set("_txlock", "immediate")
	}
	if !strings.HasPrefix(path, "/") && path != ":memory:" {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
	}
	return "file:" + path + "?" + vals.Encode()
}

// SQLiteFile returns the file path a SQLite dsn names, and false for a
// Postgres dsn or an in-memory database.
func SQLiteFile(dsn string) (string, bool) {
	if dsn == "" {
		dsn = DefaultDSN
	}
	if IsPostgres(dsn) || strings.Contains(dsn, ":memory:") || strings.Contains(dsn, "mode=memory") {
		return "", false
	}
	return sqlitePath(dsn), true
}

// sqlitePath is the absolute file path a SQLite dsn names.
func sqlitePath(dsn string) string {
	path, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	if abs, err := filepath.Abs(path); err == nil && path != ":memory:" {
		return abs
	}
	return path
}
