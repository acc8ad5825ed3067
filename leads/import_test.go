package leads_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/workspace"
)

type importBundle struct {
	bundle
	ws  *workspace.Service
	ids map[string]string
}

func importSetup(t testing.TB, d *db.DB) importBundle {
	t.Helper()
	b, ws := setupSpec(t, d, workspace.WorkspaceSpec{
		Name: "acme", Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}},
		Clients: []string{"Globex"}, Tags: []string{"vip", "fair"},
		Blacklist: workspace.BlacklistSpec{Domains: []string{"umbrella.test"}},
	})
	c, err := ws.Catalog(b.ctx, b.p)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, g := range [][]workspace.Named{c.Clients, c.Tags} {
		for _, n := range g {
			ids[n.Name] = n.ID
		}
	}
	return importBundle{bundle: b, ws: ws, ids: ids}
}

func (b importBundle) find(t *testing.T, email string) *leads.Lead {
	t.Helper()
	page, err := b.svc.List(b.ctx, b.p, leads.Filter{Email: email, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 {
		t.Fatalf("%d leads with %s", len(page.Data), email)
	}
	return &page.Data[0]
}

func TestImportCSV(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		b := importSetup(t, d)
		is := is.New(t)
		// An existing lead, matched by email: its company is kept (sent),
		// its work email never overwritten.
		_, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("ann@acme.test"), Name: str("Ann"), Headline: str("CTO")})
		is.NoErr(err)
		_, err = b.svc.AddSuppressions(b.ctx, b.p, leads.SuppressionsInput{Emails: []string{"gone@acme.test"}})
		is.NoErr(err)

		csv := "\ufeffFirst Name;Last Name;E-Mail;LinkedIn URL;Company;Job Title;Phone;Notes\n" +
			"Ann;Lee;ANN@acme.test;;Acme;CTO;;\n" + // matches, company changes
			"Bob;Ray;bob@acme.test;https://www.linkedin.com/in/Bob-Ray;Acme;CEO;+49 1;\"two\nlines\"\n" +
			";;not-an-email;;;;;\n" + // rejected: bad email
			"Cy;;cy@acme.test;https://example.com/in/cy;;;;\n" + // rejected: not a LinkedIn URL
			"Dee;;;https://linkedin.com/in/dee;;;;\n" +
			";;;;;;;\n" + // blank: skipped
			"Gone;;gone@acme.test;;;;;\n" + // do-not-contact: created, suppressed
			"Bob;Ray;BOB@acme.test;;;;;\n" + // the same person again: unchanged
			"Ev;;ev@umbrella.test;;Umbrella;;;\n" // blacklisted domain: created, suppressed
		rep, err := b.svc.Import(b.ctx, b.p, strings.NewReader(csv), leads.ImportOptions{
			Map: []string{"Notes=custom.notes"}, TagIDs: []string{b.ids["vip"]}, ClientID: b.ids["Globex"], BatchSize: 3,
		})
		is.NoErr(err)
		is.Equal(rep.Report, leads.Report{Rows: 8, Created: 4, Updated: 1, Unchanged: 1, Rejected: 2})
		is.Equal(len(rep.Errors), 2)
		is.Equal(rep.Errors[0].Line, 5) // the quoted newline spans lines 3 and 4
		is.True(strings.Contains(rep.Errors[0].Reason, "not-an-email"))
		is.Equal(rep.Errors[1].Line, 6)
		is.Equal(rep.Errors[1].Code, "E_PAYLOAD_INVALID")
		is.Equal(rep.Columns["Phone"], "custom.phone")
		is.Equal(rep.Columns["E-Mail"], "email_work")

		ann := b.find(t, "ann@acme.test")
		is.Equal(*ann.Company, "Acme")
		is.Equal(*ann.EmailWork, "ann@acme.test") // never overwritten
		is.Equal(*ann.Name, "Ann Lee")
		is.Equal(*ann.ClientID, b.ids["Globex"]) // filled: it had none
		bob := b.find(t, "bob@acme.test")
		is.Equal(*bob.PublicIdentifier, "bob-ray")
		is.Equal(bob.Custom["notes"], "two\nlines")
		is.Equal(bob.Custom["phone"], "+49 1")
		is.Equal(*bob.Headline, "CEO")
		det, err := b.svc.Get(b.ctx, b.p, bob.ID)
		is.NoErr(err)
		is.Equal(len(det.Tags), 1)
		is.Equal(det.Tags[0].Name, "vip")
		is.True(b.find(t, "gone@acme.test").DoNotContact)
		is.True(b.find(t, "ev@umbrella.test").DoNotContact)
		tl, err := b.svc.Timeline(b.ctx, b.p, bob.ID, 10)
		is.NoErr(err)
		var kinds []string
		for _, e := range tl {
			kinds = append(kinds, e.Kind)
		}
		is.True(strings.Contains(strings.Join(kinds, " "), "lead.created"))
		is.True(strings.Contains(strings.Join(kinds, " "), "lead.tagged"))

		// Again: every row unchanged (the tag is already there), the same
		// two rows rejected.
		rep, err = b.svc.Import(b.ctx, b.p, strings.NewReader(csv), leads.ImportOptions{
			Map: []string{"Notes=custom.notes"}, TagIDs: []string{b.ids["vip"]}, ClientID: b.ids["Globex"],
		})
		is.NoErr(err)
		is.Equal(rep.Report, leads.Report{Rows: 8, Unchanged: 6, Rejected: 2})
	})
}

func TestImportDryRunAndSeparators(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		b := importSetup(t, d)
		is := is.New(t)
		for _, sep := range []string{",", ";", "\t"} {
			csv := strings.Join([]string{"Email", "Full Name", "LinkedIn"}, sep) + "\n" +
				strings.Join([]string{"a@x.test", "\"A, Jr; x\"", "linkedin.com/in/a"}, sep) + "\r\n" +
				strings.Join([]string{"b@x.test", "B", ""}, sep) + "\n" +
				strings.Join([]string{"a@x.test", "A2", ""}, sep) + "\n" // the first row again, in the same file
			rep, err := b.svc.Import(b.ctx, b.p, strings.NewReader(csv), leads.ImportOptions{DryRun: true, BatchSize: 2})
			is.NoErr(err)
			is.Equal(rep.Report, leads.Report{Rows: 3, Created: 2, Updated: 1})
			page, err := b.svc.List(b.ctx, b.p, leads.Filter{Limit: 10})
			is.NoErr(err)
			is.Equal(len(page.Data), 0) // a dry run writes nothing
		}
		csv := "email\ta b\nz@x.test\tx\n"
		rep, err := b.svc.Import(b.ctx, b.p, strings.NewReader(csv), leads.ImportOptions{})
		is.NoErr(err)
		is.Equal(rep.Created, 1)
		is.Equal(rep.Columns["a b"], "-") // unknown: left out
		is.Equal(len(b.find(t, "z@x.test").Custom), 0)
	})
}

func TestImportRefusesBadOptions(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		b := importSetup(t, d)
		for _, c := range []struct {
			csv  string
			opt  leads.ImportOptions
			want string
		}{
			{"", leads.ImportOptions{}, "empty"},
			{"Name,Company\nA,B\n", leads.ImportOptions{}, "identity"},
			{"Email,Work Email\na@x.test,b@x.test\n", leads.ImportOptions{}, "both map to email_work"},
			{"Email\na@x.test\n", leads.ImportOptions{Map: []string{"Fax=custom.fax"}}, "does not have"},
			{"Email\na@x.test\n", leads.ImportOptions{Map: []string{"Email=phone"}}, "not a lead field"},
			{"Email\na@x.test\n", leads.ImportOptions{TagIDs: []string{apikit.NewID()}}, "not one of this workspace's tags"},
			{"Email\na@x.test\n", leads.ImportOptions{ClientID: apikit.NewID()}, "not one of this workspace's clients"},
		} {
			_, err := b.svc.Import(b.ctx, b.p, strings.NewReader(c.csv), c.opt)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%q %+v: got %v, want %q", c.csv, c.opt, err, c.want)
			}
		}
	})
}

// TestImportMatchesUpsert imports rows and upserts the same rows one by one
// in another workspace-free copy, and compares the leads.
func TestImportMatchesUpsert(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := importSetup(t, d)
		var sb strings.Builder
		sb.WriteString("email,linkedin,company,title\n")
		for i := 0; i < 30; i++ {
			if i%3 == 0 {
				_, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str(fmt.Sprintf("u%d@x.test", i)), Company: str("Old")})
				is.NoErr(err)
			}
			fmt.Fprintf(&sb, "u%d@x.test,https://linkedin.com/in/u%d,New,T%d\n", i, i%25, i)
		}
		rep, err := b.svc.Import(b.ctx, b.p, strings.NewReader(sb.String()), leads.ImportOptions{BatchSize: 7})
		is.NoErr(err)
		// u25..u29 take public identifiers u0..u4 that u0..u4 hold: public
		// identifiers are not unique, so they are created all the same.
		is.Equal(rep.Report, leads.Report{Rows: 30, Created: 20, Updated: 10})
		l := b.find(t, "u3@x.test")
		is.Equal(*l.Company, "New")
		is.Equal(*l.PublicIdentifier, "u3")
	})
}
