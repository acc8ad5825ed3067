package db

import (
	"context"
	"fmt"
	"strings"
)

// UpdateFromValues updates rows of table by their id in one statement,
// from a VALUES list: each row is an id and then the new values of cols.
// Both engines name a VALUES list's columns column1, column2, …; on
// Postgres the first row's values are cast to types (by column name, "id"
// included; text when not given), which types the whole list.
func (d *DB) UpdateFromValues(ctx context.Context, table string, cols []string, types map[string]string, rows [][]any) error {
	cast := func(col string) string { return d.cast(types, col) }
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

// SkipLocked is the clause that ends a claim's inner SELECT: on Postgres
// it skips the rows another worker holds (FOR UPDATE SKIP LOCKED), so that
// several workers share the due rows and never take the same one; SQLite
// has one writer at a time and needs none.
func (d *DB) SkipLocked() string {
	if d.Engine == Postgres {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}
