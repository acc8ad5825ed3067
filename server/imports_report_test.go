package server

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// drainImport waits for the server's background imports to end, without
// polling, and returns the job.
func (e *env) drainImport(key, id string) map[string]any {
	e.t.Helper()
	if err := e.srv.leads.DrainImports(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	r := e.call("GET", "/v1/imports/"+id, key, nil)
	if r.Status != 200 {
		e.t.Fatalf("GET import: %d %s", r.Status, r.Raw)
	}
	return r.data()
}

// TestImportRowsKeepTheAPILimits: a file as people bring it imports over
// HTTP under POST /v1/leads's limits: a cell written with Alt+Enter is
// flattened and counted, a name past the limit is rejected with its line
// (POST /v1/leads refuses the same value), and no row answers 5xx.
func TestImportRowsKeepTheAPILimits(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		t.Parallel()
		is := is.New(t)
		long := strings.Repeat("n", 300_000)
		file := "Name,Email,LinkedIn URL,Title,Notes\r\n" +
			"\"Ann\r\nLee\",ann@acme.test,,\"Head of Sales\nEMEA\",\"a\nb\"\r\n" + // lines 2-5
			",,https://www.linkedin.com/in/only-li,,\r\n" + // line 6: only a LinkedIn URL
			",only@acme.test,,,\r\n" + // line 7: only an email
			long + ",long@acme.test,,,\r\n" + // line 8
			"Big,big@acme.test,,," + strings.Repeat("c", 20_000) + "\r\n" // line 9: custom past 16 KiB
		r := e.importCSV("member", url.Values{"map": {"Notes=custom.notes"}}.Encode(), file)
		is.Equal(r.Status, 202)
		is.Equal(r.data()["normalized"], 0.0)
		job := e.drainImport("member", r.data()["id"].(string))
		is.Equal(job["status"], "succeeded")
		is.Equal([]any{job["rows"], job["created"], job["rejected"], job["normalized"]}, []any{5.0, 3.0, 2.0, 1.0})
		errs := job["errors"].([]any)
		is.Equal(len(errs), 2)
		e0, e1 := errs[0].(map[string]any), errs[1].(map[string]any)
		is.Equal([]any{e0["line"], e0["code"]}, []any{8.0, "E_PAYLOAD_INVALID"})
		is.True(strings.Contains(e0["reason"].(string), "name has 300000 characters; it takes at most 500"))
		is.Equal([]any{e1["line"], e1["code"]}, []any{9.0, "E_TOO_MANY"})

		ann := e.call("GET", "/v1/leads?email=ann@acme.test", "member", nil).Body["data"].([]any)[0].(map[string]any)
		is.Equal([]any{ann["name"], ann["headline"], ann["custom"]}, []any{"Ann Lee", "Head of Sales EMEA", map[string]any{"notes": "a\nb"}})
		is.Equal(e.call("GET", "/v1/leads?public_identifier=only-li", "member", nil).Body["total"], 1.0)
		is.Equal(e.call("GET", "/v1/leads?email=only@acme.test", "member", nil).Body["total"], 1.0)
		is.Equal(e.call("GET", "/v1/leads?email=long@acme.test", "member", nil).Body["total"], 0.0)

		// POST /v1/leads keeps refusing both: the same limit, and control
		// characters from a program.
		assertEnvelope(t, e.call("POST", "/v1/leads", "member", map[string]any{"email_work": "long@acme.test", "name": long}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("POST", "/v1/leads", "member", map[string]any{"email_work": "ann2@acme.test", "headline": "Head of Sales\nEMEA"}), 422, "E_PAYLOAD_INVALID")
	})
}

// TestImportHostileCellsNever5xx sweeps values no field can hold through
// every column: each row is imported or rejected with its line, and the
// job ends; nothing answers 5xx.
func TestImportHostileCellsNever5xx(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		t.Parallel()
		is := is.New(t)
		cols := []string{"Name", "Email", "Personal Email", "LinkedIn URL", "LinkedIn ID", "Provider ID", "Company", "Title",
			"Location", "Source", "List ID", "Stage ID", "Notes"}
		hostile := []string{"\x00", "a\x00b", "\xff\xfe", "\u2028", "\x1b[31m", "\t\r\n", "=HYPERLINK(\"x\")",
			strings.Repeat("é", 5000), strings.Repeat("x", 70_000), "\"", "'; DROP TABLE leads; --", "\ufeff"}
		var sb strings.Builder
		sb.WriteString(strings.Join(cols, ",") + "\n")
		rows := 0
		for c := range cols {
			for h, v := range hostile {
				cells := make([]string, len(cols))
				cells[0], cells[1] = "N", fmt.Sprintf("h%d-%d@acme.test", c, h) // never a blank row
				cells[c] = v
				for i := range cells {
					cells[i] = `"` + strings.ReplaceAll(cells[i], `"`, `""`) + `"`
				}
				sb.WriteString(strings.Join(cells, ",") + "\n")
				rows++
			}
		}
		r := e.importCSV("member", url.Values{"map": {"Notes=custom.notes"}}.Encode(), sb.String())
		is.Equal(r.Status, 202)
		id := r.data()["id"].(string)
		job := e.drainImport("member", id)
		is.Equal(job["status"], "succeeded")
		is.Equal(job["rows"], float64(rows))
		is.Equal(job["created"].(float64)+job["updated"].(float64)+job["unchanged"].(float64)+job["rejected"].(float64), float64(rows))
		is.True(job["rejected"].(float64) > 0)
		for offset := 0; offset < int(job["rejected"].(float64)); offset += 50 {
			p := e.call("GET", fmt.Sprintf("/v1/imports/%s?limit=50&offset=%d", id, offset), "member", nil)
			is.Equal(p.Status, 200)
			for _, x := range p.data()["errors"].([]any) {
				re := x.(map[string]any)
				is.True(re["line"].(float64) >= 2)
				is.True(len(re["reason"].(string)) < 400) // a reason never repeats a huge value
			}
		}
		is.Equal(e.call("GET", "/v1/imports/"+id+"/rejected.csv", "member", nil).Status, 200)
	})
}

// TestImportRejectedRowsPagedAndDownloaded: more than 100 rejected rows are
// all listed: GET /v1/imports/{id} pages them as every list is paged, and
// rejected.csv gives them all at once, to the roles and clients that see
// the job.
func TestImportRejectedRowsPagedAndDownloaded(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		t.Parallel()
		is := is.New(t)
		const bad = 230
		var sb strings.Builder
		sb.WriteString("Email,Name\n")
		for i := range bad {
			fmt.Fprintf(&sb, "not-an-email-%d,N\n", i)
		}
		sb.WriteString("ok@acme.test,Ok\n")
		r := e.importCSV("member", "", sb.String())
		is.Equal(r.Status, 202)
		id := r.data()["id"].(string)
		job := e.drainImport("member", id)
		is.Equal([]any{job["rejected"], job["created"]}, []any{float64(bad), 1.0})

		// The default page is the first 100, as before.
		first := e.call("GET", "/v1/imports/"+id, "member", nil)
		is.Equal(len(first.data()["errors"].([]any)), 100)
		is.Equal([]any{first.Body["total"], first.Body["limit"], first.Body["offset"], first.Body["has_more"]}, []any{float64(bad), 100.0, 0.0, true})

		var lines []float64
		for offset := 0; ; offset += 80 {
			p := e.call("GET", fmt.Sprintf("/v1/imports/%s?limit=80&offset=%d", id, offset), "viewer", nil)
			is.Equal(p.Status, 200)
			for _, x := range p.data()["errors"].([]any) {
				lines = append(lines, x.(map[string]any)["line"].(float64))
			}
			if p.Body["has_more"] != true {
				break
			}
		}
		is.Equal(len(lines), bad)
		for i, l := range lines {
			is.Equal(l, float64(i+2))
		}
		assertEnvelope(t, e.call("GET", "/v1/imports/"+id+"?limit=201", "member", nil), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("GET", "/v1/imports/"+id+"?offset=-1", "member", nil), 422, "E_PAYLOAD_INVALID")

		dl := e.call("GET", "/v1/imports/"+id+"/rejected.csv", "viewer", nil)
		is.Equal(dl.Status, 200)
		is.True(strings.HasPrefix(dl.Header.Get("Content-Type"), "text/csv"))
		is.True(strings.Contains(dl.Header.Get("Content-Disposition"), "import-"+id+"-rejected.csv"))
		is.True(dl.Header.Get("X-RateLimit-Remaining") != "")
		recs, err := csv.NewReader(strings.NewReader(string(dl.Raw))).ReadAll()
		is.NoErr(err)
		is.Equal(len(recs), bad+1)
		is.Equal(recs[0], []string{"line", "code", "reason"})
		is.Equal(recs[bad], []string{strconv.Itoa(bad + 1), "E_PAYLOAD_INVALID", fmt.Sprintf("email_work %q is not an email address.", fmt.Sprintf("not-an-email-%d", bad-1))})

		assertEnvelope(t, e.call("GET", "/v1/imports/"+id+"/rejected.csv", "other", nil), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("GET", "/v1/imports/"+e.ids["Globex"]+"/rejected.csv", "member", nil), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("GET", "/v1/imports/"+id+"/rejected.csv", "", nil), 401, "E_UNAUTHORIZED")
	})
}
