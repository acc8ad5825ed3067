package db

import (
	"context"
	"strconv"
	"strings"
)

// bulkSizes are the row counts of the multi-row statements ExecRows
// writes, largest first: a batch goes out in statements of these sizes
// and then one of the rest (fewer than the smallest), so that a statement
// prepares at most len(bulkSizes)+15 texts per connection.
var bulkSizes = []int{256, 64, 16}

// maxBulkArgs keeps a statement's placeholders under both engines'
// limits (SQLite's 32,766, Postgres's 65,535).
const maxBulkArgs = 30000

// ExecRows writes rows with multi-row statements prepared once per
// connection (see ExecPrepared), in the transaction ctx carries: each
// statement is head, then one "(?, ?, …)" per row joined by commas, then
// tail. Every row has the same number of values; on Postgres a row's first
// values may be cast with casts (e.g. "::uuid"), one per value or none,
// which a VALUES list of an UPDATE … FROM needs to type its columns. The
// values are bound, never written into the text: neither engine parses a
// batch's values, and a text of one size is parsed once per connection.
func (d *DB) ExecRows(ctx context.Context, head, tail string, casts []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	width := len(rows[0])
	for len(rows) > 0 {
		n := min(len(rows), max(1, maxBulkArgs/width))
		for _, size := range bulkSizes {
			if size <= len(rows) && size*width <= maxBulkArgs {
				n = size
				break
			}
		}
		args := make([]any, 0, n*width)
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		if err := d.ExecPrepared(ctx, d.rowsText(head, tail, casts, width, n), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// rowsText is the text of a statement of n rows of width values.
func (d *DB) rowsText(head, tail string, casts []string, width, n int) string {
	var sb strings.Builder
	sb.Grow(len(head) + len(tail) + n*(width*3+4))
	sb.WriteString(head)
	for i := range n {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('(')
		for j := range width {
			if j > 0 {
				sb.WriteString(", ")
			}
			sb.WriteByte('?')
			if i == 0 && d.Engine == Postgres && j < len(casts) {
				sb.WriteString(casts[j])
			}
		}
		sb.WriteByte(')')
	}
	sb.WriteString(tail)
	return sb.String()
}

// UpdateRows updates rows of table by their id from a VALUES list, bound
// as ExecRows binds them (prepared, a few sizes of statement): each row is
// an id and then the new values of cols, times given as TimeArg gives
// them. Both engines name a VALUES list's columns column1, column2, …; on
// Postgres the first row's values are cast to types (by column name, "id"
// included; text when not given), which types the whole list.
func (d *DB) UpdateRows(ctx context.Context, table string, cols []string, types map[string]string, rows [][]any) error {
	casts := make([]string, 0, len(cols)+1)
	for _, c := range append([]string{"id"}, cols...) {
		casts = append(casts, d.cast(types, c))
	}
	var set strings.Builder
	set.WriteString("UPDATE " + table + " SET ")
	for i, c := range cols {
		if i > 0 {
			set.WriteString(", ")
		}
		set.WriteString(c + " = v.column" + strconv.Itoa(i+2))
	}
	set.WriteString(" FROM (VALUES ")
	return d.ExecRows(ctx, set.String(), ") AS v WHERE "+table+".id = v.column1", casts, rows)
}

// cast is the Postgres cast of col's values in a VALUES list, "" on
// SQLite.
func (d *DB) cast(types map[string]string, col string) string {
	if d.Engine != Postgres {
		return ""
	}
	if t, ok := types[col]; ok {
		return "::" + t
	}
	return "::text"
}
