// Command leadsload seeds a workspace with many leads and measures the
// leads API on it: p50 and p95 latency of list, list with filters, list with
// q, get and upsert, over HTTP on loopback and at the service level (the
// SQL it runs), plus upserts per second. It prints a Markdown table.
//
//	go run ./bench/leadsload --db /tmp/bench.db --leads 1000000
//	go run ./bench/leadsload --db 'postgres://postgres@127.0.0.1:5432/leadline_bench?sslmode=disable' --leads 1000000
//
// Seeding is deterministic (fixed random seed) and skipped when the
// workspace already holds the requested number of leads.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bench/internal/benchkit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/workspace"
)

func main() {
	dsn := flag.String("db", "/tmp/leadline-bench.db", "database")
	n := flag.Int("leads", 1_000_000, "leads to seed")
	reqs := flag.Int("n", 300, "requests per measured operation")
	throughputOnly := flag.Bool("throughput-only", false, "skip the latency table; measure only the throughput phases")
	firstPageOnly := flag.Bool("first-page-only", false, "measure only the first page against the bare handler")
	filteredOnly := flag.Bool("filtered-only", false, "measure only the filtered list with 1 and 8 clients")
	createsOnly := flag.Bool("creates-only", false, "measure only creates with and without emails")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of leadline's first-page phase (and of the bare handler's to the same name plus .bare) (with --creates-only: of the creates with emails) to this file")
	flag.Parse()
	ctx := context.Background()
	d := benchkit.Open(ctx, *dsn)
	clock := apikit.SystemClock{}
	ws := workspace.NewService(d, clock)
	_, err := ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{
		Name: "bench", Timezone: "UTC", Plan: "pro",
		Members: []workspace.MemberSpec{{Email: "owner@bench.test", Role: apikit.RoleOwner}},
		Clients: []string{"Alpha", "Beta", "Gamma", "Delta"}, Stages: []string{"New", "Contacted", "Replied", "Won", "Lost"},
		Tags: []string{"vip", "event", "cold"}, Lists: []string{"L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10"},
	}}})
	benchkit.Check(err)
	// Each run has a key of its own; earlier runs' keys are revoked, so
	// that runs on one database never reach the workspace's key limit.
	keys, err := ws.Keys(ctx, "bench")
	benchkit.Check(err)
	for _, k := range keys {
		if k.RevokedAt == nil {
			_, err := ws.RevokeKey(ctx, "bench", k.ID)
			benchkit.Check(err)
		}
	}
	_, secret, err := ws.CreateKey(ctx, workspace.KeyInput{Workspace: "bench", MemberEmail: "owner@bench.test", Role: apikit.RoleManager, Name: "bench " + time.Now().Format(time.RFC3339Nano)})
	benchkit.Check(err)
	p, err := ws.Authenticate(ctx, secret)
	benchkit.Check(err)
	cat, err := ws.Catalog(ctx, p)
	benchkit.Check(err)

	have, err := d.NewSelect().Table("leads").Where("workspace_id = ?", p.WorkspaceID).Count(ctx)
	benchkit.Check(err)
	if int(have) < *n {
		start := time.Now()
		benchkit.Check(benchkit.SeedLeads(ctx, d, p.WorkspaceID, cat, int(have), *n, 0))
		log.Printf("seeded %d leads in %s", *n-int(have), time.Since(start).Round(time.Second))
		if d.Engine == db.Postgres {
			_, err = d.ExecContext(ctx, "ANALYZE leads")
			benchkit.Check(err)
		}
	}

	limits := server.RateLimits{Read: 1 << 30, Write: 1 << 30, Spend: 1 << 30}
	srv := server.New(server.Config{DB: d, Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Limits: limits,
		SecretKey: benchkit.Key()})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	benchkit.Check(err)
	d.AddQueryHook(sqlTimer{})
	inner := srv.Handler()
	var serverTime, sqlTime atomic.Int64
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { //nolint:errcheck
		acc := new(atomic.Int64)
		start := time.Now()
		inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sqlAccKey{}, acc)))
		serverTime.Add(int64(time.Since(start)))
		sqlTime.Add(acc.Load())
	}))
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	svc := leads.NewService(d, clock, ws, events.NewLog(d, clock))
	pctx := apikit.WithPrincipal(ctx, p)

	rng := rand.New(rand.NewPCG(7, 7))
	sampleID := func() string {
		var id string
		benchkit.Check(d.NewRaw("SELECT id FROM leads WHERE workspace_id = ? AND linkedin_id = ?", p.WorkspaceID, fmt.Sprintf("LI%08d", rng.IntN(*n))).Scan(ctx, &id))
		return id
	}
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = sampleID()
	}
	// Searches as people type them, taken from real rows: a last name, a
	// full name, a company, the start of an email. The broad words (a
	// job title, a common first name) are measured on their own.
	var words []string
	for i := 0; len(words) < 40; i++ {
		var row struct {
			Name    string  `bun:"name"`
			Company string  `bun:"company"`
			Email   *string `bun:"email_work"`
		}
		benchkit.Check(d.NewRaw("SELECT name, company, email_work FROM leads WHERE workspace_id = ? AND linkedin_id = ?",
			p.WorkspaceID, fmt.Sprintf("LI%08d", rng.IntN(*n))).Scan(ctx, &row))
		first, last, _ := strings.Cut(row.Name, " ")
		words = append(words, last, first+" "+last, strings.Fields(row.Company)[0])
		if row.Email != nil {
			words = append(words, (*row.Email)[:min(len(*row.Email), 12)])
		}
	}
	broad := []string{"engineer", "cto", "anna", "head of"}

	type op struct {
		name    string
		http    func(i int) (string, string, any)
		service func(i int) error
	}
	filterQS := func(i int) string {
		return fmt.Sprintf("stage_id=%s&list_id=%s", cat.Stages[i%len(cat.Stages)].ID, cat.Lists[i%len(cat.Lists)].ID)
	}
	upsertBody := func(i int) leads.LeadInput { return realisticLead(rng, *n, i%2 == 0, true, fmt.Sprint(i)) }
	ops := []op{
		{"list (no filter)", func(i int) (string, string, any) { return "GET", fmt.Sprintf("/v1/leads?offset=%d", (i%20)*50), nil },
			func(i int) error { _, err := svc.List(pctx, p, leads.Filter{Offset: (i % 20) * 50}); return err }},
		{"list (stage + list filter)", func(i int) (string, string, any) { return "GET", "/v1/leads?" + filterQS(i), nil },
			func(i int) error {
				_, err := svc.List(pctx, p, leads.Filter{StageID: cat.Stages[i%len(cat.Stages)].ID, ListID: cat.Lists[i%len(cat.Lists)].ID})
				return err
			}},
		{"list (q)", func(i int) (string, string, any) {
			return "GET", "/v1/leads?q=" + url.QueryEscape(words[i%len(words)]), nil
		},
			func(i int) error { _, err := svc.List(pctx, p, leads.Filter{Q: words[i%len(words)]}); return err }},
		{"list (q, one broad word: 5-20% of leads)", func(i int) (string, string, any) {
			return "GET", "/v1/leads?q=" + url.QueryEscape(broad[i%len(broad)]), nil
		},
			func(i int) error { _, err := svc.List(pctx, p, leads.Filter{Q: broad[i%len(broad)]}); return err }},
		{"get", func(i int) (string, string, any) { return "GET", "/v1/leads/" + ids[i%len(ids)], nil },
			func(i int) error { _, err := svc.Get(pctx, p, ids[i%len(ids)]); return err }},
		{"upsert", func(i int) (string, string, any) { return "POST", "/v1/leads", upsertBody(i) },
			func(i int) error { _, err := svc.Upsert(pctx, p, upsertBody(i)); return err }},
	}

	fmt.Printf("engine: %s, leads: %d, requests per operation: %d\n\n", d.Engine, *n, *reqs)
	fmt.Println("| operation | HTTP p50 | HTTP p95 | service p50 | service p95 | server time beyond its SQL |")
	fmt.Println("|---|---|---|---|---|---|")
	var upsertHTTP []time.Duration
	if *throughputOnly || *firstPageOnly || *filteredOnly || *createsOnly {
		ops = nil
	}
	for _, o := range ops {
		var hs, ss []time.Duration
		serverTime.Store(0)
		sqlTime.Store(0)
		for i := 0; i < *reqs; i++ {
			t := time.Now()
			benchkit.Check(o.service(i))
			ss = append(ss, time.Since(t))
			method, path, body := o.http(i)
			t = time.Now()
			benchkit.Check(call(client, method, base+path, secret, body))
			hs = append(hs, time.Since(t))
		}
		if o.name == "upsert" {
			upsertHTTP = hs
		}
		hp50, hp95, sp50, sp95 := pct(hs, 50), pct(hs, 95), pct(ss, 50), pct(ss, 95)
		// Everything the server does besides waiting for SQL (routing,
		// auth and rate-limit logic, validation, JSON), relative to the SQL
		// it runs for the request, auth and rate limit included.
		over := float64(serverTime.Load()-sqlTime.Load()) / float64(sqlTime.Load())
		fmt.Printf("| %s | %s | %s | %s | %s | %.0f%% |\n", o.name, ms(hp50), ms(hp95), ms(sp50), ms(sp95), 100*over)
	}
	if len(upsertHTTP) > 0 {
		var sum time.Duration
		for _, d := range upsertHTTP {
			sum += d
		}
		fmt.Printf("\nupserts per second (one client, sequential, HTTP): %.0f\n", float64(len(upsertHTTP))/sum.Seconds())
	}

	// Throughput with several clients at once, as real clients send:
	// every field, emails included.
	const clients = 4
	many := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	run := 0
	throughput := func(workers, per int, send func(r *rand.Rand, c, i int) error) float64 {
		run++
		var wg sync.WaitGroup
		start := time.Now()
		for c := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(c), uint64(run)))
				for i := 0; i < per; i++ {
					benchkit.Check(send(r, c, i))
				}
			}()
		}
		wg.Wait()
		return float64(workers*per) / time.Since(start).Seconds()
	}
	upserts := func(newShare int, emails bool) func(r *rand.Rand, c, i int) error {
		return func(r *rand.Rand, c, i int) error {
			body := realisticLead(r, *n, i%10 < newShare, emails, fmt.Sprintf("%d-%d-%d", run, c, i))
			return call(many, "POST", base+"/v1/leads", secret, body)
		}
	}
	var profileTo func(on bool, path string, fn func())
	profile := func(on bool, fn func()) { profileTo(on, *cpuprofile, fn) }
	profileTo = func(on bool, path string, fn func()) {
		if !on || path == "" {
			fn()
			return
		}
		f, err := os.Create(path)
		benchkit.Check(err)
		benchkit.Check(pprof.StartCPUProfile(f))
		fn()
		pprof.StopCPUProfile()
	}
	if !*firstPageOnly && !*filteredOnly {
		if !*createsOnly {
			mixed := throughput(clients, *reqs, upserts(5, true))
			fmt.Printf("upserts per second (%d concurrent clients, HTTP, half new, half matching, every field): %.0f\n", clients, mixed)
		}
		var withEmail float64
		profile(*createsOnly, func() { withEmail = throughput(clients, *reqs, upserts(10, true)) })
		without := throughput(clients, *reqs, upserts(10, false))
		fmt.Printf("creates per second (%d concurrent clients, HTTP) with work and personal emails: %.0f; without emails: %.0f; ratio %.2f\n",
			clients, withEmail, without, withEmail/without)
		if *createsOnly {
			return
		}
	}

	// The first page of the list against a bare handler that runs the
	// same SQL (page and total) with no auth, limits or validation.
	first := func(r *rand.Rand, c, i int) error { return call(many, "GET", base+"/v1/leads", secret, nil) }
	bare := bareList(d, p.WorkspaceID)
	bln, err := net.Listen("tcp", "127.0.0.1:0")
	benchkit.Check(err)
	go http.Serve(bln, bare) //nolint:errcheck
	bareBase := "http://" + bln.Addr().String()
	bareFirst := func(r *rand.Rand, c, i int) error { return call(many, "GET", bareBase+"/", "", nil) }
	if !*filteredOnly {
		// Both warm up first (connections, prepared statements, caches),
		// then take turns, so that neither gains from going second; each
		// round's ratio compares two phases close in time, and the result
		// is the median of those ratios.
		throughput(clients, max(*reqs/5, 100), first)
		throughput(clients, max(*reqs/5, 100), bareFirst)
		var ours, theirs, ratios []float64
		for round := range firstPageRounds {
			var o float64
			profile(round == 0, func() { o = throughput(clients, *reqs, first) })
			var t float64
			profileTo(round == 0 && *cpuprofile != "", *cpuprofile+".bare", func() { t = throughput(clients, *reqs, bareFirst) })
			ours, theirs, ratios = append(ours, o), append(theirs, t), append(ratios, o/t)
			fmt.Printf("first page, %d clients, round %d: leadline %.0f/s, bare handler on the same SQL %.0f/s, ratio %.2f\n", clients, round+1, o, t, o/t)
		}
		fmt.Printf("first page, %d clients, median of %d rounds: leadline %.0f/s, bare handler on the same SQL %.0f/s, ratio %.2f (the median of the rounds' ratios)\n",
			clients, firstPageRounds, median(ours), median(theirs), median(ratios))
	}
	if *firstPageOnly {
		return
	}

	filtered := func(r *rand.Rand, c, i int) error {
		return call(many, "GET", base+"/v1/leads?"+filterQS(c*31+i), secret, nil)
	}
	one, eight := throughput(1, *reqs, filtered), throughput(8, *reqs/2, filtered)
	fmt.Printf("filtered list (stage + list): 1 client %.0f/s, 8 clients %.0f/s, ratio %.2f\n", one, eight, eight/one)
}

// realisticLead is a lead input as an import or a CRM sync sends it: every
// field, the identities included. A new lead has fresh identities; a
// matching one carries a seeded lead's LinkedIn id, public identifier and
// work email (as stored: the seed's address pattern).
func realisticLead(r *rand.Rand, n int, isNew, emails bool, tag string) leads.LeadInput {
	s := func(v string) *string { return &v }
	f, l := benchkit.FirstNames[r.IntN(len(benchkit.FirstNames))], benchkit.Word(r, 3)
	c := benchkit.Word(r, 2) + benchkit.Suffixes[r.IntN(len(benchkit.Suffixes))]
	in := leads.LeadInput{
		Name: s(f + " " + l), Company: s(c), Headline: s(benchkit.Titles[r.IntN(len(benchkit.Titles))] + " at " + c),
		Location: s(benchkit.Cities[r.IntN(len(benchkit.Cities))]), Source: s(benchkit.Sources[r.IntN(len(benchkit.Sources))]),
		Custom: map[string]any{"topic": "platform teams", "score": r.IntN(100), "run": tag},
	}
	if isNew {
		in.LinkedInID = s("NEW-" + tag)
		in.ProviderID = s("PRV-" + tag)
		in.PublicIdentifier = s(strings.ToLower(f + "-" + l + "-" + tag))
		if emails {
			in.EmailWork = s(strings.ToLower(f+"."+l+"."+tag) + "@" + strings.ToLower(strings.Fields(c)[0]) + ".test")
			in.EmailPersonal = s(strings.ToLower(f+l+tag) + "@mail.test")
		}
		return in
	}
	i := r.IntN(n)
	in.LinkedInID = s(fmt.Sprintf("LI%08d", i))
	if emails {
		in.EmailWork = s(fmt.Sprintf("someone.%d@elsewhere.test", i)) // a different email: kept out, named in unchanged_fields
	}
	return in
}

// bareList is the least a server can do for the first page: the same two
// statements the list runs, sent the same way (the page as bun builds it;
// the client-count total prepared, as the list prepares it), scanned and
// encoded, with no authentication, limits or validation.
func bareList(d *db.DB, wsID string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var page []leads.Lead
		err := d.NewSelect().Model(&page).ExcludeColumn("profile").
			Where("l.workspace_id = ?", wsID).OrderExpr("l.id DESC").Limit(50).Scan(r.Context())
		var total int
		if err == nil {
			err = d.SelectPrepared(r.Context(), &total, `SELECT (SELECT coalesce(sum(n), 0) FROM lead_counts WHERE workspace_id = ?) AS total`, wsID)
		}
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": page, "total": total, "limit": 50, "offset": 0, "has_more": total > 50})
	})
}

type sqlAccKey struct{}

// sqlTimer adds the time of every query to the request's accumulator.
type sqlTimer struct{}

func (sqlTimer) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (sqlTimer) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	if acc, ok := ctx.Value(sqlAccKey{}).(*atomic.Int64); ok {
		acc.Add(int64(time.Since(e.StartTime)))
	}
}

func call(c *http.Client, method, url, key string, body any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, url, res.StatusCode, b)
	}
	return nil
}

// firstPageRounds is how many turns leadline and the bare handler take at
// the first page.
const firstPageRounds = 5

// median is the middle of xs, or 0 when nothing was measured (--n 0).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// pct is the p-th percentile of ds, or 0 when nothing was measured.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func init() { log.SetOutput(os.Stderr) }
