package dbtest

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
)

// Recorder keeps the SQL statements a database runs while it is on.
type Recorder struct {
	mu      sync.Mutex
	on      bool
	queries []string
}

// Record adds a recorder to d. Tests turn it on around the calls whose
// queries they want to inspect. Adding it is not safe while d runs a
// query (bun's query hooks are not guarded): a test whose server may
// still be writing in the background (a flush of the rate counts) waits
// for that first (server.Server.Flush).
func Record(d *db.DB) *Recorder {
	r := &Recorder{}
	d.AddQueryHook(r)
	d.OnPrepared(r.add)
	return r
}

func (r *Recorder) add(query string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on {
		r.queries = append(r.queries, query)
	}
}

// BeforeQuery implements bun.QueryHook.
func (r *Recorder) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

// AfterQuery implements bun.QueryHook.
func (r *Recorder) AfterQuery(_ context.Context, e *bun.QueryEvent) { r.add(e.Query) }

// During runs fn with the recorder on and returns the statements fn ran.
func (r *Recorder) During(fn func()) []string {
	r.mu.Lock()
	r.on, r.queries = true, nil
	r.mu.Unlock()
	fn()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.queries
}

// Plan explains query on d: SQLite's EXPLAIN QUERY PLAN details, or
// Postgres's EXPLAIN lines with sequential scans disabled, so that the plan
// shows whether an index can serve the query at all, whatever the table's
// size in the test.
func Plan(t testing.TB, d *db.DB, query string) []string {
	t.Helper()
	ctx := context.Background()
	var lines []string
	if d.Engine == db.SQLite {
		var rows []struct {
			ID      int    `bun:"id"`
			Parent  int    `bun:"parent"`
			NotUsed int    `bun:"notused"`
			Detail  string `bun:"detail"`
		}
		if err := d.NewRaw("EXPLAIN QUERY PLAN "+query).Scan(ctx, &rows); err != nil {
			t.Fatalf("explain %s: %v", query, err)
		}
		for _, r := range rows {
			lines = append(lines, r.Detail)
		}
		return lines
	}
	err := d.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
			return err
		}
		return tx.NewRaw("EXPLAIN "+query).Scan(ctx, &lines)
	})
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	return lines
}

var columns = regexp.MustCompile(`(?s)SELECT .*? FROM`)

// aliases are the table aliases leadline's bun models use: SQLite's plans
// name a table by its alias.
var aliases = map[string]string{"leads": "l", "enrollments": "e", "actions": "a", "senders": "s", "sequences": "q", "enrichment_requests": "er",
	"tasks": "t", "threads": "th", "messages": "m", "webhooks": "wh", "deliveries": "dl", "bookings": "bk", "inbound": "ib",
	"api_keys": "k", "api_key_clients": "kc", "members": "m", "workspaces": "w", "member_clients": "mc", "import_rejects": "ir"}

// AssertNoScan explains every SELECT, UPDATE and DELETE among queries and
// fails the test when a plan reads table by scanning it: a full scan, or on
// SQLite a walk of every row of a workspace through the index named
// wideIndex (such as leads_ws on (workspace_id, id)).
func AssertNoScan(t testing.TB, d *db.DB, table, wideIndex string, queries []string) {
	t.Helper()
	seqScan := regexp.MustCompile(`Seq Scan on ` + table + `\b`)
	names := table
	if alias, ok := aliases[table]; ok {
		names += "|" + alias
	}
	sqliteScan := regexp.MustCompile(`^SCAN (` + names + `)\b`)
	wide := regexp.MustCompile(`INDEX ` + wideIndex + ` \(workspace_id=\?\)$`)
	checked := 0
	for _, q := range queries {
		verb := strings.ToUpper(strings.Fields(strings.TrimSpace(q) + " x")[0])
		if verb != "SELECT" && verb != "UPDATE" && verb != "DELETE" && verb != "WITH" {
			continue
		}
		if !regexp.MustCompile(`(?i)\b` + table + `\b`).MatchString(q) {
			continue
		}
		checked++
		plan := Plan(t, d, q)
		for _, line := range plan {
			if seqScan.MatchString(line) || sqliteScan.MatchString(line) || (wideIndex != "" && wide.MatchString(line)) {
				t.Errorf("%s query scans %s:\n  %s\nplan:\n  %s", d.Engine, table, columns.ReplaceAllString(q, "SELECT … FROM"), strings.Join(plan, "\n  "))
				break
			}
		}
	}
	if checked == 0 {
		t.Errorf("no query on %s was checked", table)
	}
}
