// Command importload times the CSV import: it writes a file of --n rows
// with work emails and LinkedIn URLs, half of them matching leads it
// seeded first (with a new title, so that they are updated), imports it as
// `leadline import` does, and then sends --one-by-one other rows of the
// same shape through POST /v1/leads, one request each, for comparison.
//
//	go run ./bench/importload --db /tmp/import.db --n 1000000
//	go run ./bench/importload --db 'postgres://…' --n 1000000
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bench/internal/benchkit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/workspace"
)

func main() {
	dsn := flag.String("db", "/tmp/leadline-import.db", "database: a SQLite file or a postgres:// URL (a fresh one: the script adds its own workspace)")
	n := flag.Int("n", 1_000_000, "rows in the imported file; half match leads seeded first")
	oneByOne := flag.Int("one-by-one", 2000, "rows sent one by one through POST /v1/leads for comparison (0: none)")
	batch := flag.Int("batch", leads.DefaultImportBatch, "rows per transaction")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the import (not the seed) to this file")
	facets := flag.Bool("facets", false, "give every row a stage (another one in the import than in the seed, so that each update changes it) and tag every lead")
	flag.Parse()
	ctx := context.Background()
	d := benchkit.Open(ctx, *dsn)
	defer d.Close()
	// Keep every Postgres connection open, so that serverCPU finds the
	// backends that did the import's work still there at its end.
	d.DB.SetMaxIdleConns(64)
	d.DB.SetConnMaxIdleTime(0)
	pl := platform.New(platform.Config{DB: d, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SecretKey: benchkit.Key()})
	run := time.Now().UnixNano()
	name := fmt.Sprintf("import-%d", run)
	_, err := pl.Workspaces.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{
		Name: name, Timezone: "UTC", Plan: "pro",
		Members: []workspace.MemberSpec{{Email: "owner@bench.test", Role: apikit.RoleOwner}},
		Clients: []string{"Alpha"}, Tags: []string{"fair"}, Stages: []string{"New", "Contacted", "Won"},
	}}})
	benchkit.Check(err)
	_, secret, err := pl.Workspaces.CreateKey(ctx, workspace.KeyInput{Workspace: name, MemberEmail: "owner@bench.test", Role: apikit.RoleManager})
	benchkit.Check(err)
	p, err := pl.Workspaces.Authenticate(ctx, secret)
	benchkit.Check(err)
	pctx := apikit.WithPrincipal(ctx, p)
	var opt leads.ImportOptions
	var stages []string
	if *facets {
		cat, err := pl.Workspaces.Catalog(pctx, p)
		benchkit.Check(err)
		for _, s := range cat.Stages {
			stages = append(stages, s.ID)
		}
		opt.TagIDs = []string{cat.Tags[0].ID}
	}
	dir, err := os.MkdirTemp("", "importload")
	benchkit.Check(err)
	defer os.RemoveAll(dir)

	half := *n / 2
	seed := filepath.Join(dir, "seed.csv")
	writeCSV(seed, 0, half, "Engineer", stages, 0)
	created := importFile(pctx, pl, d, p, seed, *batch, opt, "seed (creates only)")
	if created.Created != half {
		log.Fatalf("seed created %d of %d", created.Created, half)
	}
	file := filepath.Join(dir, "leads.csv")
	writeCSV(file, 0, *n, "Director", stages, 1) // rows < half match a seeded lead
	if *cpuprofile != "" {
		pf, err := os.Create(*cpuprofile)
		benchkit.Check(err)
		benchkit.Check(pprof.StartCPUProfile(pf))
	}
	rep := importFile(pctx, pl, d, p, file, *batch, opt, "import (half updates)")
	pprof.StopCPUProfile()
	if rep.Updated != half || rep.Created != *n-half || rep.Rejected != 0 {
		log.Fatalf("unexpected counts: %+v", rep)
	}

	if *oneByOne > 0 {
		oneByOneRate(pctx, pl, d, secret, *n, *oneByOne)
	}
}

// cpuTime is the CPU time this process used so far (user and system). On
// SQLite the database works inside the process; on Postgres the server's
// share is not counted.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	benchkit.Check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAverage is the machine's load over the last 1, 5 and 15 minutes
// (Linux), so that a run says how busy its cores were.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// writeCSV writes rows from..to: person i has a work email and a LinkedIn
// URL, a name, a company and title, and with stages the stage
// stages[(i+shift)%len(stages)].
func writeCSV(path string, from, to int, title string, stages []string, shift int) {
	f, err := os.Create(path)
	benchkit.Check(err)
	w := bufio.NewWriterSize(f, 1<<20)
	header := "First Name,Last Name,Email,LinkedIn URL,Company,Title"
	if len(stages) > 0 {
		header += ",stage_id"
	}
	fmt.Fprintln(w, header)
	for i := from; i < to; i++ {
		fmt.Fprintf(w, "Ann%d,Lee%d,ann.lee.%d@corp%d.test,https://www.linkedin.com/in/ann-lee-%d,Corp %d,%s", i, i, i, i%997, i, i%997, title)
		if len(stages) > 0 {
			fmt.Fprintf(w, ",%s", stages[(i+shift)%len(stages)])
		}
		fmt.Fprintln(w)
	}
	benchkit.Check(w.Flush())
	benchkit.Check(f.Close())
}

// serverCPU is the CPU time (user and system) the Postgres backends
// serving this database have used so far, read from /proc: the server runs
// on this machine, over loopback. Backends that ended are not counted, so
// main keeps its connections open. On SQLite it is zero.
func serverCPU(ctx context.Context, d *db.DB) time.Duration {
	if d.Engine != db.Postgres {
		return 0
	}
	var pids []int
	benchkit.Check(d.NewRaw(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`).Scan(ctx, &pids))
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: utime and
		// stime are the 12th and 13th.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		var u, s int64
		fmt.Sscan(f[11], &u)
		fmt.Sscan(f[12], &s)
		ticks += u + s
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

func importFile(ctx context.Context, pl *platform.Platform, d *db.DB, p apikit.Principal, path string, batch int, opt leads.ImportOptions, what string) leads.Report {
	f, err := os.Open(path)
	benchkit.Check(err)
	defer f.Close()
	start, cpu, server := time.Now(), cpuTime(), serverCPU(ctx, d)
	opt.BatchSize = batch
	rep, err := pl.Leads.Import(ctx, p, f, opt)
	benchkit.Check(err)
	took, used, served := time.Since(start), cpuTime()-cpu, serverCPU(ctx, d)-server
	fmt.Printf("%-24s %8d rows in %8s: %7.0f rows/s (%d created, %d updated, %d unchanged, %d rejected); this process's CPU %s, %.0f rows per CPU second",
		what, rep.Rows, took.Round(time.Millisecond), float64(rep.Rows)/took.Seconds(), rep.Created, rep.Updated, rep.Unchanged, rep.Rejected,
		used.Round(time.Millisecond), float64(rep.Rows)/used.Seconds())
	if d.Engine == db.Postgres {
		fmt.Printf("; server CPU %s, %.0f rows per CPU second of both", served.Round(time.Millisecond), float64(rep.Rows)/(used+served).Seconds())
	}
	fmt.Printf("; load average %s\n", loadAverage())
	return rep.Report
}

// oneByOneRate sends m rows through POST /v1/leads, half of them updates of
// leads the import created, half new, one request at a time over loopback.
func oneByOneRate(ctx context.Context, pl *platform.Platform, d *db.DB, key string, n, m int) {
	limits := server.RateLimits{Read: 1 << 30, Write: 1 << 30, Spend: 1 << 30}
	srv := server.New(server.Config{Platform: pl, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Limits: limits})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	benchkit.Check(err)
	go http.Serve(ln, srv.Handler()) //nolint:errcheck
	client := &http.Client{}
	url := "http://" + ln.Addr().String() + "/v1/leads"
	start := time.Now()
	for j := 0; j < m; j++ {
		i := j // updates of imported leads
		if j%2 == 1 {
			i = n + j // new people
		}
		body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("Ann%d Lee%d", i, i), "email_work": fmt.Sprintf("ann.lee.%d@corp%d.test", i, i%997),
			"linkedin_url": fmt.Sprintf("https://www.linkedin.com/in/ann-lee-%d", i), "company": fmt.Sprintf("Corp %d", i%997), "headline": "VP"})
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		benchkit.Check(err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 && resp.StatusCode != 201 {
			log.Fatalf("POST /v1/leads: %d", resp.StatusCode)
		}
	}
	took := time.Since(start)
	rate := float64(m) / took.Seconds()
	fmt.Printf("%-24s %8d rows in %8s: %7.0f rows/s; %d rows would take %s (%s engine); load average %s\n", "POST /v1/leads one by one", m,
		took.Round(time.Millisecond), rate, n, time.Duration(float64(n)/rate*float64(time.Second)).Round(time.Second), d.Engine, loadAverage())
}
