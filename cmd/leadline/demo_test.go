package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
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
	dbPath, first, second := sharedDemo(t)
	m := regexp.MustCompile(`client_viewer +(\S+)`).FindStringSubmatch(second) // the first run's keys were revoked by the second
	is.True(m != nil)
	is.True(regexp.MustCompile(`Reports, last 30 days: [1-9]\d* actions, [1-9]\d* leads contacted, [1-9]\d* replies`).MatchString(first))
	// The console: its address and an invite link for the owner.
	is.True(strings.Contains(first, "open http://127.0.0.1:8080/app/"))
	is.True(regexp.MustCompile(`sign in as owner@demo\.test \(owner\) by choosing a password at:\n +http://127\.0\.0\.1:8080/app/invite/\S{43}\n`).MatchString(first))
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

// demoRuns is a database where the setup (setupYAML) was applied and demo
// then ran twice, with each run's output. The demo's two simulated weeks
// are the slowest thing this package's tests run, so they run once for
// every test that reads them.
var demoRuns struct {
	once          sync.Once
	files         map[string][]byte // the database directory: the database and its key file
	first, second string
	err           error
}

// sharedDemo copies the demo database into the test's directory and
// returns its path and the output of the two demo runs that made it.
func sharedDemo(t *testing.T) (dbPath, first, second string) {
	t.Helper()
	demoRuns.once.Do(func() { demoRuns.err = runDemoTwice() })
	if demoRuns.err != nil {
		t.Fatalf("the shared demo: %v", demoRuns.err)
	}
	dir := t.TempDir()
	for name, data := range demoRuns.files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "l.db"), demoRuns.first, demoRuns.second
}

func runDemoTwice() error {
	dir, err := os.MkdirTemp("", "leadline-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dbPath, setup := filepath.Join(dir, "l.db"), filepath.Join(dir, "setup.yaml")
	if err := os.WriteFile(setup, []byte(setupYAML), 0o600); err != nil {
		return err
	}
	if _, err := runCmd("apply", "--db", dbPath, "-f", setup); err != nil {
		return err
	}
	if demoRuns.first, err = runCmd("demo", "--db", dbPath); err != nil {
		return err
	}
	if demoRuns.second, err = runCmd("demo", "--db", dbPath); err != nil {
		return err
	}
	if err := os.Remove(setup); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	demoRuns.files = map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		demoRuns.files[e.Name()] = data
	}
	return nil
}
