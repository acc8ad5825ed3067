// Command reportsload measures the reports against the goals of
// docs/PERFORMANCE.md: it writes an agency's year of activity (10,000,000
// events by default) through the activity log, so that the rollups are
// kept on the write path as in production, then times the report routes
// over a 90-day range through the full HTTP stack, and the rollups' cost on
// the write path.
//
//	go run ./bench/reportsload --db /tmp/leadline-reports.db
//	go run ./bench/reportsload --db 'postgres://postgres@127.0.0.1:5432/leadline_reports?sslmode=disable'
//
// The database should be new (or dropped before each run); a second run on
// a seeded database skips the seeding.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bench/internal/benchkit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

const (
	clients        = 20
	sendersPer     = 5 // per client
	sequencesPer   = 3 // per client, each sent by three of its client's senders
	leadsPerClient = 75_000
)

func main() {
	dsn := flag.String("db", "/tmp/leadline-reports.db", "database (new)")
	n := flag.Int("events", 10_000_000, "events to write")
	days := flag.Int("days", 365, "days the events spread over, up to today")
	batch := flag.Int("batch", 2000, "events per transaction while seeding")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the write-path measure to this file")
	only := flag.String("only", "", "time only the routes whose label contains this")
	routeProfile := flag.String("route-profile", "", "write a CPU profile of the overview calls to this file")
	calls := flag.Int("calls", 200, "timed calls per route (0: time no route)")
	flag.Parse()
	ctx := context.Background()
	d := benchkit.Open(ctx, *dsn)

	now := time.Now()
	loc, _ := time.LoadLocation("Europe/Berlin")
	first := time.Date(now.Year(), now.Month(), now.Day()-*days+1, 0, 0, 0, 0, loc)
	clock := apikit.NewFakeClock(first.Add(-24 * time.Hour))
	pl := platform.New(platform.Config{DB: d, Clock: clock})
	w, err := pl.Workspaces.ByName(ctx, "reports")
	if err != nil {
		f, err := setup.Decode(strings.NewReader(benchSetup()))
		benchkit.Check(err)
		_, err = setup.Apply(ctx, d, clock, benchkit.Key(), f)
		benchkit.Check(err)
		w, err = pl.Workspaces.ByName(ctx, "reports")
		benchkit.Check(err)
	}
	var subjects []benchkit.Subject
	var seqs, snds, cls []string
	{
		var qs []sequences.Sequence
		benchkit.Check(d.NewSelect().Model(&qs).Where("workspace_id = ?", w.ID).OrderExpr("name").Scan(ctx))
		for _, q := range qs {
			seqs = append(seqs, q.ID)
			for _, s := range q.SenderIDs {
				subjects = append(subjects, benchkit.Subject{Client: *q.ClientID, Sequence: q.ID, Sender: s})
			}
		}
		benchkit.Check(d.NewSelect().Table("senders").Column("id").Where("workspace_id = ?", w.ID).Scan(ctx, &snds))
		benchkit.Check(d.NewSelect().Table("clients").Column("id").Where("workspace_id = ?", w.ID).Scan(ctx, &cls))
	}

	have, err := d.NewSelect().Table("events").Where("workspace_id = ?", w.ID).Count(ctx)
	benchkit.Check(err)
	var out [][3]string
	if int(have) < *n*9/10 {
		t0 := time.Now()
		leadPool := make([]string, clients*leadsPerClient)
		for i := range leadPool {
			leadPool[i] = apikit.NewID()
		}
		written := benchkit.Activity(ctx, d, pl.Log, clock, w.ID, subjects, leadPool, first, *n, *days, *batch)
		out = append(out, [3]string{"seeding through the log, rollups kept", "", fmt.Sprintf("%d events in %s (%.0f events/s)",
			written, time.Since(t0).Round(time.Second), float64(written)/time.Since(t0).Seconds())})
	}
	if d.Engine == db.Postgres {
		// What the runner's hourly checks leave: past days' shards folded.
		t0 := time.Now()
		benchkit.Check(pl.Reports.Compact(ctx, now))
		out = append(out, [3]string{"folding the counter shards of past days (the runner's hourly upkeep)", "", time.Since(t0).Round(time.Millisecond).String()})
		_, err := d.ExecContext(ctx, "VACUUM (ANALYZE)")
		benchkit.Check(err)
	}
	var rows int
	for _, t := range []string{"report_daily", "report_threads"} {
		c, err := d.NewSelect().Table(t).Count(ctx)
		benchkit.Check(err)
		rows += int(c)
		log.Printf("%s: %d rows", t, c)
	}

	// The routes over 90 days, through the HTTP stack.
	srv := server.New(server.Config{DB: d, Clock: apikit.SystemClock{}, Logger: slog.New(slog.DiscardHandler),
		Limits: server.RateLimits{Read: 1 << 30, Write: 1 << 30, Spend: 1 << 30}})
	h := srv.Handler()
	_, key, err := pl.Workspaces.CreateKey(ctx, workspace.KeyInput{Workspace: "reports", MemberEmail: "owner@reports.test",
		Role: apikit.RoleClientViewer, Name: fmt.Sprintf("bench %d", time.Now().UnixNano())})
	benchkit.Check(err)
	today := now.In(loc)
	period := fmt.Sprintf("from=%s&to=%s", today.AddDate(0, 0, -89).Format(time.DateOnly), today.Format(time.DateOnly))
	total, err := d.NewSelect().Table("events").Where("workspace_id = ?", w.ID).Count(ctx)
	benchkit.Check(err)
	for _, r := range []struct {
		label, goal string
		path        func(i int) string
	}{
		{"/v1/reports/overview, 90 days", "p95 < 200 ms", func(int) string { return "/v1/reports/overview?" + period }},
		{"/v1/reports/sequences/{id}", "p95 < 200 ms", func(i int) string { return "/v1/reports/sequences/" + seqs[i%len(seqs)] + "?" + period }},
		{"/v1/reports/senders/{id}", "p95 < 200 ms", func(i int) string { return "/v1/reports/senders/" + snds[i%len(snds)] + "?" + period }},
		{"/v1/reports/clients/{id}", "p95 < 200 ms", func(i int) string { return "/v1/reports/clients/" + cls[i%len(cls)] + "?" + period }},
		{"/v1/reports/overview, 90 days, weekly", "", func(int) string { return "/v1/reports/overview?interval=week&" + period }},
		{"/v1/reports/funnel", "", func(int) string { return "/v1/reports/funnel?" + period }},
		{"/v1/reports/intents", "", func(int) string { return "/v1/reports/intents?" + period }},
		{"/v1/reports/reply-threads", "", func(int) string { return "/v1/reports/reply-threads?" + period }},
		{"/v1/reports/cost", "", func(int) string { return "/v1/reports/cost?" + period }},
		{"/v1/reports/sequences?sort=-reply_rate", "", func(int) string { return "/v1/reports/sequences?sort=-reply_rate&" + period }},
		{"/v1/reports/senders", "", func(int) string { return "/v1/reports/senders?" + period }},
		{"/v1/reports/clients", "", func(int) string { return "/v1/reports/clients?" + period }},
	} {
		if !strings.Contains(r.label, *only) {
			continue
		}
		if *routeProfile != "" && len(out) == 0 {
			f, err := os.Create(*routeProfile)
			benchkit.Check(err)
			benchkit.Check(pprof.StartCPUProfile(f))
			benchkit.Timed(h, key, 10, *calls, r.path)
			pprof.StopCPUProfile()
		}
		if *calls > 0 {
			out = append(out, [3]string{fmt.Sprintf("%s (%d events)", r.label, total), r.goal, benchkit.Timed(h, key, 10, *calls, r.path)})
		}
	}

	// The rollups' cost on the write path: action.sent events written one
	// per transaction, as the runner writes them, by a log with the
	// webhook outbox and the rollups (as the platform wires it) and by one
	// with the outbox alone.
	bare := events.NewLog(d, clock)
	bare.OnEmit(webhooks.NewService(d, clock, webhooks.Guard{}, secret.Key{}).Enqueue)
	// Rounds alternate, so that the log's growth and the WAL's checkpoints
	// fall on both alike.
	var spent [2]time.Duration
	const perRound, rounds = 500, 12
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		benchkit.Check(err)
		benchkit.Check(pprof.StartCPUProfile(f))
	}
	clock.Set(now)
	for round := range rounds + 2 {
		for which, l := range []*events.Log{bare, pl.Log} {
			t0 := time.Now()
			for i := range perRound {
				s := subjects[(round*perRound+i)%len(subjects)]
				e := events.Event{WorkspaceID: w.ID, ClientID: s.Client, SequenceID: s.Sequence, SenderID: s.Sender, LeadID: apikit.NewID(),
					EnrollmentID: apikit.NewID(), StepID: "invite", Kind: "action.sent",
					Data: map[string]any{"action": "invite", "purpose": "sequence", "first_contact": true}}
				benchkit.Check(d.InTx(ctx, func(ctx context.Context) error { return l.EmitMany(ctx, []events.Event{e}) }))
			}
			if round >= 2 { // the first two warm up
				spent[which] += time.Since(t0)
			}
		}
	}
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	without, with := rounds*perRound/spent[0].Seconds(), rounds*perRound/spent[1].Seconds()
	out = append(out, [3]string{"a runner's action.sent, one per transaction: with rollups vs without", "< 10% slower",
		fmt.Sprintf("%.0f/s vs %.0f/s (%.1f%% slower)", with, without, 100*(1-with/without))})

	fmt.Printf("\n%s, %s, %d rollup rows\n\n| measure | goal | result |\n|---|---|---|\n", d.Engine, time.Now().Format(time.DateOnly), rows)
	for _, r := range out {
		fmt.Printf("| %s | %s | %s |\n", r[0], r[1], r[2])
	}
}

// benchSetup is an agency: 20 clients, each with 5 LinkedIn senders and 3
// sequences sent by three of them.
func benchSetup() string {
	var b strings.Builder
	b.WriteString("workspaces:\n  - name: reports\n    timezone: Europe/Berlin\n    members: [{email: owner@reports.test, role: owner}]\n    clients: [")
	for c := range clients {
		if c > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "C%d", c)
	}
	b.WriteString("]\n    senders:\n")
	for c := range clients {
		for i := range sendersPer {
			fmt.Fprintf(&b, "      - {name: s%d-%d, channel: linkedin, client: C%d, monthly_cost: %d}\n", c, i, c, 59+10*i)
		}
	}
	b.WriteString("    sequences:\n")
	for c := range clients {
		for q := range sequencesPer {
			fmt.Fprintf(&b, "      - name: Q%d-%d\n        client: C%d\n        senders: [s%d-%d, s%d-%d, s%d-%d]\n        steps:\n"+
				"          - {id: invite, type: invite}\n          - {id: hello, type: message, body: \"Hi {{first_name|there}}\"}\n",
				c, q, c, c, q, c, (q+1)%sendersPer, c, (q+2)%sendersPer)
		}
	}
	return b.String()
}
