package db

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

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

// MaxPreparedList is the longest list of values a InQuery puts in one
// statement; a longer list is read in parts of this length.
const MaxPreparedList = 100

// InQuery is a read by a list of values (ids, most often) that a hot path
// runs again and again, prepared once per connection and per length of the
// list as SelectPrepared prepares a statement: a list of one id and a list
// of sixty are two statements, each parsed once. Its text is built once per
// length by text, given the list's placeholders ("?, ?, ?").
type InQuery struct {
	text  func(marks string) string
	texts sync.Map // length → text
}

// NewInQuery returns the read whose text, for a list's placeholders,
// text builds: its placeholders are the values SelectList is given before
// the list, then the list's.
func NewInQuery(text func(marks string) string) *InQuery {
	return &InQuery{text: text}
}

// textFor returns the statement's text for a list of n values.
func (l *InQuery) textFor(n int) string {
	if t, ok := l.texts.Load(n); ok {
		return t.(string)
	}
	t := l.text(strings.TrimSuffix(strings.Repeat("?, ", n), ", "))
	l.texts.Store(n, t)
	return t
}

// SelectList reads into a slice of T the rows l finds for list, each part
// of at most MaxPreparedList values in one prepared statement, with before
// the values that come ahead of the list's in the statement.
func SelectList[T any, V any](ctx context.Context, d *DB, l *InQuery, before []any, list []V) ([]T, error) {
	var out []T
	for part := range slices.Chunk(list, MaxPreparedList) {
		args := make([]any, 0, len(before)+len(part))
		args = append(args, before...)
		for _, v := range part {
			args = append(args, v)
		}
		var rows []T
		if err := d.SelectPrepared(ctx, &rows, l.textFor(len(part)), args...); err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// First returns the first of rows, or sql.ErrNoRows (with a zero T, as
// bun's Scan of one model leaves it) when there is none: the one row a
// prepared read by key found.
func First[T any](rows []T, err error) (*T, error) {
	if err == nil && len(rows) == 0 {
		err = sql.ErrNoRows
	}
	if err != nil {
		return new(T), err
	}
	return &rows[0], nil
}

// IDQueries returns the two reads of model's rows by id that the runner
// makes every tick: within a workspace (its values: the workspace, then the
// ids) and of any workspace (the ids). alias is the model's table alias.
func IDQueries(d *DB, model any, alias string) (inWorkspace, anyWorkspace *InQuery) {
	return NewInQuery(func(marks string) string {
			return d.NewSelect().Model(model).Where(alias+".workspace_id = ?", bun.Safe("?")).Where(alias+".id IN (?)", bun.Safe(marks)).String()
		}), NewInQuery(func(marks string) string {
			return d.NewSelect().Model(model).Where(alias+".id IN (?)", bun.Safe(marks)).String()
		})
}
