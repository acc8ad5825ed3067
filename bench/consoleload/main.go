// Command consoleload measures the web console's pages at scale: it seeds
// a workspace with --n leads (tags, stages, four clients, sequences with
// enrolments on a fraction of the leads, threads with their messages,
// tasks, and activity for the reports), signs a manager and a client
// viewer in through the console's invite link, and requests every page as
// a browser does (GET with the session cookie; the polled blocks with
// HX-Request), then prints p50, p95 and max of each page's server time
// (the time to the full answer over loopback).
//
//	go run ./bench/consoleload --db /tmp/leadline-console.db --reuse
//	go run ./bench/consoleload --postgres 'postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' --reuse
//
// On Postgres the script works in a database of its own on that server
// (--pgname). Without --reuse the database is new and removed at the
// end; with --reuse it is kept, and a run on a seeded database skips the
// seeding.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bench/internal/benchkit"
	"github.com/leadline/leadline/console"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/workspace"
)

const (
	wsName    = "console"
	clients   = 4
	perClient = 3 // sequences per client
	password  = "console-bench-password"
)

func main() {
	path := flag.String("db", "/tmp/leadline-console.db", "SQLite database file")
	pgURL := flag.String("postgres", "", "a Postgres server's URL: the script works in a database of its own there (--pgname)")
	pgName := flag.String("pgname", "leadline_console", "the Postgres database's name")
	reuse := flag.Bool("reuse", false, "keep the database (and use it when it is seeded already)")
	n := flag.Int("n", 1_000_000, "leads")
	nEvents := flag.Int("events", 0, "activity events for the reports, over 120 days (0: half of --n)")
	calls := flag.Int("calls", 200, "timed requests per page (0: only seed)")
	warmup := flag.Int("warmup", 20, "untimed requests per page before them")
	only := flag.String("only", "", "request only the pages whose label contains this (or one of the texts it separates with |)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed requests to this file")
	flag.Parse()
	ctx := context.Background()
	if *nEvents == 0 {
		*nEvents = *n / 2
	}

	dsn := *path
	if *pgURL != "" {
		dsn = pgDatabase(ctx, *pgURL, *pgName, !*reuse)
		if !*reuse {
			defer dropPG(*pgURL, *pgName)
		}
	} else if !*reuse {
		for _, s := range []string{"", "-wal", "-shm"} {
			os.Remove(*path + s)
		}
		defer func() {
			for _, s := range []string{"", "-wal", "-shm"} {
				os.Remove(*path + s)
			}
		}()
	}
	d := benchkit.Open(ctx, dsn)
	defer d.Close()

	if seeded(ctx, d, *n) {
		log.Printf("the database holds %d seeded leads: seeding skipped", *n)
	} else {
		t0 := time.Now()
		seed(ctx, d, *n, *nEvents)
		log.Printf("seeded in %s", time.Since(t0).Round(time.Second))
	}
	if *calls > 0 {
		measure(ctx, d, *n, *calls, *warmup, *only, *cpuprofile)
	}
}

// pgDatabase returns the URL of the database name on the server of
// base, creating it (anew when fresh).
func pgDatabase(ctx context.Context, base, name string, fresh bool) string {
	conn, err := pgx.Connect(ctx, base)
	benchkit.Check(err)
	defer conn.Close(ctx)
	if fresh {
		_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize())
		benchkit.Check(err)
	}
	var exists bool
	benchkit.Check(conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists))
	if !exists {
		_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		benchkit.Check(err)
	}
	u, err := url.Parse(base)
	benchkit.Check(err)
	u.Path = "/" + name
	return u.String()
}

func dropPG(base, name string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	benchkit.Check(err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	benchkit.Check(err)
}

// seeded reports whether the workspace is there with its n leads and
// its enrolments (the seeding's last part but the activity).
func seeded(ctx context.Context, d *db.DB, n int) bool {
	pl := platform.New(platform.Config{DB: d, Logger: slog.New(slog.DiscardHandler)})
	w, err := pl.Workspaces.ByName(ctx, wsName)
	if apikit.ErrorCode(err) == apikit.ENotFound {
		return false
	}
	benchkit.Check(err)
	have, err := d.NewSelect().Table("leads").Where("workspace_id = ?", w.ID).Count(ctx)
	benchkit.Check(err)
	tasks, err := d.NewSelect().Table("tasks").Where("workspace_id = ?", w.ID).Count(ctx)
	benchkit.Check(err)
	if int(have) != n || tasks == 0 {
		log.Fatalf("the database holds a workspace %q with %d leads and %d tasks, not a finished seed of %d leads: run without --reuse", wsName, have, tasks, n)
	}
	return true
}

// benchSetup is an agency's workspace: four clients, each with three
// mailboxes, two LinkedIn senders and three sequences (a long wait, then
// an email), stages, tags and lists.
func benchSetup() string {
	var b strings.Builder
	b.WriteString("workspaces:\n  - name: " + wsName + "\n    timezone: Europe/Berlin\n    plan: pro\n    members: [{email: owner@console.test, role: owner}]\n")
	b.WriteString("    clients: [C0, C1, C2, C3]\n    stages: [New, Contacted, Replied, Meeting, Won, Lost]\n")
	b.WriteString("    tags: [vip, event, cold, warm, partner, churned, fintech, saas]\n    lists: [L1, L2, L3, L4, L5, L6, L7, L8, L9, L10]\n    senders:\n")
	for c := range clients {
		for i := range 3 {
			fmt.Fprintf(&b, "      - {name: m%d-%d, channel: email, client: C%d, address: m%d-%d@console.test, caps: {email: 100}, monthly_cost: 9}\n", c, i, c, c, i)
		}
		for i := range 2 {
			fmt.Fprintf(&b, "      - {name: s%d-%d, channel: linkedin, client: C%d, premium: true, monthly_cost: 79}\n", c, i, c)
		}
	}
	b.WriteString("    sequences:\n")
	for c := range clients {
		for q := range perClient {
			fmt.Fprintf(&b, "      - name: Outreach C%d-%d\n        client: C%d\n        senders: [m%d-0, m%d-1, m%d-2]\n        steps:\n"+
				"          - {id: hold, type: wait, days: 60}\n          - {id: mail, type: email, subject: Hello, body: \"Hello {{first_name|there}}\"}\n",
				c, q, c, c, c, c)
		}
	}
	return b.String()
}

var replies = []string{
	"Thanks, this sounds interesting. Can we talk next week?",
	"Not right now, maybe next quarter.",
	"Please remove me from your list.",
	"What does it cost for a team of 20?",
	"I am out of office until Monday with limited access to email.",
	"Wrong person, please reach out to our head of sales.",
}

// seed fills the database: the workspace, the leads (through
// benchkit.SeedLeads: 30% tagged), 120 days of activity through the log
// (benchkit.Activity), 5% of the leads enrolled through the enrolments
// service, a fifth of those replying (through the runner's ingest: a
// thread each, classified), and a task for two fifths of them.
func seed(ctx context.Context, d *db.DB, n, nEvents int) {
	now := time.Now()
	loc, _ := time.LoadLocation("Europe/Berlin")
	first := time.Date(now.Year(), now.Month(), now.Day()-119, 0, 0, 0, 0, loc)
	clock := apikit.NewFakeClock(first.Add(-24 * time.Hour))
	f, err := setup.Decode(strings.NewReader(benchSetup()))
	benchkit.Check(err)
	_, err = setup.Apply(ctx, d, clock, benchkit.Key(), f)
	benchkit.Check(err)
	pl := platform.New(platform.Config{DB: d, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	w, err := pl.Workspaces.ByName(ctx, wsName)
	benchkit.Check(err)
	p := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}
	cat, err := pl.Workspaces.Catalog(ctx, p)
	benchkit.Check(err)

	t0 := time.Now()
	benchkit.Check(benchkit.SeedLeads(ctx, d, w.ID, cat, 0, n, 30))
	log.Printf("%d leads in %s", n, time.Since(t0).Round(time.Second))
	analyze(ctx, d)

	// Every 20th lead, by client, to be enrolled; the activity is about
	// them and about as many leads again.
	var rows []struct {
		ID       string `bun:"id"`
		ClientID string `bun:"client_id"`
	}
	benchkit.Check(d.NewSelect().Table("leads").Column("id", "client_id").Where("workspace_id = ?", w.ID).OrderExpr("linkedin_id").Scan(ctx, &rows))
	byClient := map[string][]string{}
	var pool []string
	for i, r := range rows {
		if i%20 == 0 {
			byClient[r.ClientID] = append(byClient[r.ClientID], r.ID)
		}
		if i%10 == 0 {
			pool = append(pool, r.ID)
		}
	}
	rows = nil

	var qs []sequences.Sequence
	benchkit.Check(d.NewSelect().Model(&qs).Where("workspace_id = ?", w.ID).OrderExpr("name").Scan(ctx))
	var subjects []benchkit.Subject
	for _, q := range qs {
		for _, s := range q.SenderIDs {
			subjects = append(subjects, benchkit.Subject{Client: *q.ClientID, Sequence: q.ID, Sender: s})
		}
	}
	t0 = time.Now()
	written := benchkit.Activity(ctx, d, pl.Log, clock, w.ID, subjects, pool, first, nEvents, 120, 5000)
	log.Printf("%d events in %s", written, time.Since(t0).Round(time.Second))

	// Enrolments: each client's leads spread over its sequences.
	clock.Set(now.Add(-2 * time.Hour))
	t0 = time.Now()
	enrolled := 0
	for _, q := range qs {
		ids := byClient[*q.ClientID]
		k := slices.IndexFunc(qs, func(x sequences.Sequence) bool { return x.ID == q.ID }) % perClient
		share := ids[k*len(ids)/perClient : (k+1)*len(ids)/perClient]
		for s := 0; s < len(share); s += enrollments.MaxLeadIDs {
			res, err := pl.Enrollments.Commit(ctx, p, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: share[s:min(s+enrollments.MaxLeadIDs, len(share))], Confirm: true})
			benchkit.Check(err)
			enrolled += len(res.EnrollmentIDs)
		}
	}
	log.Printf("%d enrolments in %s", enrolled, time.Since(t0).Round(time.Second))

	// A fifth of the enrolled leads reply, through the runner's ingest.
	var ens []struct {
		ID         string `bun:"id"`
		LeadID     string `bun:"lead_id"`
		SenderID   string `bun:"sender_id"`
		SequenceID string `bun:"sequence_id"`
		ClientID   string `bun:"client_id"`
	}
	benchkit.Check(d.NewSelect().Table("enrollments").Column("id", "lead_id", "sender_id", "sequence_id", "client_id").
		Where("workspace_id = ?", w.ID).OrderExpr("id").Scan(ctx, &ens))
	net := sandbox.New(1, clock, sandbox.Rates{})
	all, err := pl.Senders.All(ctx, w.ID)
	benchkit.Check(err)
	for _, s := range all {
		net.Register(s)
	}
	at := clock.Now()
	threads := 0
	for i, e := range ens {
		if i%5 != 0 {
			continue
		}
		net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.SenderID, LeadID: e.LeadID, At: at.Add(time.Duration(i) * time.Millisecond),
			ProviderMessageID: fmt.Sprintf("console-%d", i), Subject: "Re: Hello", Body: replies[i%len(replies)]})
		threads++
	}
	clock.Set(at.Add(time.Duration(len(ens))*time.Millisecond + time.Second))
	pl.UseTransports(map[string]senders.Transport{senders.TransportSandbox: net})
	t0 = time.Now()
	benchkit.Check(pl.Runner().Ingest(ctx))
	log.Printf("%d replies in %s", threads, time.Since(t0).Round(time.Second))

	// Tasks for two fifths of the enrolments, due over three weeks
	// around now, opened as a task step opens them.
	t0 = time.Now()
	opened := 0
	for s := 0; s < len(ens); s += 500 {
		benchkit.Check(d.InTx(ctx, func(ctx context.Context) error {
			for i := s; i < min(s+500, len(ens)); i++ {
				if i%5 != 1 && i%5 != 3 {
					continue
				}
				e := ens[i]
				_, err := pl.Tasks.Open(ctx, tasks.Task{WorkspaceID: w.ID, ClientID: &e.ClientID, LeadID: e.LeadID, EnrollmentID: e.ID,
					SequenceID: e.SequenceID, StepID: "hold", StepStartedAt: at, Title: "Call the lead",
					DueAt: at.Add(time.Duration(i%21-10) * 24 * time.Hour)})
				if err != nil {
					return err
				}
				opened++
			}
			return nil
		}))
	}
	log.Printf("%d tasks in %s", opened, time.Since(t0).Round(time.Second))
	if d.Engine == db.Postgres {
		benchkit.Check(pl.Reports.Compact(ctx, now))
		_, err := d.ExecContext(ctx, "VACUUM (ANALYZE)")
		benchkit.Check(err)
	}
}

func analyze(ctx context.Context, d *db.DB) {
	if d.Engine == db.Postgres {
		_, err := d.ExecContext(ctx, "ANALYZE")
		benchkit.Check(err)
	}
}

// page is one console page as a browser asks for it.
type page struct {
	label string
	// path is the page's address (under /app) for the i-th request.
	path func(i int) string
	// hx: the request is htmx's (a polled block).
	hx bool
	// form, when set, is POSTed with the page's CSRF token.
	form url.Values
}

func measure(ctx context.Context, d *db.DB, n, calls, warmup int, only, cpuprofile string) {
	pl := platform.New(platform.Config{DB: d, Logger: slog.New(slog.DiscardHandler), SecretKey: benchkit.Key()})
	w, err := pl.Workspaces.ByName(ctx, wsName)
	benchkit.Check(err)
	owner := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}
	cat, err := pl.Workspaces.Catalog(ctx, owner)
	benchkit.Check(err)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	benchkit.Check(err)
	srv := &http.Server{Handler: console.New(pl, console.Options{}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	manager := signIn(ctx, pl, base, "manager@console.test", apikit.RoleManager, nil)
	viewer := signIn(ctx, pl, base, "viewer@console.test", apikit.RoleClientViewer, []string{"C1"})

	// What the pages are about: enrolled leads with a thread, their
	// threads, sequences, senders, search words from real rows.
	var threads []struct {
		ID     string `bun:"id"`
		LeadID string `bun:"lead_id"`
	}
	benchkit.Check(d.NewSelect().Table("threads").Column("id", "lead_id").Where("workspace_id = ?", w.ID).OrderExpr("id").Limit(50).Scan(ctx, &threads))
	var seqs, snds []string
	benchkit.Check(d.NewSelect().Table("sequences").Column("id").Where("workspace_id = ?", w.ID).OrderExpr("name").Scan(ctx, &seqs))
	benchkit.Check(d.NewSelect().Table("senders").Column("id").Where("workspace_id = ?", w.ID).OrderExpr("name").Scan(ctx, &snds))
	var words []string
	for i := 0; len(words) < 30; i++ {
		var row struct {
			Name    string `bun:"name"`
			Company string `bun:"company"`
		}
		benchkit.Check(d.NewSelect().Table("leads").Column("name", "company").Where("workspace_id = ? AND linkedin_id = ?", w.ID,
			fmt.Sprintf("LI%08d", (i*7919)%n)).Scan(ctx, &row))
		_, last, _ := strings.Cut(row.Name, " ")
		words = append(words, last, row.Name, strings.Fields(row.Company)[0])
	}
	var c1 string
	for _, c := range cat.Clients {
		if c.Name == "C1" {
			c1 = c.ID
		}
	}
	var ids []string
	for _, t := range threads[:25] {
		ids = append(ids, t.LeadID)
	}
	today := time.Now()
	period := fmt.Sprintf("from=%s&to=%s", today.AddDate(0, 0, -89).Format(time.DateOnly), today.Format(time.DateOnly))
	at := func(p string) func(int) string { return func(int) string { return p } }
	thread := func(suffix string) func(int) string {
		return func(i int) string { return "/inbox/" + threads[i%len(threads)].ID + suffix }
	}
	deep := (n / 2 / apikit.DefaultLimit) * apikit.DefaultLimit
	pages := []page{
		{label: "leads", path: at("/leads")},
		{label: "leads, stage filter", path: func(i int) string { return "/leads?stage_id=" + cat.Stages[i%len(cat.Stages)].ID }},
		{label: "leads, tag + client filter", path: func(i int) string {
			return "/leads?tag_id=" + cat.Tags[i%len(cat.Tags)].ID + "&client_id=" + cat.Clients[i%len(cat.Clients)].ID
		}},
		{label: "leads, search q", path: func(i int) string { return "/leads?q=" + url.QueryEscape(words[i%len(words)]) }},
		{label: fmt.Sprintf("leads, deep page (offset %d)", deep), path: at(fmt.Sprintf("/leads?offset=%d", deep))},
		{label: "lead", path: func(i int) string { return "/leads/" + threads[i%len(threads)].LeadID }},
		{label: "sequences", path: at("/sequences")},
		{label: "sequence", path: func(i int) string { return "/sequences/" + seqs[i%len(seqs)] }},
		{label: "sequence enrol form", path: func(i int) string { return "/sequences/" + seqs[i%len(seqs)] + "/enroll" }},
		{label: "sequence preview (25 lead ids)", path: func(i int) string { return "/sequences/" + seqs[i%len(seqs)] + "/preview" },
			form: url.Values{"ids": {strings.Join(ids, "\n")}}},
		{label: "senders", path: at("/senders")},
		{label: "sender", path: func(i int) string { return "/senders/" + snds[i%len(snds)] }},
		{label: "inbox", path: at("/inbox")},
		{label: "inbox, polled block (htmx)", path: at("/inbox"), hx: true},
		{label: "inbox, intent filter", path: func(i int) string { return "/inbox?intent=" + []string{"interested", "not_now", "question"}[i%3] }},
		{label: "thread", path: thread("")},
		{label: "thread messages, polled block (htmx)", path: thread("/messages"), hx: true},
		{label: "tasks", path: at("/tasks")},
		{label: "tasks, overdue", path: at("/tasks?overdue=true")},
		{label: "reports overview, 90 days", path: at("/reports?" + period)},
		{label: "reports per sequence, 90 days", path: at("/reports/sequences?" + period)},
		{label: "reports per sender, 90 days", path: at("/reports/senders?" + period)},
		{label: "reports per client, 90 days", path: at("/reports/clients?" + period)},
		{label: "reports overview of a client, weekly", path: func(i int) string {
			return "/reports?interval=week&client_id=" + cat.Clients[i%len(cat.Clients)].ID + "&" + period
		}},
		{label: "members", path: at("/members")},
		{label: "settings: keys", path: at("/settings/keys")},
		{label: "settings: webhooks", path: at("/settings/webhooks")},
		{label: "settings: suppressions", path: at("/settings/suppressions")},
	}
	viewerPages := []page{
		{label: "client viewer: leads", path: at("/leads")},
		{label: "client viewer: leads, stage filter", path: func(i int) string { return "/leads?stage_id=" + cat.Stages[i%len(cat.Stages)].ID }},
		{label: "client viewer: inbox", path: at("/inbox")},
		{label: "client viewer: tasks", path: at("/tasks")},
		{label: "client viewer: reports overview, 90 days", path: at("/reports?client_id=" + c1 + "&" + period)},
	}

	var prof *os.File
	if cpuprofile != "" {
		prof, err = os.Create(cpuprofile)
		benchkit.Check(err)
		benchkit.Check(pprof.StartCPUProfile(prof))
	}
	var out [][4]string
	run := func(s *session, ps []page) {
		for _, pg := range ps {
			if !slices.ContainsFunc(strings.Split(only, "|"), func(o string) bool { return strings.Contains(pg.label, o) }) {
				continue
			}
			var ds []time.Duration
			for i := range warmup + calls {
				el := s.get(base, pg, i)
				if i >= warmup {
					ds = append(ds, el)
				}
			}
			slices.Sort(ds)
			out = append(out, [4]string{pg.label, ms(pct(ds, 50)), ms(pct(ds, 95)), ms(ds[len(ds)-1])})
			log.Printf("%s: p50 %s, p95 %s", pg.label, out[len(out)-1][1], out[len(out)-1][2])
		}
	}
	run(manager, pages)
	run(viewer, viewerPages)
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
	}

	load, _ := exec.Command("uptime").Output()
	fmt.Printf("\n%s, %d leads, %s; %d timed requests per page after %d; %s\n", d.Engine, n, time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		calls, warmup, strings.TrimSpace(string(load)))
	fmt.Println("\n| page | p50 | p95 | max |\n|---|---|---|---|")
	for _, r := range out {
		fmt.Printf("| %s | %s | %s | %s |\n", r[0], r[1], r[2], r[3])
	}
}

// session is a browser signed in to the console: its cookies and the
// CSRF token of its forms.
type session struct {
	c    *http.Client
	csrf string
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn invites email (as `leadline members invite` does; an existing
// member sets a new password) and follows the invite link as a browser:
// the form, then the password, which starts a session.
func signIn(ctx context.Context, pl *platform.Platform, base, email string, role apikit.Role, clients []string) *session {
	_, token, err := pl.Workspaces.Invite(ctx, workspace.InviteInput{Workspace: wsName, Email: email, Role: role, Clients: clients})
	benchkit.Check(err)
	jar, err := cookiejar.New(nil)
	benchkit.Check(err)
	s := &session{c: &http.Client{Jar: jar, Transport: &http.Transport{MaxIdleConnsPerHost: 2}}}
	link := base + console.DefaultPrefix + "/invite/" + url.PathEscape(token)
	res, err := s.c.Get(link)
	benchkit.Check(err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfInput.FindSubmatch(body)
	if res.StatusCode != http.StatusOK || m == nil {
		log.Fatalf("GET the invite link: %d %s", res.StatusCode, body)
	}
	res, err = s.c.PostForm(link, url.Values{"csrf": {string(m[1])}, "password": {password}, "confirm": {password}})
	benchkit.Check(err)
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	// The redirects end on the leads, with the session's forms.
	m = csrfInput.FindSubmatch(body)
	if res.StatusCode != http.StatusOK || m == nil || !strings.HasSuffix(res.Request.URL.Path, "/leads") {
		log.Fatalf("accept the invite: %d at %s %s", res.StatusCode, res.Request.URL, body)
	}
	s.csrf = string(m[1])
	return s
}

// get requests the i-th address of pg and returns the time to its whole
// answer; anything but 200 stops the script.
func (s *session) get(base string, pg page, i int) time.Duration {
	u := base + console.DefaultPrefix + pg.path(i)
	var req *http.Request
	if pg.form != nil {
		f := url.Values{"csrf": {s.csrf}}
		for k, v := range pg.form {
			f[k] = v
		}
		req, _ = http.NewRequest(http.MethodPost, u, strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req, _ = http.NewRequest(http.MethodGet, u, nil)
	}
	if pg.hx {
		req.Header.Set("HX-Request", "true")
	}
	t0 := time.Now()
	res, err := s.c.Do(req)
	benchkit.Check(err)
	body, err := io.ReadAll(res.Body)
	el := time.Since(t0)
	res.Body.Close()
	benchkit.Check(err)
	if res.StatusCode != http.StatusOK || res.Request.URL.String() != u {
		log.Fatalf("%s %s: %d at %s\n%s", req.Method, u, res.StatusCode, res.Request.URL, body)
	}
	return el
}

// pct is the p-th percentile of the sorted ds.
func pct(ds []time.Duration, p int) time.Duration { return ds[(len(ds)-1)*p/100] }

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
