package leads_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/workspace"
)

// TestLeadCounts checks the per-client counts the lead_counts triggers
// keep against a count of the leads themselves after every kind of write:
// single upserts, imports (multi-row inserts and updates), suppression,
// moves between clients one by one and several in one statement, and
// single and multi-row inserts and deletes.
func TestLeadCounts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b, ws := setupSpec(t, d, workspace.WorkspaceSpec{
			Name: "acme", Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}},
			Clients: []string{"Globex", "Initech"},
		})
		c, err := ws.Catalog(b.ctx, b.p)
		is.NoErr(err)
		ids := map[string]string{}
		for _, n := range c.Clients {
			ids[n.Name] = n.ID
		}
		globex, initech := ids["Globex"], ids["Initech"]
		clientID, uuid := "client_id", ""
		if d.Engine == db.Postgres {
			clientID, uuid = "client_id::text", "::uuid"
		}
		check := func(step string) {
			t.Helper()
			var kept, real []string
			var rows []struct {
				Key string `bun:"k"`
				N   int    `bun:"n"`
			}
			is.NoErr(d.NewSelect().Table("lead_counts").ColumnExpr("client_key AS k, n").
				Where("workspace_id = ?", b.p.WorkspaceID).Where("n <> 0").Scan(b.ctx, &rows))
			for _, r := range rows {
				kept = append(kept, fmt.Sprintf("%q %d", r.Key, r.N))
			}
			rows = nil
			is.NoErr(d.NewSelect().Table("leads").ColumnExpr("coalesce("+clientID+", '') AS k, count(*) AS n").
				Where("workspace_id = ?", b.p.WorkspaceID).GroupExpr("coalesce("+clientID+", '')").Scan(b.ctx, &rows))
			for _, r := range rows {
				real = append(real, fmt.Sprintf("%q %d", r.Key, r.N))
			}
			slices.Sort(kept)
			slices.Sort(real)
			if !slices.Equal(kept, real) {
				t.Fatalf("%s: lead_counts %v, leads %v", step, kept, real)
			}
			page, err := b.svc.List(b.ctx, b.p, leads.Filter{Limit: 1})
			is.NoErr(err)
			n := 0
			for _, r := range rows {
				n += r.N
			}
			is.Equal(page.Total, n) // the unfiltered total reads lead_counts
		}
		check("empty")

		// Single upserts, with and without a client; an update of one.
		_, err = b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("a@one.test"), Name: str("A")})
		is.NoErr(err)
		_, err = b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("b@one.test"), ClientID: &globex})
		is.NoErr(err)
		_, err = b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("a@one.test"), Headline: str("CEO")})
		is.NoErr(err)
		check("upserts")

		// Imports: one batch of many rows, then batches of three, with
		// updates of leads already there.
		var csv strings.Builder
		csv.WriteString("Email,Company\n")
		for i := range 20 {
			fmt.Fprintf(&csv, "p%d@two.test,Corp %d\n", i, i)
		}
		csv.WriteString("a@one.test,Acme\n")
		rep, err := b.svc.Import(b.ctx, b.p, strings.NewReader(csv.String()), leads.ImportOptions{ClientID: initech, BatchSize: 1000})
		is.NoErr(err)
		is.Equal(rep.Created, 20)
		check("import in one batch")
		csv.Reset()
		csv.WriteString("Email,Company\n")
		for i := range 10 {
			fmt.Fprintf(&csv, "q%d@three.test,Corp %d\n", i, i)
			fmt.Fprintf(&csv, "p%d@two.test,Other %d\n", i, i)
		}
		rep, err = b.svc.Import(b.ctx, b.p, strings.NewReader(csv.String()), leads.ImportOptions{BatchSize: 3})
		is.NoErr(err)
		is.Equal(rep.Created, 10)
		check("import in batches of three")

		// Suppression keeps the lead, and so its count.
		_, err = b.svc.AddSuppressions(b.ctx, b.p, leads.SuppressionsInput{Emails: []string{"p1@two.test", "q2@three.test"}})
		is.NoErr(err)
		check("suppression")

		exec := func(step, q string, args ...any) {
			t.Helper()
			if _, err := d.NewRaw(q, args...).Exec(b.ctx); err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			check(step)
		}
		wsID := b.p.WorkspaceID
		// Moves: one lead, then several to different clients in one
		// statement (to a client, to none, from none), then a swap.
		exec("move one", "UPDATE leads SET client_id = ? WHERE workspace_id = ? AND email_work = 'p0@two.test'", globex, wsID)
		exec("move several", "UPDATE leads SET client_id = CASE WHEN email_work LIKE 'p%' THEN ?"+uuid+" WHEN email_work LIKE 'q%' THEN ?"+uuid+" END "+
			"WHERE workspace_id = ? AND (email_work LIKE 'p1%' OR email_work LIKE 'p2%' OR email_work LIKE 'q%')", globex, initech, wsID)
		exec("move to no client", "UPDATE leads SET client_id = NULL WHERE workspace_id = ? AND email_work LIKE 'p1%'", wsID)
		exec("swap", "UPDATE leads SET client_id = CASE WHEN client_id = ?"+uuid+" THEN ?"+uuid+" ELSE ?"+uuid+" END WHERE workspace_id = ? AND client_id IS NOT NULL",
			globex, initech, globex, wsID)
		exec("update without a move", "UPDATE leads SET headline = 'CTO' WHERE workspace_id = ?", wsID)

		// Inserts and deletes of several rows in one statement, across
		// clients.
		var ids6 []string
		for i := range 6 {
			client := []any{nil, globex, initech}[i%3]
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			exec("insert one", "INSERT INTO leads (id, workspace_id, client_id, email_work, created_at, updated_at) "+
				"SELECT ?, workspace_id, ?, ?, created_at, updated_at FROM leads WHERE workspace_id = ? AND email_work = 'a@one.test'",
				id, client, fmt.Sprintf("r%d@four.test", i), wsID)
			ids6 = append(ids6, id)
		}
		newID := "'00000000-0000-4000-9000-' || substr('000000000000' || seq, -12)"
		if d.Engine == db.Postgres {
			newID = "gen_random_uuid()"
		}
		exec("insert several", "INSERT INTO leads (id, workspace_id, client_id, email_work, created_at, updated_at) "+
			"SELECT "+newID+", workspace_id, client_id, 'copy.' || email_work, created_at, updated_at FROM leads "+
			"WHERE workspace_id = ? AND email_work LIKE 'q%'", wsID)
		exec("delete several", "DELETE FROM leads WHERE id IN (?)", bun.In(ids6[:4]))
		exec("delete copies", "DELETE FROM leads WHERE workspace_id = ? AND email_work LIKE 'copy.%'", wsID)
		exec("delete one", "DELETE FROM leads WHERE id = ?", ids6[4])
		exec("delete none", "DELETE FROM leads WHERE id = ?", "00000000-0000-4000-8000-999999999999")
	})
}
