// Command inboxload measures the inbox against the goals of
// docs/PERFORMANCE.md: reply ingestion (each reply kept in its thread,
// classified, and reply-stopped or delayed, through the runner's real
// ingest path on the sandbox network), then GET /v1/threads with an intent
// filter over the threads that made, through the full HTTP stack.
//
//	go run ./bench/inboxload --db /tmp/leadline-inbox.db
//	go run ./bench/inboxload --db 'postgres://postgres@127.0.0.1:5432/leadline_inbox?sslmode=disable'
//
// The database should be new (or dropped before each run).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bench/internal/benchkit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/workspace"
)

const clients = 5

func main() {
	dsn := flag.String("db", "/tmp/leadline-inbox.db", "database (new)")
	n := flag.Int("threads", 100_000, "leads, each with one live enrollment and one reply (one thread each)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the ingestion to this file")
	workers := flag.Int("ingest-workers", 0, "parallel ingest workers (0: the runner's default for the engine)")
	flag.Parse()
	ctx := context.Background()
	d := benchkit.Open(ctx, *dsn)

	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	clock := apikit.NewFakeClock(start)
	f, err := setup.Decode(strings.NewReader(benchSetup()))
	benchkit.Check(err)
	_, err = setup.Apply(ctx, d, clock, benchkit.Key(), f)
	benchkit.Check(err)
	pl := platform.New(platform.Config{DB: d, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	w, err := pl.Workspaces.ByName(ctx, "inbox")
	benchkit.Check(err)
	p := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}
	cat, err := pl.Workspaces.Catalog(ctx, p)
	benchkit.Check(err)

	// Leads through the leads service, each enrolled (live) in its
	// client's sequence, which holds them for two months.
	t0 := time.Now()
	ids := make([][]string, clients)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 { // four importers at once, as a CRM sync runs
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < *n; i += 4 {
				c := i % clients
				s := func(v string) *string { return &v }
				res, err := pl.Leads.Upsert(ctx, p, leads.LeadInput{Name: s(fmt.Sprintf("Lead %d", i)), Company: s("Northwind"),
					EmailWork: s(fmt.Sprintf("lead.%d@northwind.test", i)), LinkedInID: s(fmt.Sprintf("inbox-%d", i)), ClientID: &cat.Clients[c].ID})
				benchkit.Check(err)
				mu.Lock()
				ids[c] = append(ids[c], res.Lead.ID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	log.Printf("%d leads in %s", *n, time.Since(t0).Round(time.Second))
	for c := range clients {
		q, err := pl.Sequences.ByName(ctx, w.ID, fmt.Sprintf("Hold C%d", c))
		benchkit.Check(err)
		for s := 0; s < len(ids[c]); s += enrollments.MaxLeadIDs {
			_, err := pl.Enrollments.Commit(ctx, p, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: ids[c][s:min(s+enrollments.MaxLeadIDs, len(ids[c]))], Confirm: true})
			benchkit.Check(err)
		}
	}

	// Every lead replies once to the sender of its enrollment: people's
	// replies in four languages and auto-replies, as providers hand them
	// over (no auto-reply flag).
	net := sandbox.New(1, clock, sandbox.Rates{})
	all, err := pl.Senders.All(ctx, w.ID)
	benchkit.Check(err)
	for _, s := range all {
		net.Register(s)
	}
	page, err := pl.Enrollments.List(ctx, p, enrollments.Filter{Limit: 1})
	benchkit.Check(err)
	if page.Total != *n {
		log.Fatalf("%d enrollments, want %d", page.Total, *n)
	}
	var rows []struct {
		LeadID   string `bun:"lead_id"`
		SenderID string `bun:"sender_id"`
	}
	benchkit.Check(d.NewSelect().Table("enrollments").Column("lead_id", "sender_id").Scan(ctx, &rows))
	for i, r := range rows {
		text := replies[i%len(replies)]
		in := senders.Inbound{Kind: senders.InboundReply, SenderID: r.SenderID, LeadID: r.LeadID, At: start.Add(time.Duration(i) * time.Millisecond),
			ProviderMessageID: fmt.Sprintf("bench-%d", i), Subject: text.subject, Body: text.body, Headers: text.headers}
		net.Deliver(in)
	}
	clock.Set(start.Add(time.Duration(*n)*time.Millisecond + time.Second))
	pl.UseTransports(map[string]senders.Transport{senders.TransportSandbox: net})
	runner := pl.Runner()
	if *workers > 0 {
		runner.IngestWorkers = *workers
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		benchkit.Check(err)
		benchkit.Check(pprof.StartCPUProfile(f))
	}
	t0 = time.Now()
	benchkit.Check(runner.Ingest(ctx))
	ingest := time.Since(t0)
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	var threads, replied int
	cnt, err := d.NewSelect().Table("threads").Count(ctx)
	benchkit.Check(err)
	threads = int(cnt)
	cnt, err = d.NewSelect().Table("enrollments").Where("status = ?", "replied").Count(ctx)
	benchkit.Check(err)
	replied = int(cnt)
	rowsOut := [][3]string{{"reply ingestion, classified and reply-stopped", "≥ 1,000 per second",
		fmt.Sprintf("%.0f replies/s (%d replies in %s: %d threads, %d enrollments reply-stopped)", float64(*n)/ingest.Seconds(), *n,
			ingest.Round(time.Millisecond), threads, replied)}}

	// GET /v1/threads with an intent filter, through the HTTP stack, with a
	// workspace key and a client-scoped key.
	srv := server.New(server.Config{DB: d, Clock: apikit.SystemClock{}, Logger: slog.New(slog.DiscardHandler),
		Limits: server.RateLimits{Read: 1 << 30, Write: 1 << 30, Spend: 1 << 30}})
	h := srv.Handler()
	key := func(name string, clients ...string) string {
		_, secret, err := pl.Workspaces.CreateKey(ctx, workspace.KeyInput{Workspace: "inbox", MemberEmail: "owner@inbox.test",
			Role: apikit.RoleClientViewer, Clients: clients, Name: name})
		benchkit.Check(err)
		return secret
	}
	keys := map[string]string{"workspace key": key("bench"), "client-scoped key": key("bench C1", "C1")}
	measure := func(when string) {
		for _, label := range []string{"workspace key", "client-scoped key"} {
			rowsOut = append(rowsOut, [3]string{fmt.Sprintf("GET /v1/threads?intent=… (%s), %d threads%s", label, threads, when), "p95 < 30 ms",
				list(h, keys[label])})
		}
	}
	measure("")
	if d.Engine == db.Postgres {
		// What autovacuum leaves: the visibility map set, so that counts
		// read the index alone.
		_, err := d.ExecContext(ctx, "VACUUM (ANALYZE) threads")
		benchkit.Check(err)
		measure(", after VACUUM ANALYZE")
	}

	fmt.Printf("\n%s, %s\n\n| measure | goal | result |\n|---|---|---|\n", d.Engine, time.Now().Format(time.DateOnly))
	for _, r := range rowsOut {
		fmt.Printf("| %s | %s | %s |\n", r[0], r[1], r[2])
	}
}

// list times 300 calls of GET /v1/threads?intent=… with key (after 50
// warm-up calls), cycling over the intents, and returns p50 and p95.
func list(h http.Handler, key string) string {
	return benchkit.Timed(h, key, 50, 300, func(i int) string {
		return "/v1/threads?intent=" + string(inbox.Intents[i%len(inbox.Intents)])
	})
}

type reply struct {
	subject, body string
	headers       map[string]string
}

// replies are what leads answer: people in four languages, and
// auto-replies with and without a return date.
var replies = []reply{
	{"Re: Hello", "Sounds interesting, happy to chat. How about Thursday afternoon?", nil},
	{"Re: Hello", "Thanks for reaching out. Can you send me some more details and pricing?", nil},
	{"Re: Hello", "Not right now, maybe check back next quarter.", nil},
	{"Re: Hello", "Not interested, please remove me from your list.", nil},
	{"Re: Hello", "I'm not the right person for this, you should talk to our head of engineering.", nil},
	{"Automatic reply: Hello", "I am out of the office until 16 March with limited access to email.", map[string]string{"Auto-Submitted": "auto-replied"}},
	{"AW: Hallo", "Klingt interessant, gerne können wir telefonieren. Passt Ihnen Donnerstag?", nil},
	{"Abwesenheitsnotiz: Hallo", "Ich bin derzeit nicht im Büro.", nil},
	{"RE: Bonjour", "Pas pour le moment, recontactez-moi le trimestre prochain.", nil},
	{"RE: Hola", "Me interesa, ¿podemos hablar el jueves por la tarde?", nil},
	{"Re: Hello", "Thanks!", nil},
}

// benchSetup is a workspace with 5 clients, 4 mailboxes each, and a
// sequence per client that waits two months before its email.
func benchSetup() string {
	var b strings.Builder
	b.WriteString("workspaces:\n  - name: inbox\n    timezone: Europe/Berlin\n    members: [{email: owner@inbox.test, role: owner}]\n")
	b.WriteString("    clients: [C0, C1, C2, C3, C4]\n    senders:\n")
	for i := range 4 * clients {
		fmt.Fprintf(&b, "      - {name: m%d, channel: email, client: C%d, address: m%d@inbox.test, caps: {email: 100}}\n", i, i%clients, i)
	}
	b.WriteString("    sequences:\n")
	for c := range clients {
		var names []string
		for i := c; i < 4*clients; i += clients {
			names = append(names, fmt.Sprintf("m%d", i))
		}
		fmt.Fprintf(&b, "      - name: Hold C%d\n        client: C%d\n        senders: [%s]\n        steps:\n          - {id: hold, type: wait, days: 60}\n"+
			"          - {id: mail, type: email, subject: Hello, body: \"Hello {{first_name|there}}\"}\n", c, c, strings.Join(names, ", "))
	}
	return b.String()
}
