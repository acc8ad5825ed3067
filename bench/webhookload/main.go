// Command webhookload measures webhook deliveries per second to a local
// receiver (goal ≥ 2,000): events written through the activity log (so
// their deliveries come from the outbox), then the worker sends them all,
// signed, over https with keep-alive, and records every outcome.
//
//	go run ./bench/webhookload --db /tmp/leadline-webhooks.db
//	go run ./bench/webhookload --db 'postgres://postgres@127.0.0.1:5432/leadline_webhooks?sslmode=disable'
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bench/internal/benchkit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

func main() {
	dsn := flag.String("db", "/tmp/leadline-webhooks.db", "database (new)")
	n := flag.Int("events", 20_000, "events, each delivered to each webhook")
	hooks := flag.Int("webhooks", 2, "webhooks subscribed to every event")
	flag.Parse()
	ctx := context.Background()
	d := benchkit.Open(ctx, *dsn)
	clock := apikit.NewFakeClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	ws := workspace.NewService(d, clock)
	_, err := ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{Name: "hooks", Plan: apikit.PlanPro,
		Members: []workspace.MemberSpec{{Email: "owner@hooks.test", Role: apikit.RoleOwner}}}}})
	benchkit.Check(err)
	w, err := ws.ByName(ctx, "hooks")
	benchkit.Check(err)
	p := apikit.Principal{WorkspaceID: w.ID, Plan: w.Plan, Role: apikit.RoleManager}

	var received atomic.Int64
	rec := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		received.Add(1)
	}))
	defer rec.Close()
	guard := webhooks.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	log_ := events.NewLog(d, clock)
	svc := webhooks.NewService(d, clock, guard, benchkit.Key())
	log_.OnEmit(svc.Enqueue)
	for i := range *hooks {
		_, err := svc.Create(ctx, p, webhooks.CreateInput{URL: fmt.Sprintf("%s/h%d", rec.URL, i), Events: []string{"*"}})
		benchkit.Check(err)
	}
	// The events, in transactions of 100, as the engine writes them.
	for start := 0; start < *n; start += 100 {
		evs := make([]events.Event, min(100, *n-start))
		for i := range evs {
			evs[i] = events.Event{WorkspaceID: w.ID, Kind: "reply.received", Data: map[string]any{"intent": "interested", "n": start + i}}
		}
		benchkit.Check(d.InTx(ctx, func(ctx context.Context) error { return log_.EmitMany(ctx, evs) }))
	}
	tlsc := rec.Client().Transport.(*http.Transport).TLSClientConfig
	worker := svc.NewWorker(guard.Client(tlsc), slog.New(slog.DiscardHandler))
	t0 := time.Now()
	sent := 0
	for {
		k, err := worker.Tick(ctx)
		benchkit.Check(err)
		if k == 0 {
			break
		}
		sent += k
	}
	el := time.Since(t0)
	failed, err := d.NewSelect().Table("deliveries").Where("status <> ?", webhooks.Succeeded).Count(ctx)
	benchkit.Check(err)
	fmt.Printf("\n%s, %s\n\n| measure | goal | result |\n|---|---|---|\n", d.Engine, time.Now().Format(time.DateOnly))
	fmt.Printf("| deliveries per second to a local receiver | ≥ 2,000 | %.0f/s (%d deliveries of %d events to %d webhooks in %s; %d received, %d not succeeded) |\n",
		float64(sent)/el.Seconds(), sent, *n, *hooks, el.Round(time.Millisecond), received.Load(), failed)
}
