package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/workspace"
)

// BenchmarkSignInBurst sends a burst of 200 sign-ins with unknown emails
// at once (each from its own browser, with its own pre-session; the
// per-address limit is lifted, as for a burst from many addresses), each
// costing the real argon2id hash, while one API client reads GET /v1/leads
// one call after another. It reports the peak of the heap's objects above
// what it was before the burst, the p95 of the reads during the burst and
// before it, and how many sign-ins the password gate refused. "gate"
// runs with the default gate (a slot per core), "ungated" with a slot for
// every sign-in, as before the gate. On both engines when
// LEADLINE_TEST_POSTGRES is set. Run one burst at a time:
//
//	go test -run '^$' -bench SignInBurst -benchtime 1x ./console
func BenchmarkSignInBurst(b *testing.B) {
	const burst = 200
	for _, engine := range dbtest.Engines() {
		for _, gated := range []bool{true, false} {
			name := map[bool]string{true: "gate", false: "ungated"}[gated]
			b.Run(fmt.Sprintf("%s/%s", engine, name), func(b *testing.B) {
				e := newEnv(b, dbtest.Open(b, engine))
				if !gated {
					e.pl.Workspaces.SetPasswordGate(workspace.NewPasswordGate(burst, 0))
				}
				console := httptest.NewServer(newConsole(e.pl, Options{SignInLimits: SignInLimits{PerAddress: 1 << 30, PerAccount: 1 << 30, Window: time.Minute}}))
				defer console.Close()
				api := httptest.NewServer(server.New(server.Config{Platform: e.pl, Logger: e.pl.Logger,
					Limits: server.RateLimits{Read: 1 << 30, Write: 1 << 30, Spend: 1 << 30}}).Handler())
				defer api.Close()
				_, key, err := e.pl.Workspaces.CreateKey(context.Background(), workspace.KeyInput{Workspace: "acme", MemberEmail: "owner@acme.test", Role: apikit.RoleManager})
				if err != nil {
					b.Fatal(err)
				}
				seedLeads(b, api.URL, key, 50)
				var peak, refused float64
				var base, during time.Duration
				for range b.N {
					r := signInBurst(b, e, console.URL, api.URL, key, burst)
					peak, base, during, refused = max(peak, r.peakHeap), r.baseP95, r.p95, float64(r.refused)
				}
				b.ReportMetric(peak/(1<<20), "peak-heap-MiB")
				b.ReportMetric(base.Seconds()*1000, "read-p95-before-ms")
				b.ReportMetric(during.Seconds()*1000, "read-p95-burst-ms")
				b.ReportMetric(refused, "refused")
			})
		}
	}
}

// seedLeads creates n leads through the API, so that the reads read some.
func seedLeads(b *testing.B, api, key string, n int) {
	for i := range n {
		body := fmt.Sprintf(`{"email_work": "lead%d@example.com", "name": "Lead Number %d", "company": "Example", "headline": "CTO"}`, i, i)
		req, _ := http.NewRequest(http.MethodPost, api+"/v1/leads", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode >= 300 {
			b.Fatalf("POST /v1/leads: %d", res.StatusCode)
		}
	}
}

type burstResult struct {
	peakHeap       float64
	baseP95, p95   time.Duration
	refused, other int
}

// signInBurst prepares n sign-in forms, times reads before the burst,
// then sends the n sign-ins at once while reading, and samples the heap
// until the last sign-in is answered.
func signInBurst(b *testing.B, e *env, consoleURL, api, key string, n int) burstResult {
	b.StopTimer()
	local := *e
	local.srv = &httptest.Server{URL: consoleURL}
	forms := make([]struct {
		br   *browser
		csrf string
	}, n)
	for i := range forms {
		forms[i].br = local.browser()
		forms[i].csrf = forms[i].br.get("/app/signin").csrf()
	}
	read := func() time.Duration {
		req, _ := http.NewRequest(http.MethodGet, api+"/v1/leads?limit=50", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("GET /v1/leads: %d", res.StatusCode)
		}
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var before []time.Duration
	for range 200 {
		before = append(before, read())
	}
	runtime.GC()
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(heap)
	floor := float64(heap[0].Value.Uint64())
	b.StartTimer()

	var res burstResult
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // the heap, every millisecond
		for {
			metrics.Read(heap)
			res.peakHeap = max(res.peakHeap, float64(heap[0].Value.Uint64())-floor)
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	var during []time.Duration
	wg.Go(func() { // the reads, one after another
		for {
			select {
			case <-done:
				return
			default:
				during = append(during, read())
			}
		}
	})
	codes := make([]int, n)
	var signIns sync.WaitGroup
	for i, f := range forms {
		signIns.Go(func() {
			codes[i] = f.br.postForm("/app/signin", url.Values{"email": {fmt.Sprintf("nobody%d@acme.test", i)}, "password": {"not the password"}}, f.csrf).code
		})
	}
	signIns.Wait()
	close(done)
	wg.Wait()
	b.StopTimer()
	for _, c := range codes {
		switch c {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			res.refused++
		default:
			b.Fatalf("sign-in answered %d", c)
		}
	}
	res.baseP95, res.p95 = p95(before), p95(during)
	return res
}

func p95(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[(len(ds)*95+99)/100-1]
}
