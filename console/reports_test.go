package console

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/workspace"
)

// api answers GET path from the API on the same platform, with a key of
// the member email and role (and clients), decoded.
func (e *env) api(path, email string, role apikit.Role, clients ...string) map[string]any {
	e.t.Helper()
	_, secret, err := e.pl.Workspaces.CreateKey(context.Background(), workspace.KeyInput{Workspace: "acme", MemberEmail: email, Role: role, Clients: clients})
	e.must(err)
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	rec := httptest.NewRecorder()
	server.New(server.Config{Platform: e.pl, Logger: e.pl.Logger}).Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	var out map[string]any
	e.must(json.Unmarshal(rec.Body.Bytes(), &out))
	return out
}

// csvOf reads a CSV download into rows.
func csvOf(t *testing.T, r response) [][]string {
	t.Helper()
	if r.code != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV: %d %s %s", r.code, r.header.Get("Content-Type"), r.body)
	}
	rows, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// apiNumber is a JSON number as the CSV writes it; "" for null.
func apiNumber(v any) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(v.(float64), 'f', -1, 64)
}

func TestReports(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		w := e.work()
		boss := e.member("boss@acme.test", apikit.RoleManager)
		viewer := e.member("viewer@acme.test", apikit.RoleClientViewer, "Globex")

		// The overview: a line chart and a funnel chart, each beside its
		// table, with the period in the workspace's timezone.
		r := boss.get("/app/reports")
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, `<canvas class="chart" id="chart-series"`))
		is.True(strings.Contains(r.body, `<canvas class="chart" id="chart-funnel"`))
		is.True(strings.Contains(r.body, "in Europe/Berlin"))
		is.True(strings.Contains(r.body, "vendor/chartjs/chart.umd.min.js"))
		is.True(!strings.Contains(r.body, "<script>")) // no inline script

		// Every total matches GET /v1/reports/overview's.
		ov := e.api("/v1/reports/overview", "owner@acme.test", apikit.RoleManager)["data"].(map[string]any)
		totals := ov["totals"].(map[string]any)
		rows := csvOf(t, boss.get("/app/reports/export?table=totals"))
		is.Equal(rows[0], []string{"Metric", "Key", "Value"})
		is.Equal(len(rows)-1, len(totals))
		for _, row := range rows[1:] {
			is.Equal(row[2], apiNumber(totals[row[1]])) // the API's number
		}
		is.Equal(totals["sends.total"], 2.0)
		is.Equal(totals["replies"], 1.0)
		// The series: the chart's data, the table and the API's agree.
		series := ov["series"].([]any)
		rows = csvOf(t, boss.get("/app/reports/export?table=series"))
		is.Equal(len(rows)-1, len(series))
		var sends []string
		for i, pt := range series {
			m := pt.(map[string]any)["metrics"].(map[string]any)
			is.Equal(rows[i+1][0], pt.(map[string]any)["date"])
			is.Equal(rows[i+1][1:], []string{apiNumber(m["sends.total"]), apiNumber(m["replies"]), apiNumber(m["invites.accepted"])})
			sends = append(sends, apiNumber(m["sends.total"]))
		}
		is.True(strings.Contains(r.body, html.EscapeString(`{"label":"Actions sent","data":[`+strings.Join(sends, ",")+`]}`)))
		// The funnel.
		fn := e.api("/v1/reports/funnel", "owner@acme.test", apikit.RoleManager)["data"].(map[string]any)
		rows = csvOf(t, boss.get("/app/reports/export?table=funnel"))
		for i, s := range fn["stages"].([]any) {
			st := s.(map[string]any)
			is.Equal(rows[i+1], []string{st["stage"].(string), apiNumber(st["count"]), apiNumber(st["conversion"])})
		}
		// Intents.
		rows = csvOf(t, boss.get("/app/reports/export?table=intents"))
		is.Equal(rows[1], []string{"interested", "1", "1"})

		// Per client: a viewer sees its client's numbers alone, as its key would.
		vc := e.api("/v1/reports/clients", "owner@acme.test", apikit.RoleClientViewer, "Globex")
		is.Equal(vc["total"], 1.0)
		r = viewer.get("/app/reports/clients")
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, "Globex") && !strings.Contains(r.body, "Initech"))
		rows = csvOf(t, viewer.get("/app/reports/export?table=clients"))
		is.Equal(len(rows), 2)
		is.Equal(rows[1][0], "Globex")
		is.Equal(rows[1][1], apiNumber(vc["data"].([]any)[0].(map[string]any)["metrics"].(map[string]any)["sends.total"]))
		rows = csvOf(t, viewer.get("/app/reports/export?table=totals"))
		for _, row := range rows[1:] {
			if row[1] == "sends.total" {
				is.Equal(row[2], "1")
			}
		}
		is.Equal(viewer.get("/app/reports?client_id="+w.clients["Initech"]).code, http.StatusForbidden)
		is.Equal(viewer.get("/app/reports/export?table=totals&client_id="+w.clients["Initech"]).code, http.StatusForbidden)
		is.Equal(viewer.get("/app/reports?sequence_id="+w.seqs["Initech"]).code, http.StatusNotFound)
		// Per sequence and per sender.
		r = boss.get("/app/reports/sequences")
		is.True(strings.Contains(r.body, "Mail Globex") && strings.Contains(r.body, "Mail Initech"))
		r = boss.get("/app/reports/senders?channel=email")
		is.True(strings.Contains(r.body, ">mail</th>"))

		// A bad period: the API's message and remedy, the form as typed.
		r = boss.get("/app/reports?from=2026-13-01")
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "Send dates as YYYY-MM-DD"))
		is.True(strings.Contains(r.body, `value="2026-13-01"`))
		is.Equal(boss.get("/app/reports/export?table=nope").code, http.StatusUnprocessableEntity)
		// No session, no report.
		is.Equal(e.browser().get("/app/reports/export?table=totals").code, http.StatusSeeOther)
	})
}

func TestCSVSafe(t *testing.T) {
	is := is.New(t)
	is.Equal(csvSafe("=HYPERLINK(1)"), "'=HYPERLINK(1)")
	is.Equal(csvSafe("-0.5"), "-0.5")
	is.Equal(csvSafe("Globex"), "Globex")
	is.Equal(csvSafe(""), "")
}
