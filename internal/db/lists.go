package db

import (
	"context"
	"database/sql"

	"github.com/uptrace/bun"
)

// InsertIfAbsent inserts model unless a row with the same conflict key
// (a column list such as "lead_id, tag_id") already exists, and reports
// whether it inserted.
func InsertIfAbsent(ctx context.Context, idb bun.IDB, model any, conflict string) (bool, error) {
	return Changed(idb.NewInsert().Model(model).On("CONFLICT (" + conflict + ") DO NOTHING").Exec(ctx))
}

// Changed reports whether a statement changed any row.
func Changed(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// FirstListed returns the first of values in a workspace's list of kind
// (a table with workspace_id, kind and value columns, such as the
// blacklist or the do-not-contact entries), or "" when none is listed.
func FirstListed(ctx context.Context, idb bun.IDB, table, workspaceID, kind string, values []string) (string, error) {
	listed, err := Listed(ctx, idb, table, workspaceID, kind, values)
	for _, v := range values {
		if listed[v] {
			return v, err
		}
	}
	return "", err
}

// Listed returns which of values are in a workspace's list of kind, reading
// the list's (workspace_id, kind, value) index in chunks.
func Listed(ctx context.Context, idb bun.IDB, table, workspaceID, kind string, values []string) (map[string]bool, error) {
	out := map[string]bool{}
	for start := 0; start < len(values); start += 500 {
		var hits []string
		err := idb.NewSelect().Table(table).Column("value").
			Where("workspace_id = ? AND kind = ?", workspaceID, kind).Where("value IN (?)", bun.In(values[start:min(start+500, len(values))])).
			Scan(ctx, &hits)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			out[h] = true
		}
	}
	return out, nil
}

// Refs reads columns of a workspace's rows of table into T, by name and
// id: all of them when ids is nil, else those among ids (none when ids is
// empty). An area reads its own rows with it for what it shows other areas
// of them (ids, names, clients); the others read them through the area.
func Refs[T any](ctx context.Context, idb bun.IDB, table, workspaceID string, ids []string, columns ...string) ([]T, error) {
	if ids != nil && len(ids) == 0 {
		return nil, nil
	}
	q := idb.NewSelect().Table(table).Column(columns...).Where("workspace_id = ?", workspaceID)
	if ids != nil {
		q = q.Where("id IN (?)", bun.In(ids))
	}
	var out []T
	err := q.OrderExpr("name, id").Scan(ctx, &out)
	return out, err
}
