package leads

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
)

// searchExpr is the expression the Postgres trigram index covers: the four
// searchable fields joined by a unit separator, so that a search never
// matches across two fields.
const searchExpr = `(coalesce(l.name, '') || E'\x1f' || coalesce(l.company, '') || E'\x1f' || coalesce(l.headline, '') || E'\x1f' || coalesce(l.email_work, ''))`

// likePattern turns q into a LIKE pattern matching it as a substring.
var likePattern = db.LikePattern

// applyFilter adds f's conditions (and the client scope) to q.
func (s *BunStore) applyFilter(q *bun.SelectQuery, workspaceID string, scope []string, f Filter) *bun.SelectQuery {
	q = db.InScope(q, "l", workspaceID, scope)
	if f.ClientID != "" {
		q = q.Where("l.client_id = ?", f.ClientID)
	}
	if f.ListID != "" {
		q = q.Where("l.list_id = ?", f.ListID)
	}
	if f.StageID != "" {
		q = q.Where("l.stage_id = ?", f.StageID)
	}
	if f.TagID != "" {
		q = q.Where("l.id IN (SELECT lt.lead_id FROM lead_tags AS lt WHERE lt.tag_id = ?)", f.TagID)
	}
	if f.Source != "" {
		q = q.Where("l.source = ?", f.Source)
	}
	if f.Email != "" {
		// Each email is read from its own partial index; a plain OR would
		// make SQLite walk the workspace in id order instead.
		e := strings.ToLower(f.Email)
		q = q.Where(`l.id IN (SELECT e.id FROM leads AS e WHERE e.workspace_id = ? AND lower(e.email_work) = ? AND e.email_work IS NOT NULL
			UNION ALL SELECT e.id FROM leads AS e WHERE e.workspace_id = ? AND lower(e.email_personal) = ? AND e.email_personal IS NOT NULL)`,
			workspaceID, e, workspaceID, e)
	}
	if f.PublicIdentifier != "" {
		q = q.Where("l.public_identifier = ?", f.PublicIdentifier)
	}
	if f.UpdatedSince != nil {
		q = q.Where("l.updated_at >= ?", *f.UpdatedSince)
	}
	if f.Replied != nil {
		q = q.Where("l.replied = ?", *f.Replied)
	}
	if f.Enriched != nil {
		if *f.Enriched {
			q = q.Where("l.enriched_at IS NOT NULL")
		} else {
			q = q.Where("l.enriched_at IS NULL")
		}
	}
	if f.Q != "" {
		q = s.applySearch(q, f.Q)
	}
	return q
}

// ftsSearch reports whether q is served by SQLite's trigram index, which
// needs at least three characters.
func (s *BunStore) ftsSearch(q string) bool {
	return s.db.Engine == db.SQLite && utf8.RuneCountInString(q) >= 3
}

// applySearch matches q as a case-insensitive substring of name, company,
// headline or work email. Postgres uses its trigram index; SQLite's
// trigram index is joined in by fromSearch, and short queries scan.
func (s *BunStore) applySearch(q *bun.SelectQuery, text string) *bun.SelectQuery {
	switch {
	case s.db.Engine == db.Postgres:
		return q.Where(searchExpr+" ILIKE ?", likePattern(text))
	case s.ftsSearch(text):
		return q.Where("leads_fts MATCH ?", `"`+strings.ReplaceAll(text, `"`, `""`)+`"`)
	}
	// Shorter than a trigram: scan, folding case by Unicode rules as
	// Postgres's ILIKE and the trigram index do.
	p := likePattern(strings.ToLower(text))
	return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		for _, col := range []string{"name", "company", "headline", "email_work"} {
			q = q.WhereOr(db.FoldFunc+"(l.?) LIKE ? ESCAPE '\\'", bun.Ident(col), p)
		}
		return q
	})
}

// fromSearch makes SQLite read matches from the trigram index first and
// then their leads (CROSS JOIN fixes that order), instead of probing every
// lead of the workspace.
func (s *BunStore) fromSearch(q *bun.SelectQuery, f Filter) *bun.SelectQuery {
	if s.ftsSearch(f.Q) {
		return q.ModelTableExpr("leads_fts AS f CROSS JOIN leads AS l ON l.seq = f.rowid")
	}
	return q
}

// List returns one page of the workspace's leads matching f, newest first,
// and how many match in all. The order is total (unique ids, or unique
// index rowids for a SQLite search), so pages never repeat or skip a lead
// while nothing changes.
func (s *BunStore) List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Lead, int, error) {
	if f.Q != "" {
		return s.search(ctx, workspaceID, scope, f)
	}
	var out []Lead
	order := "l.id DESC"
	// The total first: a rate count riding on the read (see db.Rider)
	// goes in the first statement, so that a refused call stops before
	// its page is read.
	total, err := s.count(ctx, workspaceID, scope, f)
	if err != nil {
		return nil, 0, err
	}
	q := s.applyFilter(s.idb(ctx).NewSelect().Model(&out).ExcludeColumn("profile"), workspaceID, scope, f).
		OrderExpr(order).Limit(int64(f.Limit)).Offset(int64(f.Offset))
	if f.Offset >= deepOffset {
		// A deep page finds its ids in an index alone, then reads only
		// those leads: an offset walks every skipped lead, and Postgres
		// reads each one's row when it walks the primary key. It walks
		// from the nearer end of the order: total, just counted with the
		// same filter, says where the page is from the oldest lead.
		idOrder, limit, offset := order, f.Limit, f.Offset
		if rest := total - f.Offset; rest > 0 && rest-f.Limit < f.Offset {
			// Nearer the oldest end: walk from there, the page's leads
			// being the last rest of them in ascending order.
			idOrder, limit, offset = "l.id ASC", min(f.Limit, rest), max(rest-f.Limit, 0)
		}
		ids := s.applyFilter(s.idb(ctx).NewSelect().Model((*Lead)(nil)).Column("l.id"), workspaceID, scope, f).
			OrderExpr(idOrder).Limit(int64(limit)).Offset(int64(offset))
		q = s.idb(ctx).NewSelect().Model(&out).ExcludeColumn("profile").Where("l.id IN (?)", ids).OrderExpr(order)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, 0, err
	}
	if out == nil {
		out = []Lead{}
	}
	return out, total, nil
}

// deepOffset is the offset from which a page reads its ids first.
const deepOffset = 1000

// count returns how many leads match f, which holds no search (a search
// counts its matches itself: search.go). Without filters other than the
// client, it adds up the per-client counts the lead_counts triggers keep,
// instead of counting every row, and with one stage or one tag besides,
// the per-stage and per-tag counts of lead_facet_counts. For a key of
// every client and no filter but the client, the total is one prepared
// statement, which carries the rider ctx may hold; any other count runs
// the rider alone first.
func (s *BunStore) count(ctx context.Context, workspaceID string, scope []string, f Filter) (int, error) {
	r := db.TakeRider(ctx)
	byClientOnly := f == Filter{ClientID: f.ClientID, Limit: f.Limit, Offset: f.Offset}
	if byClientOnly && len(scope) == 0 {
		cols, args := `(SELECT coalesce(sum(n), 0) FROM lead_counts WHERE workspace_id = ?) AS total`, []any{workspaceID}
		if f.ClientID != "" {
			cols, args = `(SELECT coalesce(sum(n), 0) FROM lead_counts WHERE workspace_id = ? AND client_key = ?) AS total`, []any{workspaceID, f.ClientID}
		}
		var n int
		err := s.db.Carry(ctx, r, cols, args, &n)
		return n, err
	}
	if r != nil {
		if err := s.db.RunRider(ctx, r); err != nil {
			return 0, err
		}
	}
	if kind, id := facet(f); kind != "" {
		// One stage or one tag, with or without a client: the counts the
		// lead_facet_counts triggers keep (summed over Postgres's shards).
		q := s.idb(ctx).NewSelect().Table("lead_facet_counts").ColumnExpr("coalesce(sum(n), 0)").
			Where("workspace_id = ? AND kind = ? AND facet_id = ?", workspaceID, kind, id)
		if len(scope) > 0 {
			q = q.Where("client_key IN (?)", bun.In(scope))
		}
		if f.ClientID != "" {
			q = q.Where("client_key = ?", f.ClientID)
		}
		var n int
		err := q.Scan(ctx, &n)
		return n, err
	}
	if !byClientOnly {
		n, err := s.applyFilter(s.idb(ctx).NewSelect().Model((*Lead)(nil)), workspaceID, scope, f).Count(ctx)
		return int(n), err
	}
	q := s.idb(ctx).NewSelect().Table("lead_counts").ColumnExpr("coalesce(sum(n), 0)").Where("workspace_id = ?", workspaceID).
		Where("client_key IN (?)", bun.In(scope))
	if f.ClientID != "" {
		q = q.Where("client_key = ?", f.ClientID)
	}
	var n int
	err := q.Scan(ctx, &n)
	return n, err
}

// facet is the kind ("stage" or "tag") and id of the one stage or tag f
// filters by when that and a client are all it filters by; "" otherwise.
func facet(f Filter) (kind, id string) {
	switch {
	case f.StageID != "" && f == Filter{ClientID: f.ClientID, StageID: f.StageID, Limit: f.Limit, Offset: f.Offset}:
		return "stage", f.StageID
	case f.TagID != "" && f == Filter{ClientID: f.ClientID, TagID: f.TagID, Limit: f.Limit, Offset: f.Offset}:
		return "tag", f.TagID
	}
	return "", ""
}
