package leads_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/workspace"
)

// TestLeadCounts checks the per-client counts the lead_counts triggers
// keep, and the per-stage and per-tag counts of lead_facet_counts, against
// a count of the leads themselves after every kind of write: single
// upserts, imports (multi-row inserts and updates, with stages and tags),
// suppression, stage changes, tagging and untagging, moves between clients
// (of tagged leads too) one by one and several in one statement, and
// single and multi-row inserts and deletes. Each time, the list's totals
// for every stage and tag, alone, with a client and for a client viewer,
// are the real counts.
func TestLeadCounts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b, ws := setupSpec(t, d, workspace.WorkspaceSpec{
			Name: "acme", Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}},
			Clients: []string{"Globex", "Initech"}, Stages: []string{"New", "Won"}, Tags: []string{"vip", "cold"},
		})
		c, err := ws.Catalog(b.ctx, b.p)
		is.NoErr(err)
		ids := map[string]string{}
		for _, n := range c.Clients {
			ids[n.Name] = n.ID
		}
		globex, initech := ids["Globex"], ids["Initech"]
		for _, n := range append(c.Stages, c.Tags...) {
			ids[n.Name] = n.ID
		}
		stageNew, stageWon, vip, cold := ids["New"], ids["Won"], ids["vip"], ids["cold"]
		viewer := b.p
		viewer.Role, viewer.ClientIDs = apikit.RoleClientViewer, []string{globex}
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
			checkFacets(t, b, d, step, map[string]string{"stage": stageNew, "stage ": stageWon, "tag": vip, "tag ": cold},
				[]string{"", globex, initech}, viewer)
		}
		check("empty")

		// Single upserts, with and without a client; an update of one.
		_, err = b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("a@one.test"), Name: str("A")})
		is.NoErr(err)
		_, err = b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("b@one.test"), ClientID: &globex})
		is.NoErr(err)
		_, err = b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("a@one.test"), Headline: str("CEO")})
		is.NoErr(err)
		c1, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("c@one.test"), ClientID: &globex, StageID: &stageNew})
		is.NoErr(err)
		check("upserts")

		// A stage set, changed and cleared; tags added and removed.
		a, err := b.svc.List(b.ctx, b.p, leads.Filter{Email: "a@one.test", Limit: 1})
		is.NoErr(err)
		aID := a.Data[0].ID
		_, err = b.svc.SetStage(b.ctx, b.p, aID, &stageWon)
		is.NoErr(err)
		_, err = b.svc.SetStage(b.ctx, b.p, c1.Lead.ID, &stageWon)
		is.NoErr(err)
		_, err = b.svc.AddTags(b.ctx, b.p, c1.Lead.ID, []string{vip, cold})
		is.NoErr(err)
		_, err = b.svc.AddTags(b.ctx, b.p, aID, []string{vip})
		is.NoErr(err)
		check("stages and tags")
		_, err = b.svc.SetStage(b.ctx, b.p, aID, nil)
		is.NoErr(err)
		_, err = b.svc.RemoveTag(b.ctx, b.p, c1.Lead.ID, cold)
		is.NoErr(err)
		check("stage cleared and tag removed")

		// Imports: one batch of many rows, then batches of three, with
		// updates of leads already there.
		var csv strings.Builder
		csv.WriteString("Email,Company,stage_id\n")
		for i := range 20 {
			fmt.Fprintf(&csv, "p%d@two.test,Corp %d,%s\n", i, i, []string{stageNew, stageWon, ""}[i%3])
		}
		csv.WriteString("a@one.test,Acme,\n")
		rep, err := b.svc.Import(b.ctx, b.p, strings.NewReader(csv.String()), leads.ImportOptions{ClientID: initech, BatchSize: 1000, TagIDs: []string{cold}})
		is.NoErr(err)
		is.Equal(rep.Created, 20)
		check("import in one batch")
		csv.Reset()
		csv.WriteString("Email,Company,stage_id\n")
		for i := range 10 {
			fmt.Fprintf(&csv, "q%d@three.test,Corp %d,%s\n", i, i, stageWon)
			fmt.Fprintf(&csv, "p%d@two.test,Other %d,%s\n", i, i, stageNew)
		}
		rep, err = b.svc.Import(b.ctx, b.p, strings.NewReader(csv.String()), leads.ImportOptions{BatchSize: 3, TagIDs: []string{vip}})
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
		exec("stages of several", "UPDATE leads SET stage_id = CASE WHEN stage_id IS NULL THEN ?"+uuid+" WHEN email_work LIKE 'q%' THEN NULL ELSE ?"+uuid+" END "+
			"WHERE workspace_id = ?", stageWon, stageNew, wsID)
		exec("stage and client at once", "UPDATE leads SET stage_id = ?, client_id = ? WHERE workspace_id = ? AND email_work LIKE 'p%'",
			stageNew, globex, wsID)
		exec("untag several", "DELETE FROM lead_tags WHERE tag_id = ? AND lead_id IN (SELECT id FROM leads WHERE workspace_id = ? AND email_work LIKE 'p1%')",
			vip, wsID)

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
		exec("insert several", "INSERT INTO leads (id, workspace_id, client_id, stage_id, email_work, created_at, updated_at) "+
			"SELECT "+newID+", workspace_id, client_id, stage_id, 'copy.' || email_work, created_at, updated_at FROM leads "+
			"WHERE workspace_id = ? AND email_work LIKE 'q%'", wsID)
		exec("delete several", "DELETE FROM leads WHERE id IN (?)", bun.In(ids6[:4]))
		exec("delete copies", "DELETE FROM leads WHERE workspace_id = ? AND email_work LIKE 'copy.%'", wsID)
		exec("delete one", "DELETE FROM leads WHERE id = ?", ids6[4])
		exec("delete none", "DELETE FROM leads WHERE id = ?", "00000000-0000-4000-8000-999999999999")
		exec("untag before a delete", "DELETE FROM lead_tags WHERE lead_id IN (SELECT id FROM leads WHERE workspace_id = ? AND email_work LIKE 'p2%')", wsID)
		exec("delete tagged leads' leads", "DELETE FROM leads WHERE workspace_id = ? AND email_work LIKE 'p2%'", wsID)
	})
}

// checkFacets compares lead_facet_counts with the leads' real counts per
// stage and tag and client, then the list's totals for each of facets
// (kind, with a trailing space to name a second one of a kind, to id)
// alone, with each of clients, and for viewer, with a count of the leads.
func checkFacets(t *testing.T, b bundle, d *db.DB, step string, facets map[string]string, clients []string, viewer apikit.Principal) {
	t.Helper()
	is := is.New(t)
	text := ""
	if d.Engine == db.Postgres {
		text = "::text"
	}
	var kept, real []string
	var rows []struct {
		Kind   string `bun:"kind"`
		ID     string `bun:"facet_id"`
		Client string `bun:"client_key"`
		N      int    `bun:"n"`
	}
	is.NoErr(d.NewSelect().Table("lead_facet_counts").ColumnExpr("kind, facet_id"+text+" AS facet_id, client_key, sum(n) AS n").
		Where("workspace_id = ?", b.p.WorkspaceID).GroupExpr("kind, facet_id, client_key").Having("sum(n) <> 0").Scan(b.ctx, &rows))
	for _, r := range rows {
		kept = append(kept, fmt.Sprintf("%s %s %q %d", r.Kind, r.ID, r.Client, r.N))
	}
	rows = nil
	is.NoErr(d.NewRaw("SELECT 'stage' AS kind, stage_id"+text+" AS facet_id, coalesce(client_id"+text+", '') AS client_key, count(*) AS n "+
		"FROM leads WHERE workspace_id = ? AND stage_id IS NOT NULL GROUP BY stage_id, client_id "+
		"UNION ALL SELECT 'tag', lt.tag_id"+text+", coalesce(l.client_id"+text+", ''), count(*) FROM lead_tags AS lt JOIN leads AS l ON l.id = lt.lead_id "+
		"WHERE l.workspace_id = ? GROUP BY lt.tag_id, l.client_id", b.p.WorkspaceID, b.p.WorkspaceID).Scan(b.ctx, &rows))
	for _, r := range rows {
		real = append(real, fmt.Sprintf("%s %s %q %d", r.Kind, r.ID, r.Client, r.N))
	}
	slices.Sort(kept)
	slices.Sort(real)
	if !slices.Equal(kept, real) {
		t.Fatalf("%s: lead_facet_counts %v, leads %v", step, kept, real)
	}
	for kind, id := range facets {
		for _, client := range clients {
			f := leads.Filter{ClientID: client, Limit: 1}
			// The same filter with an always-true condition besides is
			// counted from the leads themselves.
			counted := leads.Filter{ClientID: client, Source: "", Limit: 1, UpdatedSince: &time.Time{}}
			if strings.TrimSpace(kind) == "stage" {
				f.StageID, counted.StageID = id, id
			} else {
				f.TagID, counted.TagID = id, id
			}
			for _, p := range []apikit.Principal{b.p, viewer} {
				if client != "" && !p.SeesClient(client) {
					continue
				}
				got, err := b.svc.List(b.ctx, p, f)
				is.NoErr(err)
				want, err := b.svc.List(b.ctx, p, counted)
				is.NoErr(err)
				if got.Total != want.Total {
					t.Fatalf("%s: %s %s client %q scope %v: total %d, %d leads", step, kind, id, client, p.ClientIDs, got.Total, want.Total)
				}
			}
		}
	}
}
