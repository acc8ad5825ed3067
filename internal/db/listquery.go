package db

import (
	"context"

	"github.com/uptrace/bun"
)

// ListQuery is the query behind one page of a list: a workspace's rows of
// T's table, limited to the clients a key sees, filtered, read in a fixed
// order a page at a time, with how many rows there are in all. Every
// area's list store builds its page with it, so that the client scope and
// the paging mean the same in each.
type ListQuery[T any] struct {
	q     *bun.SelectQuery
	alias string
	rows  []T
}

// List starts the ListQuery of T's table on idb, its columns qualified by
// alias (the table's alias in T's model; "" leaves them unqualified): the
// rows of workspaceID in scope, as InScope reads it.
func List[T any](idb bun.IDB, alias, workspaceID string, scope []string) *ListQuery[T] {
	l := &ListQuery[T]{alias: alias}
	l.q = InScope(idb.NewSelect().Model(&l.rows), alias, workspaceID, scope)
	return l
}

// InScope limits q to the rows of workspaceID (columns qualified by alias,
// if any) and, when scope is not empty, to those of scope's clients. scope
// is a principal's client ids (apikit.Principal.ClientIDs): empty is the
// whole workspace, and a scoped key does not see a row of no client, as
// apikit.Principal.SeesClient does not.
func InScope(q *bun.SelectQuery, alias, workspaceID string, scope []string) *bun.SelectQuery {
	q = q.Where(qualified(alias, "workspace_id")+" = ?", workspaceID)
	if len(scope) > 0 {
		q = q.Where(qualified(alias, "client_id")+" IN (?)", bun.In(scope))
	}
	return q
}

// qualified is column as a query reading its table as alias names it.
func qualified(alias, column string) string {
	if alias == "" {
		return column
	}
	return alias + "." + column
}

// Equal keeps the rows whose column equals value, unless value is empty:
// the filters a list leaves out when they are not given.
func (l *ListQuery[T]) Equal(column, value string) *ListQuery[T] {
	if value != "" {
		l.q = l.q.Where(qualified(l.alias, column)+" = ?", value)
	}
	return l
}

// EqualOrNone is Equal for a nullable column whose filter takes "none" for
// the rows where it is NULL (an assignee filter: a member id, or none).
func (l *ListQuery[T]) EqualOrNone(column, value string) *ListQuery[T] {
	if value == "none" {
		l.q = l.q.Where(qualified(l.alias, column) + " IS NULL")
		return l
	}
	return l.Equal(column, value)
}

// Where keeps the rows that meet query, a condition with ? placeholders
// for args, as bun's Where does.
func (l *ListQuery[T]) Where(query string, args ...any) *ListQuery[T] {
	l.q = l.q.Where(query, args...)
	return l
}

// Apply has fn add to the query what Equal and Where do not say, such as
// conditions shared with the area's other queries.
func (l *ListQuery[T]) Apply(fn func(q *bun.SelectQuery) *bun.SelectQuery) *ListQuery[T] {
	l.q = fn(l.q)
	return l
}

// Page reads the rows from offset on, at most limit of them, in order (an
// ORDER BY list, which should be total so that pages never repeat or skip
// a row while nothing changes), and counts the rows of every page.
func (l *ListQuery[T]) Page(ctx context.Context, order string, limit, offset int) ([]T, int, error) {
	n, err := l.q.OrderExpr(order).Limit(int64(limit)).Offset(int64(offset)).ScanAndCount(ctx)
	return l.rows, int(n), err
}
