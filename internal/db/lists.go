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
	if len(values) == 0 {
		return "", nil
	}
	var hits []string
	err := idb.NewSelect().Table(table).Column("value").
		Where("workspace_id = ? AND kind = ?", workspaceID, kind).Where("value IN (?)", bun.In(values)).
		Limit(1).Scan(ctx, &hits)
	if err != nil || len(hits) == 0 {
		return "", err
	}
	return hits[0], nil
}
