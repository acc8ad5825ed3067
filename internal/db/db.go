// Package db opens leadline's database on either engine, applies the
// embedded migrations, carries a transaction in the context and translates
// engine errors into apikit errors.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" driver
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Engine names the database engine behind a DB.
type Engine string

// The two engines.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// DB is an open database with the engine it runs on.
type DB struct {
	*bun.DB
	Engine Engine

	// Path is the absolute path of a SQLite database file ("" on
	// Postgres). State that one process keeps for a file, such as rate
	// counts, is shared by every DB open on the same path.
	Path string

	// writeMu queues this process's SQLite transactions in Go. SQLite has
	// one writer; left to its busy handler, waiting writers poll with
	// sleeps of up to 100 ms, and throughput falls as clients are added.
	writeMu sync.Mutex
	// stmts are the statements ExecPrepared prepared, by query.
	stmts sync.Map

	// noFlush is a second pool on Postgres whose sessions commit without
	// waiting for the WAL to reach the disk (synchronous_commit off):
	// InTxNoFlush and NoFlush run there, with no SET LOCAL round trip in
	// each transaction. noFlushStmts are ExecPrepared's statements on it.
	noFlush      *bun.DB
	noFlushStmts sync.Map

	// preparedHook sees every statement ExecPrepared, ExistsPrepared and
	// SelectPrepared run, with its values written in, which bun's query
	// hooks do not: tests explain them too.
	preparedHook atomic.Pointer[func(query string)]
}

// OnPrepared has fn see every prepared statement d runs, as a bun query
// hook sees the others.
func (d *DB) OnPrepared(fn func(query string)) {
	d.preparedHook.Store(&fn)
}

func (d *DB) sawPrepared(query string, args []any) {
	if fn := d.preparedHook.Load(); fn != nil {
		(*fn)(d.QueryGen().FormatQuery(query, args...))
	}
}

// noFlushKey marks a context whose transaction runs on the noFlush pool.
type noFlushKey struct{}

// Close closes the database's pools.
func (d *DB) Close() error {
	err := d.DB.Close()
	if d.noFlush != nil {
		err = errors.Join(err, d.noFlush.Close())
	}
	return err
}

// AddQueryHook adds hook to every pool of the database, so that what runs
// on the no-flush pool is seen too.
func (d *DB) AddQueryHook(hook bun.QueryHook) {
	d.DB.AddQueryHook(hook)
	if d.noFlush != nil {
		d.noFlush.AddQueryHook(hook)
	}
}

// NoFlush is where a single statement whose loss in a crash does no harm
// runs outside a transaction: on Postgres the no-flush pool, whose commit
// does not wait for the disk; the database itself on SQLite. Inside a
// transaction it is the transaction.
func (d *DB) NoFlush(ctx context.Context) bun.IDB {
	if tx, ok := ctx.Value(txKey{}).(bun.Tx); ok {
		return tx
	}
	if d.noFlush != nil {
		return d.noFlush
	}
	return d.DB
}

// NoFlushStatements returns ctx for ExecPrepared, SelectPrepared and
// ExistsPrepared to run a single statement outside a transaction on the
// no-flush pool (see NoFlush), prepared once per connection there.
// Inside a transaction, and on SQLite, ctx is returned as it is.
func (d *DB) NoFlushStatements(ctx context.Context) context.Context {
	if _, inTx := ctx.Value(txKey{}).(bun.Tx); inTx || d.noFlush == nil {
		return ctx
	}
	return context.WithValue(ctx, noFlushKey{}, true)
}

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
		sqldb := stdlib.OpenDB(*cfg)
		sqldb.SetMaxOpenConns(20)
		sqldb.SetMaxIdleConns(20)
		d = &DB{DB: bun.NewDB(sqldb, pgdialect.New()), Engine: Postgres}
		nfCfg := cfg.Copy()
		nfCfg.RuntimeParams["synchronous_commit"] = "off"
		nf := stdlib.OpenDB(*nfCfg)
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
	// and reads the file through a 256 MiB memory map; sorts and temporary
	// indexes stay in memory. docs/PERFORMANCE.md has the measurements.
	// busy_timeout comes first: switching to WAL takes a lock, and a
	// process that opens the file while another does must wait for it.
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)",
		"cache_size(-32768)", "mmap_size(268435456)", "temp_store(MEMORY)"} {
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

type txKey struct{}

// IDB returns the transaction carried by ctx, or db itself.
func (d *DB) IDB(ctx context.Context) bun.IDB {
	if tx, ok := ctx.Value(txKey{}).(bun.Tx); ok {
		return tx
	}
	return d.DB
}

// InTx runs fn inside a transaction carried by the context fn receives.
// When ctx already carries one, fn joins it, so one transaction can span
// several areas' stores. Writes should go through InTx: on SQLite it is
// what queues them in the process. fn must pass on the ctx it receives;
// starting a new transaction from another context inside fn would wait
// for the one that fn holds.
func (d *DB) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{}).(bun.Tx); ok {
		return fn(ctx)
	}
	if d.Engine == SQLite {
		d.writeMu.Lock()
		defer d.writeMu.Unlock()
	}
	return d.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return inTx(withTx(ctx, tx), fn)
	})
}

// withTx is ctx carrying tx, with the transaction's memo and commit hooks.
func withTx(ctx context.Context, tx bun.Tx) context.Context {
	return context.WithValue(context.WithValue(context.WithValue(ctx, txKey{}, tx), txMemoKey{}, &sync.Map{}), commitHooksKey{}, &commitHooks{})
}

// inTx runs fn and then, if it succeeded, the hooks it left for the
// commit.
func inTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := fn(ctx); err != nil {
		return err
	}
	h := ctx.Value(commitHooksKey{}).(*commitHooks)
	for {
		h.mu.Lock()
		if len(h.fns) == 0 {
			h.mu.Unlock()
			return nil
		}
		// In key order, not the order of registration: two transactions
		// that write the same hooks' rows then lock them in one order.
		first := 0
		for i, f := range h.fns {
			if f.key < h.fns[first].key {
				first = i
			}
		}
		next := h.fns[first]
		h.fns = slices.Delete(h.fns, first, first+1)
		delete(h.keys, next.key)
		h.mu.Unlock()
		if err := next.fn(ctx); err != nil {
			return err
		}
	}
}

type commitHooksKey struct{}

// commitHooks are what a transaction runs last, before its commit.
type commitHooks struct {
	mu   sync.Mutex
	keys map[string]bool
	fns  []commitHook
}

type commitHook struct {
	key string
	fn  func(ctx context.Context) error
}

// BeforeCommit has fn run last in the transaction ctx carries, once
// however often it is asked for under key, and reports whether ctx
// carries one (when it does not, nothing is registered). Writes that many
// transactions make to a few shared rows, such as counters, go there: the
// rows are locked only for the commit, and hooks that write their rows in
// a fixed order cannot deadlock with another transaction's, as the hooks
// themselves run in the order of their keys.
func BeforeCommit(ctx context.Context, key string, fn func(ctx context.Context) error) bool {
	h, ok := ctx.Value(commitHooksKey{}).(*commitHooks)
	if !ok {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.keys == nil {
		h.keys = map[string]bool{}
	}
	if !h.keys[key] {
		h.keys[key] = true
		h.fns = append(h.fns, commitHook{key, fn})
	}
	return true
}

// Later queues item under key in the transaction ctx carries, for flush to
// write together with every item queued under key, in one go, just before
// the commit (see BeforeCommit): the rows a transaction writes one by one,
// such as the runner's actions and events, then cost a statement or a few
// instead of one each. It reports whether ctx carries a transaction; when
// it does not, nothing is queued and the caller writes at once.
//
// A queued write is seen by no read of the transaction before the commit:
// queue only rows the transaction does not read again. Queued writes run
// before the counters' hooks (their keys sort first), so that those still
// hold their hot rows for the commit alone.
func Later[T any](ctx context.Context, key string, item T, flush func(ctx context.Context, items []T) error) bool {
	memo := TxMemo(ctx)
	if memo == nil {
		return false
	}
	key = laterPrefix + key
	v, _ := memo.LoadOrStore(key, &queued[T]{})
	q := v.(*queued[T])
	q.mu.Lock()
	q.items = append(q.items, item)
	q.mu.Unlock()
	BeforeCommit(ctx, key, func(ctx context.Context) error {
		q.mu.Lock()
		items := q.items
		q.items = nil
		q.mu.Unlock()
		if len(items) == 0 {
			return nil
		}
		return flush(ctx, items)
	})
	return true
}

// laterPrefix sorts the hooks of Later before every other hook key, which
// start with a letter.
const laterPrefix = "0 later:"

type queued[T any] struct {
	mu    sync.Mutex
	items []T
}

// IsRetryable reports whether err is a Postgres deadlock or serialization
// failure: the transaction was rolled back and may simply run again.
func IsRetryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

type txMemoKey struct{}

// TxMemo is a map that lives as long as the transaction ctx carries (nil
// outside one): what a store read once in a transaction and may reuse in
// it, such as the webhooks of a workspace for the outbox.
func TxMemo(ctx context.Context) *sync.Map {
	m, _ := ctx.Value(txMemoKey{}).(*sync.Map)
	return m
}

// InTxNoFlush is InTx for work whose commit may be lost in a crash without
// harm, because it is redone the same way afterwards: on Postgres it runs
// on the no-flush pool, whose commit does not wait for the WAL to reach the
// disk. SQLite is unchanged, and so is a transaction ctx already carries,
// which fn joins.
func (d *DB) InTxNoFlush(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{}).(bun.Tx); ok || d.noFlush == nil {
		return d.InTx(ctx, fn)
	}
	return d.noFlush.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return inTx(context.WithValue(withTx(ctx, tx), noFlushKey{}, true), fn)
	})
}

// IsUniqueViolation reports whether err is a unique-constraint violation on
// either engine.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// Conflict translates a unique violation into an E_CONFLICT error with the
// given message and remedy; any other error is returned as it is.
func Conflict(err error, msg, remedy string) error {
	if IsUniqueViolation(err) {
		return &conflictError{cause: err, msg: msg, remedy: remedy}
	}
	return err
}

// ExecPrepared runs query, written with ? placeholders, with args in the
// transaction ctx carries (or on the database): for a statement a hot path
// runs again and again, which each connection parses once. SQLite's driver
// has no statement cache of its own; pgx caches statements already.
func (d *DB) ExecPrepared(ctx context.Context, query string, args ...any) error {
	st, done, err := d.prepared(ctx, query, args)
	if err != nil {
		return err
	}
	defer done()
	_, err = st.ExecContext(ctx, args...)
	return err
}

// SelectPrepared scans the rows of query, a SELECT written with ?
// placeholders, into dest as bun's Scan does, preparing it once per
// connection as ExecPrepared does: for the reads a hot path repeats.
func (d *DB) SelectPrepared(ctx context.Context, dest any, query string, args ...any) error {
	st, done, err := d.prepared(ctx, query, args)
	if err != nil {
		return err
	}
	defer done()
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	return d.ScanRows(ctx, rows, dest)
}

// rowPrepared scans the one row of query into dest, one pointer per
// column, as database/sql's Scan does; prepared as ExecPrepared does.
func (d *DB) rowPrepared(ctx context.Context, query string, args []any, dest ...any) error {
	st, done, err := d.prepared(ctx, query, args)
	if err != nil {
		return err
	}
	defer done()
	return st.QueryRowContext(ctx, args...).Scan(dest...)
}

// Exec runs query, written with ? placeholders, with args in the
// transaction ctx carries (or on the database): prepared once per
// connection as ExecPrepared does when prepared is set, parsed each time
// otherwise.
func (d *DB) Exec(ctx context.Context, query string, prepared bool, args ...any) error {
	if prepared {
		return d.ExecPrepared(ctx, query, args...)
	}
	_, err := d.IDB(ctx).ExecContext(ctx, query, args...)
	return err
}

// ExistsPrepared reports whether query, a SELECT written with ?
// placeholders, finds a row, preparing it once per connection as
// ExecPrepared does.
func (d *DB) ExistsPrepared(ctx context.Context, query string, args ...any) (bool, error) {
	st, done, err := d.prepared(ctx, query, args)
	if err != nil {
		return false, err
	}
	defer done()
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	found := rows.Next()
	return found, rows.Err()
}

// UpdateFromValues updates rows of table by their id in one statement,
// from a VALUES list: each row is an id and then the new values of cols.
// Both engines name a VALUES list's columns column1, column2, …; on
// Postgres the first row's values are cast to types (by column name, "id"
// included; text when not given), which types the whole list.
func (d *DB) UpdateFromValues(ctx context.Context, table string, cols []string, types map[string]string, rows [][]any) error {
	cast := func(col string) string {
		if d.Engine != Postgres {
			return ""
		}
		if t, ok := types[col]; ok {
			return "::" + t
		}
		return "::text"
	}
	var sb strings.Builder
	sb.WriteString("UPDATE " + table + " SET ")
	for i, c := range cols {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s = v.column%d", c, i+2)
	}
	sb.WriteString(" FROM (VALUES ")
	var args []any
	for n, row := range rows {
		if n > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(?")
		if n == 0 {
			sb.WriteString(cast("id"))
		}
		for _, c := range cols {
			sb.WriteString(", ?")
			if n == 0 {
				sb.WriteString(cast(c))
			}
		}
		sb.WriteString(")")
		args = append(args, row...)
	}
	fmt.Fprintf(&sb, ") AS v WHERE %s.id = v.column1", table)
	_, err := d.IDB(ctx).ExecContext(ctx, sb.String(), args...)
	return err
}

// IndexedBy names table (with its alias, if any: "enrollments AS e") read
// through index. SQLite's planner has no statistics and can prefer an
// index that walks far more rows (a whole sequence's enrollments, say, for
// a few leads), so the query says which; Postgres plans by its statistics.
func (d *DB) IndexedBy(table, index string) string {
	if d.Engine == SQLite {
		return table + " INDEXED BY " + index
	}
	return table
}

// TimeArg is t (nil for NULL) as an argument of a prepared statement, in
// the form bun writes times into the statements it builds: on SQLite, whose
// driver would write a text of its own, the same text, so that stored
// times compare and sort alike whichever way they were written.
func (d *DB) TimeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	if d.Engine == SQLite {
		return t.UTC().Format("2006-01-02 15:04:05.999999-07:00")
	}
	return *t
}

// pendingStmt marks a statement being prepared on a pool in the
// background.
type pendingStmt struct{}

// prepared is the statement for query (see stmt), with the statement
// and its values shown to OnPrepared's hook: every prepared form starts
// here.
func (d *DB) prepared(ctx context.Context, query string, args []any) (*sql.Stmt, func(), error) {
	st, done, err := d.stmt(ctx, query)
	if err == nil {
		d.sawPrepared(query, args)
	}
	return st, done, err
}

// stmt returns query prepared for use in the transaction ctx carries, or
// on the pool outside one, and what to call when done with it.
//
// The pool's statement is prepared once and kept. In a transaction, one
// the pool has not prepared yet is prepared on the transaction's own
// connection for this use, and the pool's is prepared in the background:
// preparing it on the pool there would wait for a free connection, and a
// pool whose every connection a transaction waiting here holds would never
// have one.
func (d *DB) stmt(ctx context.Context, query string) (*sql.Stmt, func(), error) {
	pool, stmts := d.DB.DB, &d.stmts
	if ctx.Value(noFlushKey{}) != nil {
		pool, stmts = d.noFlush.DB, &d.noFlushStmts
	}
	tx, inTx := ctx.Value(txKey{}).(bun.Tx)
	v, _ := stmts.Load(query)
	if st, ready := v.(*sql.Stmt); ready {
		if !inTx {
			return st, func() {}, nil
		}
		txst := tx.Tx.StmtContext(ctx, st)
		return txst, func() { txst.Close() }, nil
	}
	text := d.placeholders(query)
	if inTx {
		if _, loaded := stmts.LoadOrStore(query, pendingStmt{}); !loaded {
			go func() {
				st, err := pool.PrepareContext(context.Background(), text)
				if err != nil {
					stmts.CompareAndDelete(query, pendingStmt{})
					return
				}
				if !stmts.CompareAndSwap(query, pendingStmt{}, st) {
					st.Close()
				}
			}()
		}
		txst, err := tx.Tx.PrepareContext(ctx, text)
		if err != nil {
			return nil, nil, err
		}
		return txst, func() { txst.Close() }, nil
	}
	st, err := pool.PrepareContext(ctx, text)
	if err != nil {
		return nil, nil, err
	}
	if _, loaded := stmts.LoadOrStore(query, st); loaded {
		// Another statement for query is kept or on its way: this one
		// serves once.
		return st, func() { st.Close() }, nil
	}
	return st, func() {}, nil
}

// placeholders turns query's ? placeholders into the engine's.
func (d *DB) placeholders(query string) string {
	if d.Engine != Postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
