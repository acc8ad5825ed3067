package leads_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/workspace"
)

// TestLookupsUseIndexes explains every query that matching, lookups and
// do-not-contact checks send, on both engines, and fails when one scans
// the leads table or walks a whole workspace. These queries run inside
// write transactions: a scan there queues every other write behind it.
func TestLookupsUseIndexes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		b := setup(t, d)
		rec := dbtest.Record(d)
		var ids []string
		for i := 0; i < 40; i++ {
			res, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{
				LinkedInID: str(fmt.Sprintf("li-%d", i)), ProviderID: str(fmt.Sprintf("pr-%d", i)),
				EmailWork: str(fmt.Sprintf("w%d@corp.test", i)), EmailPersonal: str(fmt.Sprintf("p%d@home.test", i)),
				PublicIdentifier: str(fmt.Sprintf("pub-%d", i)), Name: str("Lead"), Company: str("Corp"), Source: str("csv"),
			})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.Lead.ID)
		}
		must := func(_ any, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		queries := rec.During(func() {
			// Matching on each identity, alone, so that each is looked up.
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{LinkedInID: str("li-1"), Headline: str("h")}))
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{ProviderID: str("pr-2"), Headline: str("h")}))
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("W3@corp.test"), Headline: str("h")}))
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailPersonal: str("P4@home.test"), Headline: str("h")}))
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{PublicIdentifier: str("pub-5"), Headline: str("h")}))
			// A new lead with every identity: no match on any, then the
			// do-not-contact and blacklist checks.
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{LinkedInID: str("li-new"), ProviderID: str("pr-new"),
				EmailWork: str("new@corp.test"), EmailPersonal: str("new@home.test"), PublicIdentifier: str("pub-new"), Company: str("Corp")}))
			// Filling identities checks that no other lead holds them.
			must(b.svc.Patch(b.ctx, b.p, ids[6], leads.LeadInput{LinkedInID: str("li-6b"), ProviderID: str("pr-6b")}))
			must(b.svc.Get(b.ctx, b.p, ids[7]))
			for _, f := range []leads.Filter{{Email: "W8@corp.test"}, {Email: "p9@home.test"}, {PublicIdentifier: "pub-10"}, {Source: "csv"}} {
				f.Limit = 50
				must(b.svc.List(b.ctx, b.p, f))
			}
			// Deep pages read their ids from the filter's index, then those leads.
			for _, f := range []leads.Filter{{Source: "csv"}, {PublicIdentifier: "pub-10"}} {
				f.Limit, f.Offset = 50, 5000
				must(b.svc.List(b.ctx, b.p, f))
			}
			must(b.svc.AddSuppressions(b.ctx, b.p, leads.SuppressionsInput{Emails: []string{"w11@corp.test", "P12@home.test"},
				LinkedInIDs: []string{"li-13"}, PublicIdentifiers: []string{"pub-14"}, LeadIDs: ids[15:17]}))
			must(b.svc.Enrich(b.ctx, b.p, leads.EnrichInput{LeadIDs: ids[17:20]}))
			// Several leads by id at once, as the enrolment preview names them.
			must(b.svc.VisibleByIDs(b.ctx, b.p, ids[20:25]))
		})
		dbtest.AssertNoScan(t, d, "leads", "leads_ws", queries)
	})
}

// TestImportUsesIndexes explains what a CSV import's batches send, on both
// engines: the read-ahead of the leads the rows can match (by every
// identity), of their do-not-contact entries and tags, and the bulk update
// of the leads that changed. None may scan the leads table or walk a whole
// workspace.
func TestImportUsesIndexes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		b := importSetup(t, d)
		var seed, file strings.Builder
		seed.WriteString("linkedin id,provider id,email,personal email,linkedin url,company\n")
		file.WriteString("linkedin id,provider id,email,personal email,linkedin url,company\n")
		for i := 0; i < 40; i++ {
			fmt.Fprintf(&seed, "li-%d,pr-%d,w%d@corp.test,p%d@home.test,linkedin.com/in/pub-%d,Corp\n", i, i, i, i, i)
		}
		for i := 20; i < 60; i++ {
			fmt.Fprintf(&file, "li-%d,pr-%d,W%d@corp.test,p%d@home.test,linkedin.com/in/pub-%d,New Corp\n", i, i, i, i, i)
		}
		// Known by their LinkedIn URL alone: matched by public identifier.
		for i := 30; i < 45; i++ {
			fmt.Fprintf(&file, ",,,,linkedin.com/in/pub-%d,Other Corp\n", i)
		}
		if _, err := b.svc.Import(b.ctx, b.p, strings.NewReader(seed.String()), leads.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		rec := dbtest.Record(d)
		var rep *leads.ImportReport
		queries := rec.During(func() {
			var err error
			rep, err = b.svc.Import(b.ctx, b.p, strings.NewReader(file.String()), leads.ImportOptions{TagIDs: []string{b.ids["vip"]}, BatchSize: 25})
			if err != nil {
				t.Fatal(err)
			}
		})
		if rep.Created != 20 || rep.Updated != 35 {
			t.Fatalf("%+v", rep.Report)
		}
		dbtest.AssertNoScan(t, d, "leads", "leads_ws", queries)
		dbtest.AssertNoScan(t, d, "lead_tags", "", queries)
		dbtest.AssertNoScan(t, d, "suppressions", "", queries)
		dbtest.AssertNoScan(t, d, "blacklist", "", queries)
		// Each identity's read-ahead (one statement whatever the batch's
		// size) reads the leads through that identity's own index: on
		// Postgres a plan that walks the workspace by another index
		// instead (as one may on a table the import itself is filling,
		// whose statistics lag behind) is refused too.
		read := map[string]bool{}
		for _, q := range queries {
			if !strings.Contains(q, `FROM leads AS l`) && !strings.Contains(q, `LATERAL (SELECT * FROM leads AS l`) {
				continue
			}
			for _, k := range []string{"linkedin_id", "provider_id", "email_work", "email_personal", "public_identifier"} {
				if !strings.Contains(q, "l."+k+" IS NOT NULL") {
					continue
				}
				read[k] = true
				plan := strings.Join(dbtest.Plan(t, d, q), "\n")
				if !strings.Contains(plan, "leads_"+k+" ") || strings.Contains(plan, "leads_ws") || strings.Contains(plan, "leads_updated") {
					t.Errorf("%s: the read-ahead by %s does not read its index:\n%s", d.Engine, k, plan)
				}
			}
		}
		if len(read) != 5 {
			t.Errorf("%s: read ahead by %v, want all five identities", d.Engine, read)
		}
	})
}

// TestDeepPages reads a page past the offset from which a page finds its
// ids first, and finds the leads a page before that offset ends with.
func TestDeepPages(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		b := setup(t, d)
		const n = 1060
		for i := range n {
			src := "csv"
			if i%30 == 29 {
				src = "event"
			}
			if _, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{LinkedInID: str(fmt.Sprintf("deep-%d", i)), Name: str("Lead"), Source: str(src)}); err != nil {
				t.Fatal(err)
			}
		}
		ids := func(f leads.Filter, limit, offset int) ([]string, int) {
			f.Limit, f.Offset = limit, offset
			page, err := b.svc.List(b.ctx, b.p, f)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, l := range page.Data {
				out = append(out, l.ID)
			}
			return out, page.Total
		}
		for _, f := range []leads.Filter{{}, {Source: "csv"}} {
			// A page before the deep offset, read as it always was, holds
			// the deep page's leads at its end.
			before, total := ids(f, 100, 950)
			deep, deepTotal := ids(f, 10, 1000)
			want := before[min(50, len(before)):min(60, len(before))]
			if len(want) != 10 || strings.Join(deep, ",") != strings.Join(want, ",") || deepTotal != total {
				t.Fatalf("%+v: page at 1000 %v (total %d), want %v (total %d)", f, deep, deepTotal, want, total)
			}
		}
	})
}

// TestDeepPagesFromEitherEnd reads deep pages nearer the newest lead, in
// the middle and nearer the oldest (which walk the index from that end),
// the last partial page and past the end, unfiltered and filtered, and
// finds each page's leads where the whole list, newest first, has them.
func TestDeepPagesFromEitherEnd(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b, ws := setupSpec(t, d, workspace.WorkspaceSpec{
			Name: "acme", Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}}, Stages: []string{"New"},
		})
		c, err := ws.Catalog(b.ctx, b.p)
		is.NoErr(err)
		stage := c.Stages[0].ID
		const n = 2150
		var csv strings.Builder
		csv.WriteString("linkedin id,name,source,stage id\n")
		for i := range n {
			src := "csv"
			if i%30 == 29 {
				src = "event"
			}
			fmt.Fprintf(&csv, "end-%d,Lead %d,%s,%s\n", i, i, src, map[bool]string{true: stage}[i%20 != 3])
		}
		rep, err := b.svc.Import(b.ctx, b.p, strings.NewReader(csv.String()), leads.ImportOptions{})
		is.NoErr(err)
		is.Equal(rep.Created, n)
		// Unfiltered (lead_counts), filtered (counted) and by one stage
		// (lead_facet_counts): each total places the page from either end.
		for _, f := range []leads.Filter{{}, {Source: "csv"}, {StageID: stage}} {
			var all []string
			q := d.NewSelect().Table("leads").Column("id").Where("workspace_id = ?", b.p.WorkspaceID).OrderExpr("id DESC")
			if f.Source != "" {
				q = q.Where("source = ?", f.Source)
			}
			if f.StageID != "" {
				q = q.Where("stage_id = ?", f.StageID)
			}
			is.NoErr(q.Scan(b.ctx, &all))
			total := len(all)
			for _, at := range []struct{ offset, limit int }{
				{1000, 10}, {1001, 50}, {total/2 - 25, 50}, {total / 2, 50}, {total/2 + 1, 7}, {total - 1000, 50},
				{total - 60, 50}, {total - 50, 50}, {total - 3, 50}, {total, 50}, {total + 5, 50},
			} {
				checkPage(t, b, f, at.offset, at.limit, all)
			}
		}
	})
}

// TestSearchPages reads pages of text searches (a broad word, a phrase,
// a short text that SQLite scans for, one that matches nothing), alone
// and with a filter, at the top, in the middle, at the last partial page
// and past the end: each page holds the leads the whole list of matches,
// newest first, has there, and the total is every match's.
func TestSearchPages(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d)
		var csv strings.Builder
		csv.WriteString("linkedin id,name,company,headline,source\n")
		for i := range 400 {
			src := "csv"
			if i%3 == 0 {
				src = "event"
			}
			fmt.Fprintf(&csv, "s-%d,Lead %d,Corp %d,Head of Sales %d,%s\n", i, i, i%7, i%11, src)
		}
		_, err := b.svc.Import(b.ctx, b.p, strings.NewReader(csv.String()), leads.ImportOptions{})
		is.NoErr(err)
		for _, text := range []string{"lead 1", "CORP 3", "of sales 1", "ad", "nothing like it"} {
			for _, f := range []leads.Filter{{Q: text}, {Q: text, Source: "event"}} {
				// Newest first: SQLite's trigram index returns its matches
				// in insertion order (texts of three characters or more).
				order := "id DESC"
				if d.Engine == db.SQLite && len(text) >= 3 {
					order = "seq DESC"
				}
				var all []string
				p := "%" + strings.ToLower(text) + "%"
				q := d.NewSelect().Table("leads").Column("id").Where("workspace_id = ?", b.p.WorkspaceID).
					Where("(lower(name) LIKE ? OR lower(company) LIKE ? OR lower(headline) LIKE ?)", p, p, p).OrderExpr(order)
				if f.Source != "" {
					q = q.Where("source = ?", f.Source)
				}
				is.NoErr(q.Scan(b.ctx, &all))
				total := len(all)
				for _, at := range []struct{ offset, limit int }{{0, 50}, {0, 3}, {total / 2, 7}, {max(total-5, 0), 50}, {total, 50}, {total + 10, 50}} {
					checkPage(t, b, f, at.offset, at.limit, all)
				}
			}
		}
		// A search of three characters or more reads the matches from the
		// trigram index, not by walking the workspace.
		queries := dbtest.Record(d).During(func() {
			_, err := b.svc.List(b.ctx, b.p, leads.Filter{Q: "lead 1", Source: "event", Limit: 50})
			is.NoErr(err)
		})
		dbtest.AssertNoScan(t, d, "leads", "leads_ws", queries)
	})
}

// checkPage lists f's page at offset and fails unless it holds the leads
// all (every match of f, in the list's order) has there, and its total
// is len(all).
func checkPage(t *testing.T, b bundle, f leads.Filter, offset, limit int, all []string) {
	t.Helper()
	f.Limit, f.Offset = limit, offset
	page, err := b.svc.List(b.ctx, b.p, f)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, l := range page.Data {
		got = append(got, l.ID)
	}
	want := all[min(offset, len(all)):min(offset+limit, len(all))]
	if strings.Join(got, ",") != strings.Join(want, ",") || page.Total != len(all) {
		t.Fatalf("%+v: page %v (total %d), want %v (total %d)", f, got, page.Total, want, len(all))
	}
}

// TestFacetTotalsReadCounts lists leads by one stage and by one tag, alone,
// with a client and for a client viewer, on both engines: each total is
// read from lead_facet_counts through its key, no query counts leads, and
// no page scans the leads or walks the workspace.
func TestFacetTotalsReadCounts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		b, ws := setupSpec(t, d, workspace.WorkspaceSpec{
			Name: "acme", Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}},
			Clients: []string{"Globex", "Initech"}, Stages: []string{"New"}, Tags: []string{"vip"},
		})
		c, err := ws.Catalog(b.ctx, b.p)
		if err != nil {
			t.Fatal(err)
		}
		globex, stage, tag := c.Clients[0].ID, c.Stages[0].ID, c.Tags[0].ID
		for i := range 40 {
			client := []*string{nil, &c.Clients[0].ID, &c.Clients[1].ID}[i%3]
			res, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{LinkedInID: str(fmt.Sprintf("li-%d", i)), ClientID: client, StageID: &stage})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.svc.AddTags(b.ctx, b.p, res.Lead.ID, []string{tag}); err != nil {
				t.Fatal(err)
			}
		}
		viewer := b.p
		viewer.Role, viewer.ClientIDs = apikit.RoleClientViewer, []string{globex}
		rec := dbtest.Record(d)
		queries := rec.During(func() {
			for _, p := range []apikit.Principal{b.p, viewer} {
				for _, f := range []leads.Filter{{StageID: stage}, {StageID: stage, ClientID: globex}, {TagID: tag}, {TagID: tag, ClientID: globex}} {
					f.Limit = 10
					page, err := b.svc.List(b.ctx, p, f)
					if err != nil {
						t.Fatal(err)
					}
					if want := map[bool]int{true: 40, false: 13}[f.ClientID == "" && !p.Scoped()]; page.Total != want {
						t.Fatalf("%+v for %v: total %d, want %d", f, p.ClientIDs, page.Total, want)
					}
				}
			}
		})
		read := 0
		for _, q := range queries {
			if strings.Contains(strings.ToLower(q), "count(") {
				t.Errorf("%s: a facet's total counts leads: %s", d.Engine, q)
			}
			if strings.Contains(q, "lead_facet_counts") {
				read++
			}
		}
		if read != 8 {
			t.Errorf("%s: %d totals read from lead_facet_counts, want 8", d.Engine, read)
		}
		dbtest.AssertNoScan(t, d, "leads", "leads_ws", queries)
		dbtest.AssertNoScan(t, d, "lead_facet_counts", "", queries)
	})
}

// TestRejectedRowsReadByImport: a job's rejected rows are read, a page at
// a time and for the CSV download, through their key (import, line),
// never by a scan of every import's rejected rows.
func TestRejectedRowsReadByImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		b := importSetup(t, d)
		var file strings.Builder
		file.WriteString("email,name\n")
		for i := range 30 {
			fmt.Fprintf(&file, "not-an-address-%d,Bad %d\n", i, i)
		}
		for range 2 { // two jobs, so that a scan would show
			job, err := b.svc.StartImport(b.ctx, b.p, io.NopCloser(strings.NewReader(file.String())), leads.ImportOptions{BatchSize: 10},
				slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if err := b.svc.DrainImports(context.Background()); err != nil {
				t.Fatal(err)
			}
			rec := dbtest.Record(d)
			queries := rec.During(func() {
				page, total, err := b.svc.ImportJobPage(b.ctx, b.p, job.ID, 10, 10)
				if err != nil || total != 30 || len(page.Errors) != 10 {
					t.Fatalf("page: %d of %d rows (%v)", len(page.Errors), total, err)
				}
				if err := b.svc.WriteRejectedCSV(b.ctx, b.p, job.ID, io.Discard); err != nil {
					t.Fatal(err)
				}
			})
			dbtest.AssertNoScan(t, d, "import_rejects", "", queries)
		}
	})
}
