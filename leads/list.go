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
func likePattern(q string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(q) + "%"
}

// applyFilter adds f's conditions (and the client scope) to q.
func (s *BunStore) applyFilter(q *bun.SelectQuery, workspaceID string, scope []string, f Filter) *bun.SelectQuery {
	q = q.Where("l.workspace_id = ?", workspaceID)
	if len(scope) > 0 {
		q = q.Where("l.client_id IN (?)", bun.In(scope))
	}
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
		q = q.Where("EXISTS (SELECT 1 FROM lead_tags AS lt WHERE lt.lead_id = l.id AND lt.tag_id = ?)", f.TagID)
	}
	if f.Source != "" {
		q = q.Where("l.source = ?", f.Source)
	}
	if f.Email != "" {
		e := strings.ToLower(f.Email)
		q = q.Where("(lower(l.email_work) = ? OR lower(l.email_personal) = ?)", e, e)
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

// applySearch matches q as a case-insensitive substring of name, company,
// headline or work email, through the engine's trigram index when q has
// at least three characters.
func (s *BunStore) applySearch(q *bun.SelectQuery, text string) *bun.SelectQuery {
	if s.db.Engine == db.Postgres {
		return q.Where(searchExpr+" ILIKE ?", likePattern(text))
	}
	if utf8.RuneCountInString(text) >= 3 {
		phrase := `"` + strings.ReplaceAll(text, `"`, `""`) + `"`
		return q.Where("l.seq IN (SELECT rowid FROM leads_fts WHERE leads_fts MATCH ?)", phrase)
	}
	p := likePattern(text)
	return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		for _, col := range []string{"name", "company", "headline", "email_work"} {
			q = q.WhereOr("l.? LIKE ? ESCAPE '\\'", bun.Ident(col), p)
		}
		return q
	})
}

// List returns one page of the workspace's leads matching f, newest first
// (by id, which is time-ordered and unique, so pages never repeat or skip
// a lead while nothing changes), and how many match in all.
func (s *BunStore) List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Lead, int, error) {
	var out []Lead
	q := s.applyFilter(s.idb(ctx).NewSelect().Model(&out), workspaceID, scope, f).
		OrderExpr("l.id DESC").Limit(int64(f.Limit)).Offset(int64(f.Offset))
	if err := q.Scan(ctx); err != nil {
		return nil, 0, err
	}
	total, err := s.applyFilter(s.idb(ctx).NewSelect().Model((*Lead)(nil)), workspaceID, scope, f).Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	if out == nil {
		out = []Lead{}
	}
	return out, int(total), nil
}
