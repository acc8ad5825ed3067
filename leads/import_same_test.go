package leads_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/workspace"
)

// sameHeader are the columns of TestImportSameAsUpserts' file, in the
// order of a row's cells; Notes maps to custom.notes.
var sameHeader = []string{"Email", "Personal Email", "LinkedIn URL", "LinkedIn Id", "Provider Id", "Public Identifier", "Name",
	"Company", "Title", "Source", "List Id", "Stage Id", "Notes"}

// sameRows are its rows: "{list:Hot}" and "{stage:Won}" stand for the
// workspace's ids. They match seeded leads by every identity, repeat and
// update people within the file, refuse bad and conflicting rows, fill
// only empty identities, and create suppressed and blacklisted leads.
var sameRows = [][]string{
	{"new1@x.test", "", "https://www.linkedin.com/in/New-One", "", "", "", "New One", "Acme", "CTO", "csv", "{list:Hot}", "", "a"},
	{"SEED1@x.test", "", "", "", "", "", "", "Acme 2", "", "", "", "{stage:Won}", ""},                // by work email
	{"", "seed2@home.test", "", "", "", "", "Seed Two", "", "", "", "{list:Cold}", "", "b"},          // by personal email
	{"", "", "", "li-seed3", "", "", "", "", "VP", "", "", "", ""},                                   // by LinkedIn id
	{"", "", "", "", "pr-seed4", "", "", "", "", "fair", "", "", ""},                                 // by provider id
	{"", "", "linkedin.com/in/seed5", "", "", "", "", "Five Corp", "", "", "", "", ""},               // by public identifier
	{"seed6@x.test", "seed1@home.test", "", "", "", "", "", "", "", "", "", "", ""},                  // personal email held by seed1: kept empty
	{"", "", "", "li-seed3", "pr-seed4", "", "", "", "", "", "", "", ""},                             // seed3 with seed4's provider id: refused
	{"not-an-email", "", "", "", "", "", "", "", "", "", "", "", ""},                                 // refused
	{"", "", "https://example.com/in/x", "", "", "", "", "", "", "", "", "", ""},                     // refused
	{"", "", "", "", "", "", "Nobody", "Acme", "", "", "", "", ""},                                   // no identity: refused
	{"gone@x.test", "", "", "", "", "", "Gone", "", "", "", "", "", ""},                              // do-not-contact
	{"eve@umbrella.test", "", "", "", "", "", "Eve", "", "", "", "", "", ""},                         // blacklisted domain
	{"ned@x.test", "", "", "", "", "", "Ned", "Initech", "", "", "", "", ""},                         // blacklisted company
	{"NEW1@x.test", "", "", "li-new1", "", "", "", "", "CEO", "", "{list:Cold}", "{stage:Won}", "c"}, // new1 again, in the file
	{"new1@x.test", "", "", "", "", "", "", "", "CEO", "", "", "", "c"},                              // unchanged
	{"new2@x.test", "", "", "", "pr-new2", "", "New Two", "", "", "", "", "", ""},
	{"", "", "", "li-new3", "", "new-1", "", "", "", "", "", "", ""},               // public identifier of new1: not unique
	{"new2@x.test", "seed1@home.test", "", "", "", "", "", "", "", "", "", "", ""}, // personal email held: kept empty
	{"seed2@x.test", "", "", "", "", "", "Seed Two B", "", "", "", "", "", "d"},    // seed2's work email, filled
	{"", "seed2@home.test", "", "", "", "", "", "", "", "", "", "", "d"},           // unchanged now
}

// TestImportSameAsUpserts imports one file through the batch path (in
// batches of 3 and of 1,000 rows) and sends the same rows one by one
// through Upsert and AddTags, each on a database of its own set up alike,
// and compares the leads, their tags, the events and the leads' counts.
func TestImportSameAsUpserts(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			single := sameWorkspace(t, engine)
			for _, row := range sameRows {
				in := single.input(row)
				res, err := single.svc.Upsert(single.ctx, single.p, in)
				if err != nil {
					continue
				}
				if _, err := single.svc.AddTags(single.ctx, single.p, res.Lead.ID, []string{single.ids["vip"]}); err != nil {
					t.Fatal(err)
				}
			}
			want := single.state(t)
			if len(want.leads) != 12 || len(want.events) < 30 {
				t.Fatalf("the single upserts wrote %d leads and %d events", len(want.leads), len(want.events))
			}
			for _, size := range []int{3, 1000} {
				batch := sameWorkspace(t, engine)
				rep, err := batch.svc.Import(batch.ctx, batch.p, strings.NewReader(batch.file(t)), leads.ImportOptions{
					ClientID: batch.ids["Globex"], TagIDs: []string{batch.ids["vip"]}, Map: []string{"Notes=custom.notes"}, BatchSize: size,
				})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Rejected != 4 {
					t.Errorf("batches of %d: %+v %+v", size, rep.Report, rep.Errors)
				}
				got := batch.state(t)
				for _, part := range []struct {
					name      string
					got, want []string
				}{{"leads", got.leads, want.leads}, {"events", got.events, want.events}, {"counts", got.counts, want.counts}} {
					if !slices.Equal(part.got, part.want) {
						t.Errorf("batches of %d: the %s differ from single upserts:\n%s", size, part.name, diffLines(part.got, part.want))
					}
				}
			}
		})
	}
}

type sameBundle struct {
	importBundle
	d     *db.DB
	names map[string]string // id -> kind:name
}

// sameWorkspace is a new database with the workspace, its seeded leads
// and a do-not-contact entry.
func sameWorkspace(t *testing.T, engine db.Engine) sameBundle {
	d := dbtest.Open(t, engine)
	b, ws := setupSpec(t, d, workspace.WorkspaceSpec{
		Name: "acme", Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}},
		Clients: []string{"Globex"}, Tags: []string{"vip"}, Lists: []string{"Hot", "Cold"}, Stages: []string{"Won"},
		Blacklist: workspace.BlacklistSpec{Domains: []string{"umbrella.test"}, Companies: []string{"Initech"}},
	})
	c, err := ws.Catalog(b.ctx, b.p)
	if err != nil {
		t.Fatal(err)
	}
	sb := sameBundle{importBundle: importBundle{bundle: b, ws: ws, ids: map[string]string{}}, d: d, names: map[string]string{}}
	for kind, g := range map[string][]workspace.Named{"client": c.Clients, "tag": c.Tags, "list": c.Lists, "stage": c.Stages} {
		for _, n := range g {
			sb.ids[n.Name] = n.ID
			sb.names[n.ID] = kind + ":" + n.Name
		}
	}
	for _, in := range []leads.LeadInput{
		{EmailWork: str("seed1@x.test"), EmailPersonal: str("seed1@home.test"), Name: str("Seed One")},
		{EmailPersonal: str("seed2@home.test"), Company: str("Two Corp")},
		{LinkedInID: str("li-seed3"), Name: str("Seed Three")},
		{ProviderID: str("pr-seed4")},
		{PublicIdentifier: str("seed5"), Headline: str("Founder")},
	} {
		if _, err := b.svc.Upsert(b.ctx, b.p, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.svc.AddSuppressions(b.ctx, b.p, leads.SuppressionsInput{Emails: []string{"gone@x.test"}}); err != nil {
		t.Fatal(err)
	}
	return sb
}

// cell is a row's cell with the workspace's ids in place of their names.
func (b sameBundle) cell(v string) string {
	if ref, ok := strings.CutPrefix(v, "{"); ok {
		_, name, _ := strings.Cut(strings.TrimSuffix(ref, "}"), ":")
		return b.ids[name]
	}
	return v
}

func (b sameBundle) file(t *testing.T) string {
	var sb strings.Builder
	w := csv.NewWriter(&sb)
	if err := w.Write(sameHeader); err != nil {
		t.Fatal(err)
	}
	for _, row := range sameRows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = b.cell(v)
		}
		if err := w.Write(cells); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return sb.String()
}

// input is the lead input a row gives, as the import maps it.
func (b sameBundle) input(row []string) leads.LeadInput {
	v := func(i int) *string {
		if s := b.cell(row[i]); s != "" {
			return &s
		}
		return nil
	}
	in := leads.LeadInput{EmailWork: v(0), EmailPersonal: v(1), LinkedInURL: v(2), LinkedInID: v(3), ProviderID: v(4),
		PublicIdentifier: v(5), Name: v(6), Company: v(7), Headline: v(8), Source: v(9), ListID: v(10), StageID: v(11),
		ClientID: str(b.ids["Globex"])}
	if n := v(12); n != nil {
		in.Custom = map[string]any{"notes": *n}
	}
	return in
}

type sameState struct{ leads, events, counts []string }

// state is the workspace's leads (with their tags), events and counts as
// sorted lines, with ids given as names: the leads' own ids are replaced
// by their identities.
func (b sameBundle) state(t *testing.T) sameState {
	t.Helper()
	var ls []leads.Lead
	if err := b.d.NewSelect().Model(&ls).Where("l.workspace_id = ?", b.p.WorkspaceID).Scan(b.ctx); err != nil {
		t.Fatal(err)
	}
	who := map[string]string{}
	var st sameState
	for _, l := range ls {
		who[l.ID] = fmt.Sprintf("%s|%s|%s|%s|%s", deref(l.EmailWork), deref(l.EmailPersonal), deref(l.LinkedInID), deref(l.ProviderID), deref(l.PublicIdentifier))
	}
	for _, l := range ls {
		var tags []string
		if err := b.d.NewSelect().Table("lead_tags").Column("tag_id").Where("lead_id = ?", l.ID).Scan(b.ctx, &tags); err != nil {
			t.Fatal(err)
		}
		for i := range tags {
			tags[i] = b.names[tags[i]]
		}
		slices.Sort(tags)
		l.ID, l.WorkspaceID = who[l.ID], ""
		for _, ref := range []**string{&l.ClientID, &l.ListID, &l.StageID} {
			if *ref != nil {
				*ref = str(b.names[**ref])
			}
		}
		j, err := json.Marshal(struct {
			leads.Lead
			Tags []string
		}{l, tags})
		if err != nil {
			t.Fatal(err)
		}
		st.leads = append(st.leads, string(j))
	}
	var evs []struct {
		LeadID   string `bun:"lead_id"`
		ClientID string `bun:"client_id"`
		Kind     string `bun:"kind"`
		MemberID string `bun:"member_id"`
		Data     string `bun:"data"`
	}
	if err := b.d.NewSelect().Table("events").Column("lead_id", "client_id", "kind", "member_id", "data").
		Where("workspace_id = ?", b.p.WorkspaceID).Scan(b.ctx, &evs); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		data := e.Data
		for id, name := range b.names {
			data = strings.ReplaceAll(data, id, name)
		}
		var norm any // the same JSON, whatever its spacing
		if err := json.Unmarshal([]byte(data), &norm); err != nil {
			t.Fatal(err)
		}
		nd, _ := json.Marshal(norm)
		st.events = append(st.events, fmt.Sprintf("%s %s %s member=%v %s", who[e.LeadID], b.names[e.ClientID], e.Kind, e.MemberID == b.p.MemberID, nd))
	}
	var counts []struct {
		ClientKey string `bun:"client_key"`
		N         int    `bun:"n"`
	}
	if err := b.d.NewSelect().Table("lead_counts").Column("client_key", "n").Where("workspace_id = ?", b.p.WorkspaceID).
		Scan(b.ctx, &counts); err != nil {
		t.Fatal(err)
	}
	for _, c := range counts {
		st.counts = append(st.counts, fmt.Sprintf("%s %d", b.names[c.ClientKey], c.N))
	}
	// The full-text search finds the same leads.
	for _, q := range []string{"Acme", "CEO", "new1", "Seed"} {
		page, err := b.svc.List(b.ctx, b.p, leads.Filter{Q: q, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		st.counts = append(st.counts, fmt.Sprintf("search %q: %d", q, page.Total))
	}
	slices.Sort(st.leads)
	slices.Sort(st.events)
	slices.Sort(st.counts)
	return st
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// diffLines lists the lines only one side has.
func diffLines(got, want []string) string {
	var out []string
	for _, g := range got {
		if !slices.Contains(want, g) {
			out = append(out, "  batch only:  "+g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			out = append(out, "  single only: "+w)
		}
	}
	return strings.Join(out, "\n")
}
