// Command engineload measures the engine against the goals of
// docs/PERFORMANCE.md: preview and commit of 10,000 leads, runner steps per
// second on the sandbox network, why-not-sending on a sequence with
// 100,000 enrollments, and a simulated month of 50 senders and 20,000 leads.
// It prints a Markdown table.
//
//	go run ./bench/engineload --db /tmp/leadline-engine.db
//	go run ./bench/engineload --db 'postgres://postgres@127.0.0.1:5432/leadline_engine?sslmode=disable'
//
// The database should be new (or dropped before each run): the script
// creates its own workspaces.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bench/internal/benchkit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/simulate"
)

func main() {
	dsn := flag.String("db", "/tmp/leadline-engine.db", "database (new)")
	big := flag.Int("enrollments", 100_000, "enrollments of the why-not-sending sequence")
	simLeads := flag.Int("sim-leads", 20_000, "leads of the simulated month")
	simSenders := flag.Int("sim-senders", 50, "senders of the simulated month (one in five a mailbox)")
	simClients := flag.Int("sim-clients", 5, "clients of the simulated month, each with a sequence and an equal share of the senders and leads")
	skipSim := flag.Bool("skip-simulation", false, "skip the simulated month")
	runnerOnly := flag.Bool("runner-only", false, "measure only the runner (on a database without the preview and commit runs)")
	simOnly := flag.Bool("simulation-only", false, "measure only the simulated month")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the runner phase (with --simulation-only: of the simulation) to this file")
	workers := flag.Int("workers", 0, "the runner's workers (0: its default for the engine)")
	group := flag.Int("group", 0, "enrollments per runner transaction (0: the default for the engine)")
	report := flag.String("report", "", "write the simulated month's summary and audit (actions per day and per sender, outcomes) to this file")
	simTick := flag.Duration("sim-tick", simulate.DefaultTick, "the simulated runner's tick (0: at every due moment)")
	statements := flag.String("statements", "", "with --simulation-only: count the simulation's statements by their text and write the counts to this file")
	flag.Parse()
	ctx := context.Background()
	d := benchkit.Open(ctx, *dsn)
	if *simOnly {
		var counts *benchkit.Statements
		if *statements != "" {
			counts = benchkit.CountStatements(d)
		}
		printRows(d.Engine, [][3]string{simulated(ctx, d, world{*simLeads, *simSenders, *simClients, *simTick}, *cpuprofile, *report)})
		if counts != nil {
			sf, err := os.Create(*statements)
			benchkit.Check(err)
			benchkit.Check(counts.Write(sf))
			benchkit.Check(sf.Close())
		}
		return
	}

	// A Monday in March, 10:00 UTC: inside the default schedule.
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	clock := apikit.NewFakeClock(start)
	f, err := setup.Decode(strings.NewReader(benchSetup("engine", 50, 5)))
	benchkit.Check(err)
	_, err = setup.Apply(ctx, d, clock, benchkit.Key(), f)
	benchkit.Check(err)
	pl := platform.New(platform.Config{DB: d, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	ws, ls, qs, es := pl.Workspaces, pl.Leads, pl.Sequences, pl.Enrollments
	w, err := ws.ByName(ctx, "engine")
	benchkit.Check(err)
	p := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}
	c0 := "" // the measured leads belong to no client
	rows := [][3]string{}
	add := func(measure, goal, result string) { rows = append(rows, [3]string{measure, goal, result}) }

	// Preview and commit of 10,000 leads, five times each on fresh leads.
	var previews, commits []time.Duration
	seqOf := func(name string) string {
		q, err := qs.ByName(ctx, w.ID, name)
		benchkit.Check(err)
		return q.ID
	}
	run := 0
	batch := func() []string {
		run++
		return seed(ctx, ls, p, c0, fmt.Sprintf("pc%d", run), 10_000)
	}
	for range 5 {
		if *runnerOnly {
			break
		}
		ids := batch()
		t0 := time.Now()
		pv, err := es.Preview(ctx, p, enrollments.EnrollInput{SequenceID: seqOf("Big"), LeadIDs: ids})
		benchkit.Check(err)
		previews = append(previews, time.Since(t0))
		t0 = time.Now()
		res, err := es.Commit(ctx, p, enrollments.EnrollInput{SequenceID: seqOf("Big"), LeadIDs: ids, Confirm: true})
		benchkit.Check(err)
		commits = append(commits, time.Since(t0))
		if len(pv.EligibleIDs) != 10_000 || res.Enrolled != 10_000 {
			log.Fatalf("preview %d eligible, commit %d enrolled", len(pv.EligibleIDs), res.Enrolled)
		}
	}
	if !*runnerOnly {
		add("preview of 10,000 leads", "< 500 ms", median(previews))
		add("commit of 10,000 leads", "< 1 s", median(commits))
	}

	// Runner: 4,000 enrollments of a view-then-follow sequence, within
	// what the 40 senders' caps allow today (6,000 views, 4,000 follows):
	// one tick executes their 8,000 steps.
	steps := seed(ctx, ls, p, c0, "steps", 4000)
	_, err = es.Commit(ctx, p, enrollments.EnrollInput{SequenceID: seqOf("Views"), LeadIDs: steps, Confirm: true})
	benchkit.Check(err)
	benchkit.Check(qs.ActivateByName(ctx, w.ID, "Views"))
	analyze(ctx, d)
	net := sandbox.New(1, clock, sandbox.Rates{})
	pl.UseTransports(map[string]senders.Transport{senders.TransportSandbox: net})
	runner := pl.Runner()
	runner.Batch = 500
	if *workers > 0 {
		runner.Workers = *workers
	}
	if *group > 0 {
		runner.Group = *group
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		benchkit.Check(err)
		benchkit.Check(pprof.StartCPUProfile(f))
	}
	t0 := time.Now()
	runs, err := runner.Tick(ctx)
	benchkit.Check(err)
	el := time.Since(t0)
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	actions := len(net.Performed())
	add("runner step executions per second, sandbox transport", "≥ 2,000",
		fmt.Sprintf("%.0f steps/s (%d actions by %d enrollment runs in %s)", float64(actions)/el.Seconds(), actions, runs, el.Round(time.Millisecond)))
	if v := net.Violations(); len(v) > 0 {
		log.Fatalf("runner: %d violations, first %+v", len(v), v[0])
	}

	if *runnerOnly {
		printRows(d.Engine, rows)
		return
	}

	// why-not-sending on a sequence with many enrollments.
	big0 := seqOf("Big")
	for done := 50_000; done < *big; done += 10_000 {
		ids := seed(ctx, ls, p, c0, fmt.Sprintf("big%d", done), min(10_000, *big-done))
		_, err := es.Commit(ctx, p, enrollments.EnrollInput{SequenceID: big0, LeadIDs: ids, Confirm: true})
		benchkit.Check(err)
	}
	var whys []time.Duration
	for range 20 {
		t0 := time.Now()
		_, err := es.WhyNotSending(ctx, p, big0)
		benchkit.Check(err)
		whys = append(whys, time.Since(t0))
	}
	add(fmt.Sprintf("why-not-sending on a sequence with %d enrollments", *big), "< 100 ms", median(whys)+" (p95 "+p95(whys)+")")

	if !*skipSim {
		// The month runs in a new database of its own, as `leadline
		// simulate --db` does, not in the one the phases above filled.
		sd := benchkit.Open(ctx, newSibling(ctx, d, *dsn))
		rows = append(rows, simulated(ctx, sd, world{*simLeads, *simSenders, *simClients, *simTick}, "", *report))
		benchkit.Check(sd.Close())
	}

	printRows(d.Engine, rows)
}

// newSibling makes a new, empty database beside dsn and returns its DSN: a
// file named after dsn's with "-sim" on SQLite, a database named after
// dsn's with "_sim" on the same Postgres server (d is connected there).
func newSibling(ctx context.Context, d *db.DB, dsn string) string {
	if !db.IsPostgres(dsn) {
		path := strings.TrimPrefix(strings.SplitN(dsn, "?", 2)[0], "file:") + "-sim"
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
				benchkit.Check(err)
			}
		}
		return path
	}
	u, err := url.Parse(dsn)
	benchkit.Check(err)
	name := strings.TrimPrefix(u.Path, "/") + "_sim"
	_, err = d.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name)
	benchkit.Check(err)
	_, err = d.ExecContext(ctx, "CREATE DATABASE "+name)
	benchkit.Check(err)
	u.Path = "/" + name
	return u.String()
}

// world is the size of a simulated month: its leads, senders and clients.
type world struct {
	leads, senders, clients int
	tick                    time.Duration
}

// simulated runs the simulated month of w, under the CPU profiler when
// cpuprofile names a file, and returns its row. When report names a file,
// the simulation's summary and audit go there: two builds did the same
// when their reports match but for the wall-time line.
func simulated(ctx context.Context, d *db.DB, w world, cpuprofile, report string) [3]string {
	f, err := setup.Decode(strings.NewReader(benchSetup("simulated", w.senders, w.clients)))
	benchkit.Check(err)
	var out io.Writer
	if report != "" {
		rf, err := os.Create(report)
		benchkit.Check(err)
		defer func() { benchkit.Check(rf.Close()) }()
		out = rf
	}
	if cpuprofile != "" {
		pf, err := os.Create(cpuprofile)
		benchkit.Check(err)
		benchkit.Check(pprof.StartCPUProfile(pf))
		defer pprof.StopCPUProfile()
	}
	t0 := time.Now()
	res, err := simulate.Run(ctx, simulate.Config{DB: d, Setup: f, Days: 30, Seed: 1, Leads: w.leads, Start: "2026-04-06", Rates: sandbox.DefaultRates, Out: out,
		Tick: cmp.Or(w.tick, -1)})
	benchkit.Check(err)
	goal := "< 2 min, 0 violations"
	if w.senders > 50 || w.leads > 20_000 {
		goal = "< 10 min, 0 violations" // the agency scale
	}
	return [3]string{fmt.Sprintf("simulate 30 days, %d senders, %d clients, %d leads", w.senders, w.clients, w.leads), goal,
		fmt.Sprintf("%s, %d violations (%d actions, %d runner steps; %s)", time.Since(t0).Round(time.Second), len(res.Violations), res.Actions, res.Runs, res.Phases)}
}

// printRows prints the measures as a table of docs/PERFORMANCE.md.
func printRows(engine db.Engine, rows [][3]string) {
	fmt.Printf("\n%s, %s\n\n| measure | goal | result |\n|---|---|---|\n", engine, time.Now().Format(time.DateOnly))
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s |\n", r[0], r[1], r[2])
	}
}

// benchSetup is a workspace with n senders over the clients (four LinkedIn
// senders to one mailbox) and a sequence per client, plus, for the engine's
// measures, the Views and Big sequences of workspace-wide senders.
func benchSetup(name string, n, clients int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workspaces:\n  - name: %s\n    timezone: Europe/Berlin\n    members: [{email: owner@%s.test, role: owner}]\n", name, name)
	var cs []string
	for c := range clients {
		cs = append(cs, fmt.Sprintf("C%d", c))
	}
	fmt.Fprintf(&b, "    clients: [%s]\n    blacklist: {companies: [Umbrella]}\n    senders:\n", strings.Join(cs, ", "))
	perClient := map[int][]string{}
	for i := range n {
		c := i % clients
		mailbox := (i/clients)%5 == 4
		if mailbox {
			fmt.Fprintf(&b, "      - {name: m%d, channel: email, client: C%d, address: m%d@%s.test, caps: {email: 100}}\n", i, c, i, name)
		} else {
			fmt.Fprintf(&b, "      - {name: s%d, channel: linkedin, client: C%d, premium: true, caps: {invite: 40, invite_week: 180, profile_view: 150, message: 100, follow: 100}}\n", i, c)
		}
		perClient[c] = append(perClient[c], map[bool]string{true: "m", false: "s"}[mailbox]+fmt.Sprint(i))
	}
	if name == "engine" {
		// The runner measure's senders have no spacing (docs/GUARDS.md):
		// it measures how fast one tick runs what is due, and with a gap
		// between two actions of a sender a tick would run one each.
		for i := range 40 {
			fmt.Fprintf(&b, "      - {name: w%d, channel: linkedin, premium: true, caps: {profile_view: 150, follow: 100}, spacing: {min: 0s, max: 0s}}\n", i)
		}
	}
	b.WriteString("    sequences:\n")
	for c := range clients {
		fmt.Fprintf(&b, `      - name: Outreach C%d
        client: C%d
        senders: [%s]
        steps:
          - {id: visit, type: profile_view}
          - {id: invite, type: invite, note: "Hi {{first_name|there}}"}
          - {id: accepted, type: condition, if: invite_accepted, within_days: 7, then: hello, else: has-mail}
          - {id: hello, type: message, body: "Thanks, {{first_name|there}}!", next: end}
          - {id: has-mail, type: condition, if: has_email, then: mail, else: end}
          - {id: mail, type: email, subject: "{{company|Hello}}", body: "Hello {{first_name|there}}"}
`, c, c, strings.Join(perClient[c], ", "))
	}
	if name == "engine" {
		// The runner and preview measures use 40 workspace-wide LinkedIn
		// senders: 6,000 views and 4,000 follows a day between them.
		var li []string
		for i := range 40 {
			li = append(li, fmt.Sprintf("w%d", i))
		}
		fmt.Fprintf(&b, "      - name: Views\n        senders: [%s]\n        steps:\n          - {id: visit, type: profile_view}\n          - {id: follow, type: follow}\n", strings.Join(li, ", "))
		fmt.Fprintf(&b, "      - name: Big\n        senders: [%s]\n        steps:\n          - {id: visit, type: profile_view}\n", strings.Join(li, ", "))
	}
	return b.String()
}

// seed creates n leads of client, through the leads service, and returns
// their ids.
func seed(ctx context.Context, ls *leads.Service, p apikit.Principal, client, prefix string, n int) []string {
	ids := make([]string, 0, n)
	for i := range n {
		s := func(v string) *string { return &v }
		res, err := ls.Upsert(ctx, p, leads.LeadInput{LinkedInID: s(fmt.Sprintf("%s-%d", prefix, i)), Name: s(fmt.Sprintf("Lead %s %d", prefix, i)),
			Company: s("Northwind"), EmailWork: s(fmt.Sprintf("%s.%d@northwind.test", prefix, i)), ClientID: nilIfEmpty(client)})
		benchkit.Check(err)
		ids = append(ids, res.Lead.ID)
	}
	return ids
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// analyze has Postgres gather the statistics of what was just written in
// bulk, as its autovacuum does on a server that runs it (this machine's
// does not), so that the measured phases are planned as in production.
func analyze(ctx context.Context, d *db.DB) {
	if d.Engine == db.Postgres {
		_, err := d.ExecContext(ctx, "ANALYZE")
		benchkit.Check(err)
	}
}

func median(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(100 * time.Microsecond).String()
}

func p95(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)*95)/100-1].Round(100 * time.Microsecond).String()
}
