package leads_test

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
)

// quote writes v as one CSV field.
func quote(v string) string { return `"` + strings.ReplaceAll(v, `"`, `""`) + `"` }

// TestImportKeepsTheAPILimits: a row holds what POST /v1/leads would hold
// or is rejected with its line and the reason Upsert gives for the same
// input; line breaks and tabs in one-line cells become spaces and are
// counted; files as people export them (a cell with Alt+Enter, rows with
// only a LinkedIn URL or only an email) import.
func TestImportKeepsTheAPILimits(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		b := importSetup(t, d)
		is := is.New(t)
		long := strings.Repeat("x", 400_000) // 400 KB: far above name's 500 characters
		rows := []struct {
			name, email, linkedin, title, notes string
			want                                string // "" imported, else part of the rejection's reason
		}{
			{"Ann Lee", "ann@x.test", "", "Head of Sales\nEMEA", "", ""},                          // Alt+Enter (LF)
			{"Bob\r\nRay", "bob@x.test", "", "CTO \r\n\t Berlin", "first\r\nsecond", ""},          // CRLF, tabs, spaces around
			{"", "", "https://www.linkedin.com/in/only-linkedin", "", "", ""},                     // only a LinkedIn URL
			{"", "only-email@x.test", "", "", "", ""},                                             // only an email
			{long, "long@x.test", "", "", "", "name has 400000 characters; it takes at most 500"}, // the 50 MB name, smaller
			{"Cy", strings.Repeat("c", 330) + "@x.test", "", "", "", "email_work has 337 characters; it takes at most 320"},
			{"Dee", "dee@x.test", "", "", strings.Repeat("n", 17<<10), "custom fields would take"}, // custom over 16 KiB
			{"Ed\x00", "ed@x.test", "", "", "", "control character (U+0000)"},
			{"Fay", "fay@x.test", "", "CEO\u2028Berlin", "", "line separator"},                               // a break that is not CR, LF or tab
			{"Gus", "gus@x.test", "", "Chief \x7f", "", "delete character"},                                  // a control character stays refused
			{"Hal\xff", "hal@x.test", "", "", "", "cannot be stored"},                                        // not UTF-8
			{"Ivy", "ivy@x.test", "linkedin.com/in/" + strings.Repeat("i", 600), "", "", "linkedin_url has"}, // over 500 characters
		}
		var sb strings.Builder
		sb.WriteString("Name,Email,LinkedIn URL,Title,Notes\n")
		for _, r := range rows {
			sb.WriteString(strings.Join([]string{quote(r.name), quote(r.email), quote(r.linkedin), quote(r.title), quote(r.notes)}, ",") + "\r\n")
		}
		rep, err := b.svc.Import(b.ctx, b.p, strings.NewReader(sb.String()), leads.ImportOptions{Map: []string{"Notes=custom.notes"}, BatchSize: 3})
		is.NoErr(err)

		rejected := 0
		for _, r := range rows {
			if r.want != "" {
				rejected++
			}
		}
		is.Equal(rep.Report, leads.Report{Rows: len(rows), Created: len(rows) - rejected, Rejected: rejected, Normalized: 2})
		is.Equal(len(rep.Errors), rejected)
		// Lines count the line breaks inside quoted cells: each row starts
		// where the file says.
		line, next := 2, 0
		for _, r := range rows {
			at := line
			line += 1 + strings.Count(r.name+r.email+r.linkedin+r.title+r.notes, "\n")
			if r.want == "" {
				continue
			}
			e := rep.Errors[next]
			next++
			if e.Line != at || !strings.Contains(e.Reason, r.want) || len(e.Reason) > 300 {
				t.Fatalf("row at line %d: got line %d %s %.300q, want %q", at, e.Line, e.Code, e.Reason, r.want)
			}
			// One rule: Upsert refuses the row's input with the same answer.
			in := leads.LeadInput{Name: str(r.name), EmailWork: str(r.email), LinkedInURL: str(r.linkedin), Headline: str(r.title)}
			if r.notes != "" {
				in.Custom = map[string]any{"notes": r.notes}
			}
			_, err := b.svc.Upsert(b.ctx, b.p, in)
			var ae *apikit.Error
			is.True(errors.As(err, &ae))
			is.Equal(string(ae.Code), e.Code)
			is.Equal(ae.Message, e.Reason)
		}

		ann := b.find(t, "ann@x.test")
		is.Equal(*ann.Headline, "Head of Sales EMEA")
		bob := b.find(t, "bob@x.test")
		is.Equal(*bob.Name, "Bob Ray")
		is.Equal(*bob.Headline, "CTO Berlin")
		is.Equal(bob.Custom["notes"], "first\nsecond") // custom keeps its line breaks (CSV reads CRLF in a cell as LF)
		b.find(t, "only-email@x.test")
		page, err := b.svc.List(b.ctx, b.p, leads.Filter{PublicIdentifier: "only-linkedin", Limit: 5})
		is.NoErr(err)
		is.Equal(page.Total, 1)

		// The API's own callers keep getting line breaks refused.
		_, err = b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("api@x.test"), Headline: str("Head of Sales\nEMEA")})
		is.True(err != nil && strings.Contains(err.Error(), "line feed"))
	})
}

// TestImportCustomLimits: custom's bounds hold for imported rows: more
// fields than a request takes, and a stored object past its size.
func TestImportCustomLimits(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		b := importSetup(t, d)
		is := is.New(t)
		header := []string{"Email"}
		var maps []string
		for i := range leads.MaxCustomKeys + 1 {
			header = append(header, fmt.Sprintf("F%d", i))
			maps = append(maps, fmt.Sprintf("F%d=custom.f%d", i, i))
		}
		full := append([]string{"full@x.test"}, strings.Split(strings.Repeat("v,", leads.MaxCustomKeys+1), ",")[:leads.MaxCustomKeys+1]...)
		few := append([]string{"few@x.test", "a", "b"}, make([]string, leads.MaxCustomKeys-1)...)
		file := strings.Join(header, ",") + "\n" + strings.Join(full, ",") + "\n" + strings.Join(few, ",") + "\n"
		rep, err := b.svc.Import(b.ctx, b.p, strings.NewReader(file), leads.ImportOptions{Map: maps})
		is.NoErr(err)
		is.Equal(rep.Report, leads.Report{Rows: 2, Created: 1, Rejected: 1})
		is.Equal(rep.Errors[0].Line, 2)
		is.Equal(rep.Errors[0].Code, string(apikit.EPayloadInvalid))
		is.True(strings.Contains(rep.Errors[0].Reason, "custom sends 101 fields; a request takes at most 100"))
		is.Equal(len(b.find(t, "few@x.test").Custom), 2)
	})
}

// TestImportJobListsEveryRejectedRow: a job keeps every rejected row, not
// the first 100: pages of GET /v1/imports/{id} and the CSV download list
// them all, in line order.
func TestImportJobListsEveryRejectedRow(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		t.Parallel()
		b := importSetup(t, d)
		is := is.New(t)
		const bad = 260
		var sb strings.Builder
		sb.WriteString("Email,Name\n")
		for i := range bad + 20 {
			if i%14 == 0 {
				fmt.Fprintf(&sb, "good%d@x.test,\"Good\n%d\"\n", i, i) // two lines
			} else {
				fmt.Fprintf(&sb, "bad%d,Bad\n", i)
			}
		}
		job, err := b.svc.StartImport(b.ctx, b.p, &gatedFile{first: sb.String()}, leads.ImportOptions{BatchSize: 7}, slog.New(slog.DiscardHandler))
		is.NoErr(err)
		is.NoErr(b.svc.DrainImports(context.Background()))

		got, total, err := b.svc.ImportJobPage(b.ctx, b.p, job.ID, 200, 0)
		is.NoErr(err)
		is.Equal(got.Status, leads.ImportSucceeded)
		is.Equal([]int{got.Rows, got.Created, got.Rejected, got.Normalized}, []int{bad + 20, 20, bad, 20})
		is.Equal(total, bad)
		var lines []int
		for offset := 0; offset < total; offset += 90 {
			pg, n, err := b.svc.ImportJobPage(b.ctx, b.p, job.ID, 90, offset)
			is.NoErr(err)
			is.Equal(n, bad)
			for _, e := range pg.Errors {
				lines = append(lines, e.Line)
				is.Equal(e.Code, string(apikit.EPayloadInvalid))
			}
		}
		is.Equal(len(lines), bad)
		for i := 1; i < len(lines); i++ {
			is.True(lines[i] > lines[i-1])
		}
		first, err := b.svc.ImportJob(b.ctx, b.p, job.ID)
		is.NoErr(err)
		is.Equal(len(first.Errors), leads.DefaultImportErrors)
		_, _, err = b.svc.ImportJobPage(b.ctx, b.p, job.ID, apikit.MaxLimit+1, 0)
		is.Equal(apikit.ErrorCode(err), string(apikit.EPayloadInvalid))

		var out strings.Builder
		is.NoErr(b.svc.WriteRejectedCSV(b.ctx, b.p, job.ID, &out))
		recs, err := csv.NewReader(strings.NewReader(out.String())).ReadAll()
		is.NoErr(err)
		is.Equal(len(recs), bad+1)
		is.Equal(recs[0], []string{"line", "code", "reason"})
		for i, r := range recs[1:] {
			is.Equal(r[0], strconv.Itoa(lines[i]))
			is.True(strings.Contains(r[2], "is not an email address"))
		}
	})
}
