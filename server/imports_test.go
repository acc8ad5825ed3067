package server

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// importCSV posts a CSV file to /v1/leads/import with query q and returns
// the answer.
func (e *env) importCSV(key, q, csv string) *resp {
	e.t.Helper()
	return e.call("POST", "/v1/leads/import?"+q, key, csv, "Content-Type", "text/csv")
}

// waitImport polls the import until it is no longer running.
func (e *env) waitImport(key, id string) map[string]any {
	e.t.Helper()
	for i := 0; i < 500; i++ {
		r := e.call("GET", "/v1/imports/"+id, key, nil)
		if r.Status != 200 {
			e.t.Fatalf("GET import: %d %s", r.Status, r.Raw)
		}
		if r.data()["status"] != "running" {
			return r.data()
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatal("the import did not end")
	return nil
}

func TestImportOverHTTP(t *testing.T) {
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		e.lead("member", map[string]any{"email_work": "ann@acme.test", "name": "Ann"})
		csv := "\ufeffName;Email;LinkedIn;Company;Notes\n" +
			"Ann Lee;ANN@acme.test;;Acme;\n" +
			"Bob;bob@acme.test;linkedin.com/in/bob;Acme;\"a\nb\"\n" +
			"Bad;nope;;;\n" +
			"Ev;ev@umbrella.test;;;\n"
		q := url.Values{"client_id": {e.ids["Globex"]}, "tag_id": {e.ids["vip"], e.ids["cold"]}, "map": {"Notes=custom.notes"}}

		// A dry run first: the same counts, nothing written.
		dq := url.Values{"dry_run": {"true"}}
		for k, v := range q {
			dq[k] = v
		}
		r := e.importCSV("member", dq.Encode(), csv)
		is.Equal(r.Status, 202)
		is.Equal(r.data()["status"], "running")
		is.Equal(r.data()["dry_run"], true)
		is.True(r.Header.Get("X-RateLimit-Remaining") != "")
		job := e.waitImport("member", r.data()["id"].(string))
		is.Equal(job["status"], "succeeded")
		is.Equal([]any{job["rows"], job["created"], job["updated"], job["unchanged"], job["rejected"]},
			[]any{4.0, 2.0, 1.0, 0.0, 1.0})
		is.Equal(e.call("GET", "/v1/leads?email=bob@acme.test", "member", nil).Body["total"], 0.0)

		// The whole file counts once against the write class.
		first := e.importCSV("member", "dry_run=true", "Email\nx@x.test\n")
		e.waitImport("member", first.data()["id"].(string))
		before, _ := strconv.Atoi(first.Header.Get("X-RateLimit-Remaining"))
		r = e.importCSV("member", q.Encode(), csv)
		is.Equal(r.Status, 202)
		after, _ := strconv.Atoi(r.Header.Get("X-RateLimit-Remaining"))
		is.Equal(after, before-1)
		job = e.waitImport("member", r.data()["id"].(string))
		is.Equal(job["status"], "succeeded")
		is.Equal([]any{job["rows"], job["created"], job["updated"], job["unchanged"], job["rejected"]},
			[]any{4.0, 2.0, 1.0, 0.0, 1.0})
		errs := job["errors"].([]any)
		is.Equal(len(errs), 1)
		is.Equal(errs[0].(map[string]any)["line"], 5.0)
		is.Equal(errs[0].(map[string]any)["code"], "E_PAYLOAD_INVALID")
		is.Equal(job["columns"].(map[string]any)["Notes"], "custom.notes")
		is.Equal(job["error"], nil)

		bob := e.call("GET", "/v1/leads?email=bob@acme.test", "member", nil).Body["data"].([]any)[0].(map[string]any)
		is.Equal(bob["client_id"], e.ids["Globex"])
		is.Equal(bob["custom"], map[string]any{"notes": "a\nb"})
		is.Equal(bob["public_identifier"], "bob")
		d := e.call("GET", "/v1/leads/"+bob["id"].(string), "member", nil).data()
		is.Equal(len(d["tags"].([]any)), 2)
		ev := e.call("GET", "/v1/leads?email=ev@umbrella.test", "member", nil).Body["data"].([]any)[0].(map[string]any)
		is.Equal(ev["do_not_contact"], true) // blacklisted domain, as POST /v1/leads does

		// Another workspace's key does not see the job; a viewer does.
		id := r.data()["id"].(string)
		assertEnvelope(t, e.call("GET", "/v1/imports/"+id, "other", nil), 404, "E_NOT_FOUND")
		is.Equal(e.call("GET", "/v1/imports/"+id, "viewer", nil).Status, 200)
	})
}

func TestImportRefusals(t *testing.T) {
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		for _, c := range []struct {
			key, q, csv string
			status      int
			code        string
		}{
			{"viewer", "", "Email\na@x.test\n", 403, "E_FORBIDDEN"},
			{"member", "", "Name,Company\nA,B\n", 422, "E_PAYLOAD_INVALID"},
			{"member", "map=Fax%3Dcustom.fax", "Email\na@x.test\n", 422, "E_PAYLOAD_INVALID"},
			{"member", "tag_id=" + e.ids["Globex"], "Email\na@x.test\n", 422, "E_PAYLOAD_INVALID"},
			{"member", "", "", 422, "E_PAYLOAD_INVALID"},
		} {
			r := e.importCSV(c.key, c.q, c.csv)
			if r.Status != c.status || r.code() != c.code {
				t.Fatalf("%s %q: %d %s", c.key, c.q, r.Status, r.Raw)
			}
		}
		assertEnvelope(t, e.call("GET", "/v1/imports/"+e.ids["Globex"], "member", nil), 404, "E_NOT_FOUND")
	})
}

// TestImportTakesLargeFiles: the import route takes files past the 2 MiB
// that other bodies are held to, up to its own limit, and answers 422 in
// the envelope above it; an Idempotency-Key covers the whole file.
func TestImportTakesLargeFiles(t *testing.T) {
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		// 3 MiB: one person, with a long note, on every row.
		row := fmt.Sprintf("big@x.test,%s\n", strings.Repeat("n", 1000))
		big := "Email,Notes\n" + strings.Repeat(row, 3<<20/len(row))
		r := e.importCSV("member", "map=Notes%3Dcustom.notes", big)
		is.Equal(r.Status, 202)
		job := e.waitImport("member", r.data()["id"].(string))
		is.Equal(job["status"], "succeeded")
		is.Equal([]any{job["rows"], job["created"], job["unchanged"]}, []any{float64(3 << 20 / len(row)), 1.0, float64(3<<20/len(row) - 1)})

		// Other bodies stay within 2 MiB.
		lead := fmt.Sprintf(`{"email_work": "x@x.test", "custom": {"notes": %q}}`, strings.Repeat("n", 3<<20))
		assertEnvelope(t, e.call("POST", "/v1/leads", "member", lead), 422, "E_PAYLOAD_INVALID")

		// Above the route's limit: 422, nothing recorded, the count taken.
		e.srv.maxUpload = 1 << 20
		before := e.importCSV("member", "dry_run=true", "Email\nx@x.test\n")
		e.waitImport("member", before.data()["id"].(string))
		r = e.importCSV("member", "", big)
		assertEnvelope(t, r, 422, "E_PAYLOAD_INVALID")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "larger than 1 MiB"))
		is.True(strings.Contains(r.Body["error"].(map[string]any)["remedy"].(string), "leadline import"))
		b, _ := strconv.Atoi(before.Header.Get("X-RateLimit-Remaining"))
		a, _ := strconv.Atoi(r.Header.Get("X-RateLimit-Remaining"))
		is.Equal(a, b-1)
		var n int
		is.NoErr(e.db.NewSelect().Table("imports").ColumnExpr("count(*)").Scan(t.Context(), &n))
		is.Equal(n, 2)

		// A retry with the same key and file gets the first answer; another
		// file under the same key is refused.
		file := "Email\nidem@x.test\n"
		first := e.call("POST", "/v1/leads/import", "member", file, "Content-Type", "text/csv", "Idempotency-Key", "imp-1")
		is.Equal(first.Status, 202)
		e.waitImport("member", first.data()["id"].(string))
		again := e.call("POST", "/v1/leads/import", "member", file, "Content-Type", "text/csv", "Idempotency-Key", "imp-1")
		is.Equal(again.Status, 202)
		is.Equal(again.Header.Get("Idempotent-Replayed"), "true")
		is.Equal(again.data()["id"], first.data()["id"])
		other := e.call("POST", "/v1/leads/import", "member", file+"idem2@x.test\n", "Content-Type", "text/csv", "Idempotency-Key", "imp-1")
		assertEnvelope(t, other, 409, "E_IDEMPOTENCY_MISMATCH")
	})
}

func TestImportLeftRunningFails(t *testing.T) {
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		r := e.importCSV("member", "", "Email\na@x.test\n")
		is.Equal(r.Status, 202)
		id := r.data()["id"].(string)
		e.waitImport("member", id)
		// A job a stopped process left running is failed once it is stale.
		_, err := e.db.NewUpdate().Table("imports").Set("status = 'running'").Set("finished_at = NULL").Where("id = ?", id).Exec(t.Context())
		is.NoErr(err)
		is.Equal(e.call("GET", "/v1/imports/"+id, "member", nil).data()["status"], "running")
		e.clock.Advance(3 * time.Minute)
		job := e.call("GET", "/v1/imports/"+id, "member", nil).data()
		is.Equal(job["status"], "failed")
		is.True(strings.Contains(job["error"].(string), "stopped"))
	})
}
