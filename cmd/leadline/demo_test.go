package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/server"
)

// TestDemoReports runs the demo and reads every report route with its
// client_viewer key: the two simulated weeks show in each of them.
func TestDemoReports(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dbPath := filepath.Join(t.TempDir(), "demo.db")
	out, err := runCmd("demo", "--db", dbPath)
	is.NoErr(err)
	m := regexp.MustCompile(`client_viewer +(\S+)`).FindStringSubmatch(out)
	is.True(m != nil)
	is.True(regexp.MustCompile(`Reports, last 30 days: [1-9]\d* actions, [1-9]\d* leads contacted, [1-9]\d* replies`).MatchString(out))
	// The console: its address and an invite link for the owner.
	is.True(strings.Contains(out, "open http://127.0.0.1:8080/app/"))
	is.True(regexp.MustCompile(`sign in as owner@demo\.test \(owner\) by choosing a password at:\n +http://127\.0\.0\.1:8080/app/invite/\S{43}\n`).MatchString(out))
	ctx := context.Background()
	d, err := db.Open(ctx, dbPath)
	is.NoErr(err)
	defer d.Close()
	h := server.New(server.Config{DB: d, Logger: slog.New(slog.DiscardHandler)}).Handler()
	get := func(path string) map[string]any {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+m[1])
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		var body map[string]any
		is.NoErr(json.Unmarshal(rec.Body.Bytes(), &body))
		return body
	}
	data := func(path string) map[string]any { return get(path)["data"].(map[string]any) }
	positive := func(v any) bool { f, ok := v.(float64); return ok && f > 0 }

	is.True(positive(data("/v1/reports/overview")["totals"].(map[string]any)["sends.total"]))
	is.True(positive(data("/v1/reports/overview?interval=week")["totals"].(map[string]any)["replies"]))
	stages := data("/v1/reports/funnel")["stages"].([]any)
	for _, s := range stages[:4] { // enrolled, contacted, accepted, replied
		is.True(positive(s.(map[string]any)["count"]))
	}
	is.True(positive(data("/v1/reports/intents")["replies"]))
	is.True(positive(get("/v1/reports/reply-threads")["total"]))
	cost := data("/v1/reports/cost")
	is.True(positive(cost["totals"].(map[string]any)["cost.total"]))
	is.True(len(cost["by_sender"].([]any)) > 0 && len(cost["by_client"].([]any)) > 0)
	for _, kind := range []string{"sequences", "senders", "clients"} {
		page := get("/v1/reports/" + kind)
		is.True(positive(page["total"]))
		top := page["data"].([]any)[0].(map[string]any) // the most actions first
		is.True(positive(top["metrics"].(map[string]any)["sends.total"]))
		one := data("/v1/reports/" + kind + "/" + top["id"].(string))
		is.True(positive(one["totals"].(map[string]any)["sends.total"]))
		is.True(len(one["series"].([]any)) == 30)
	}
}
