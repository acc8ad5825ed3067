package db

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
