package leads

import (
	"context"
	"encoding/json"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
)

// search returns one page of the leads matching f's text search, newest
// first, and how many match in all, reading the matches once: one
// statement counts them and picks the page's ids (a text search visits
// every match for the exact total, and reading them a second time for the
// page doubled the cost of a search), a second reads the page's leads.
// As every count but the per-client one, a rider runs alone first.
func (s *BunStore) search(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Lead, int, error) {
	if r := db.TakeRider(ctx); r != nil {
		if err := s.db.RunRider(ctx, r); err != nil {
			return nil, 0, err
		}
	}
	// The order: the trigram index's rowids on SQLite (newest first, as
	// its matches come), the ids otherwise.
	key, order := "l.id", "l.id DESC"
	if s.ftsSearch(f.Q) {
		key, order = "f.rowid", "l.seq DESC"
	}
	matches := s.applyFilter(s.fromSearch(s.idb(ctx).NewSelect().Model((*Lead)(nil)).ColumnExpr(key+" AS k, l.id"), f), workspaceID, scope, f)
	agg := "json_group_array(p.id)"
	if s.db.Engine == db.Postgres {
		agg = "coalesce(json_agg(p.id), '[]')"
	}
	var total int
	var page string
	if err := s.idb(ctx).NewRaw(`WITH m AS MATERIALIZED (?) SELECT (SELECT count(*) FROM m) AS total,
		(SELECT `+agg+` FROM (SELECT m.id FROM m ORDER BY m.k DESC LIMIT ? OFFSET ?) AS p) AS ids`,
		matches, f.Limit, f.Offset).Scan(ctx, &total, &page); err != nil {
		return nil, 0, err
	}
	var ids []string
	if err := json.Unmarshal([]byte(page), &ids); err != nil {
		return nil, 0, err
	}
	out := []Lead{}
	if len(ids) == 0 {
		return out, total, nil
	}
	err := s.idb(ctx).NewSelect().Model(&out).ExcludeColumn("profile").Where("l.id IN (?)", bun.In(ids)).OrderExpr(order).Scan(ctx)
	return out, total, err
}
