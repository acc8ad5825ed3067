package leads

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/leadline/leadline/internal/db"
)

// The bulk statements of a batch: every value is bound, and each text is
// prepared once per connection (db.ExecRows), so that neither engine
// parses a batch's values and no value goes through reflection.

// insertColumns are the leads columns a batch's insert writes, in the
// order of leadRow's values.
const insertColumns = "id, workspace_id, client_id, list_id, stage_id, email_work, email_personal, public_identifier, linkedin_id, " +
	"provider_id, name, company, headline, location, source, custom, profile, do_not_contact, do_not_contact_at, " +
	"do_not_contact_reason, replied, enriched_at, created_at, updated_at"

// insertLeads writes new leads with multi-row inserts.
func (s *Service) insertLeads(ctx context.Context, ls []*Lead) error {
	rows := make([][]any, 0, len(ls))
	for _, l := range ls {
		r, err := s.leadRow(l)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	return s.db.ExecRows(ctx, "INSERT INTO leads ("+insertColumns+") VALUES ", "", nil, rows)
}

// leadRow is l's values for insertColumns, as bun would write them.
func (s *Service) leadRow(l *Lead) ([]any, error) {
	custom, err := jsonText(l.Custom, false)
	if err != nil {
		return nil, err
	}
	profile, err := jsonText(l.Profile, true)
	if err != nil {
		return nil, err
	}
	return []any{l.ID, l.WorkspaceID, text(l.ClientID), text(l.ListID), text(l.StageID), text(l.EmailWork), text(l.EmailPersonal),
		text(l.PublicIdentifier), text(l.LinkedInID), text(l.ProviderID), text(l.Name), text(l.Company), text(l.Headline),
		text(l.Location), text(l.Source), custom, profile, l.DoNotContact, s.db.TimeArg(l.DoNotContactAt), text(l.DoNotContactReason),
		l.Replied, s.db.TimeArg(l.EnrichedAt), s.db.TimeArg(&l.CreatedAt), s.db.TimeArg(&l.UpdatedAt)}, nil
}

// text is an optional text value: NULL when nil.
func text(v *string) any {
	if v == nil {
		return nil
	}
	return *v
}

// jsonText is m as JSON text; a nil m is NULL when nullable, {} otherwise.
func jsonText(m map[string]any, nullable bool) (any, error) {
	if m == nil {
		if nullable {
			return nil, nil
		}
		return "{}", nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// columnValue is the value of one of the columns the update rule can
// change (the text fields, custom and updated_at), bound as the bulk
// update binds it.
func (s *Service) columnValue(l *Lead, col string) (any, error) {
	switch col {
	case "custom":
		return jsonText(l.Custom, false)
	case "updated_at":
		return s.db.TimeArg(&l.UpdatedAt), nil
	}
	for _, f := range fields {
		if f.name == col {
			return text(*f.lead(l)), nil
		}
	}
	return nil, fmt.Errorf("leads: no column %s to update", col)
}

// updateTypes are the Postgres types of the columns a bulk update sets
// that are not text.
var updateTypes = map[string]string{"id": "uuid", "client_id": "uuid", "list_id": "uuid", "stage_id": "uuid", "custom": "jsonb",
	"updated_at": "timestamptz"}

// updateLeads writes the columns cols (updated_at last) of the leads ls.
func (s *Service) updateLeads(ctx context.Context, cols []string, ls []*Lead) error {
	rows := make([][]any, 0, len(ls))
	for _, l := range ls {
		row := []any{l.ID}
		for _, c := range cols {
			v, err := s.columnValue(l, c)
			if err != nil {
				return err
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return s.db.UpdateRows(ctx, "leads", cols, updateTypes, rows)
}

// insertTags writes lead tags, those a lead holds already left as they are.
func (s *Service) insertTags(ctx context.Context, tags []leadTag) error {
	rows := make([][]any, 0, len(tags))
	for i := range tags {
		rows = append(rows, []any{tags[i].LeadID, tags[i].TagID, s.db.TimeArg(&tags[i].CreatedAt)})
	}
	return s.db.ExecRows(ctx, "INSERT INTO lead_tags (lead_id, tag_id, created_at) VALUES ", " ON CONFLICT (lead_id, tag_id) DO NOTHING", nil, rows)
}

// readAhead are the read-ahead's statements, one per question and engine,
// built once.
var readAhead sync.Map // "engine|what" -> string

// inValues is the text of a read of table's rows in a workspace whose col
// (compared as cmp, e.g. lower(l.email_work)) is one of the values of a
// JSON array, bound as one argument after the workspace's: one text
// however many values, prepared once per connection. cols are the columns
// read, named with table's alias as. extra is more of the WHERE clause,
// with its own arguments after the array.
//
// On Postgres each value is looked up on its own (a lateral subquery kept
// apart by OFFSET 0), so that the plan is the column's index whatever the
// statistics say: a table filled by the import itself has none yet, and a
// plan that walked the workspace instead would grow with every batch.
func (s *Service) inValues(what, cols, table, as, col, cmp, extra string) string {
	key := string(s.db.Engine) + "|" + what
	if q, ok := readAhead.Load(key); ok {
		return q.(string)
	}
	var q string
	if s.db.Engine == db.Postgres {
		q = cols + " FROM jsonb_array_elements_text(?::jsonb) AS v(value) CROSS JOIN LATERAL (SELECT * FROM " + table + " AS " + as +
			" WHERE " + as + ".workspace_id = ? AND " + cmp + " = v.value AND " + col + " IS NOT NULL" + extra + " OFFSET 0) AS " + as
	} else {
		q = cols + " FROM " + table + " AS " + as + " WHERE " + as + ".workspace_id = ? AND " + cmp +
			" IN (SELECT value FROM json_each(?)) AND " + col + " IS NOT NULL" + extra
	}
	readAhead.Store(key, q)
	return q
}

// inValuesArgs are the arguments of an inValues statement.
func (s *Service) inValuesArgs(workspaceID string, values []string, extra ...any) ([]any, error) {
	arr, err := json.Marshal(values)
	if err != nil {
		return nil, err
	}
	args := []any{workspaceID, string(arr)}
	if s.db.Engine == db.Postgres {
		args = []any{string(arr), workspaceID}
	}
	return append(args, extra...), nil
}

// leadsMatching reads the workspace's leads whose key is one of values
// (emails lower-case).
func (s *Service) leadsMatching(ctx context.Context, workspaceID string, k matchKey, values []string) ([]Lead, error) {
	cols := leadColumns(s.db)
	col := "l." + string(k)
	cmp := col
	if k == keyEmailWork || k == keyEmailPersonal {
		cmp = "lower(" + col + ")"
	}
	args, err := s.inValuesArgs(workspaceID, values)
	if err != nil {
		return nil, err
	}
	var rows []Lead
	if err := s.db.SelectPrepared(ctx, &rows, s.inValues("leads "+string(k), cols, "leads", "l", col, cmp, ""), args...); err != nil && !db.IsNoRows(err) {
		return nil, err
	}
	return rows, nil
}

// leadColumns is "SELECT" and the columns of a lead, as bun reads them.
var leadColumns = func() func(d *db.DB) string {
	var once sync.Once
	var cols string
	return func(d *db.DB) string {
		once.Do(func() {
			cols = d.NewSelect().Model((*Lead)(nil)).String()
			cols = cols[:strings.Index(cols, " FROM ")]
		})
		return cols
	}
}()

// suppressed says which of values the workspace's do-not-contact list
// holds under kind.
func (s *Service) suppressed(ctx context.Context, workspaceID, kind string, values []string) (map[string]bool, error) {
	args, err := s.inValuesArgs(workspaceID, values, kind)
	if err != nil {
		return nil, err
	}
	var hits []string
	q := s.inValues("suppressions", "SELECT suppressions.value", "suppressions", "suppressions", "suppressions.value", "suppressions.value",
		" AND suppressions.kind = ?")
	if err := s.db.SelectPrepared(ctx, &hits, q, args...); err != nil && !db.IsNoRows(err) {
		return nil, err
	}
	out := make(map[string]bool, len(hits))
	for _, h := range hits {
		out[h] = true
	}
	return out, nil
}
