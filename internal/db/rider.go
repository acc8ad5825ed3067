package db

import (
	"context"
	"sync/atomic"
)

// A Rider is a small statement that can travel inside another one: the
// statement that carries it runs it as common table expressions of its
// own and reads its columns beside its own, so both cost one round trip.
// A request's rate count rides this way in the first statement of the
// hottest read.
//
// Riders are for Postgres, whose WITH may hold an INSERT … RETURNING.
// Whatever carries a rider runs on the no-flush pool: a rider's writes
// commit without waiting for the disk.
type Rider struct {
	// With holds the rider's common table expressions, `name AS (…)`,
	// separated by commas; they may write.
	With string
	// Select holds the columns the rider adds, reading its expressions.
	Select string
	// Args are the values of With's and then Select's placeholders.
	Args []any
	// Dest receives Select's columns, one pointer each.
	Dest []any
	// Done, if set, runs once the rider's columns are read. Its error
	// stops the work the carrying statement was part of.
	Done func(context.Context) error

	taken atomic.Bool
}

type riderKey struct{}

// WithRider returns ctx carrying r for the first statement that can take it.
func WithRider(ctx context.Context, r *Rider) context.Context {
	return context.WithValue(ctx, riderKey{}, r)
}

// TakeRider returns the rider ctx carries, for the caller to carry in its
// next statement, or nil when there is none or another caller took it.
func TakeRider(ctx context.Context) *Rider {
	r, _ := ctx.Value(riderKey{}).(*Rider)
	if r == nil || !r.taken.CompareAndSwap(false, true) {
		return nil
	}
	return r
}

// Carry runs a statement that reads cols (a select list, written with ?
// placeholders, whose values are args) into dest, one pointer per column
// of its one row, with r riding in it,
// prepared once per connection as SelectPrepared does; then r's Done.
// With a nil r, the statement runs as it is. The statement's text must
// not vary with the values, or each call prepares a new one.
func (d *DB) Carry(ctx context.Context, r *Rider, cols string, args []any, dest ...any) error {
	if r == nil {
		return d.rowPrepared(ctx, "SELECT "+cols, args, dest...)
	}
	query := "WITH " + r.With + " SELECT " + r.Select
	if cols != "" {
		query += ", " + cols
	}
	all := append(append([]any{}, r.Args...), args...)
	if err := d.rowPrepared(d.NoFlushStatements(ctx), query, all, append(append([]any{}, r.Dest...), dest...)...); err != nil {
		return err
	}
	if r.Done == nil {
		return nil
	}
	return r.Done(ctx)
}

// RunRider runs r as a statement of its own, then its Done.
func (d *DB) RunRider(ctx context.Context, r *Rider) error {
	return d.Carry(ctx, r, "", nil)
}
