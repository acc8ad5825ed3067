package server

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
)

var smallLimits = RateLimits{Read: 5, Write: 4, Spend: 2}

func TestRateLimitHeadersAndReset(t *testing.T) {
	eachEnv(t, smallLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		reset := t0.Truncate(time.Hour).Add(time.Hour)
		for i := 1; i <= 5; i++ {
			r := e.call("GET", "/v1/me", "viewer", nil)
			is.Equal(r.Status, 200)
			is.Equal(r.Header.Get("X-RateLimit-Limit"), "5")
			is.Equal(r.Header.Get("X-RateLimit-Remaining"), strconv.Itoa(5-i))
			is.Equal(r.Header.Get("X-RateLimit-Reset"), strconv.FormatInt(reset.Unix(), 10))
		}
		e.clock.Advance(10 * time.Minute)
		r := e.call("GET", "/v1/me", "viewer", nil)
		assertEnvelope(t, r, 429, apikit.ERateLimited)
		is.Equal(r.Header.Get("Retry-After"), strconv.Itoa(int(reset.Sub(e.clock.Now()).Seconds())))
		is.Equal(r.Header.Get("X-RateLimit-Remaining"), "0")

		is.Equal(e.call("GET", "/v1/me", "member", nil).Status, 200) // budgets are per key

		e.clock.Set(reset) // the window resets on the hour
		r = e.call("GET", "/v1/me", "viewer", nil)
		is.Equal(r.Status, 200)
		is.Equal(r.Header.Get("X-RateLimit-Remaining"), "4")
	})
}

// TestRefusedReadsCountNothing: a read refused before it runs (a key of
// too low a role, an unstorable query, an invalid key) costs the key no
// budget.
func TestRefusedReadsCountNothing(t *testing.T) {
	eachEnv(t, smallLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		for range 3 {
			assertEnvelope(t, e.call("GET", "/v1/webhooks/event-kinds", "viewer", nil), 403, apikit.EForbidden)
			assertEnvelope(t, e.call("GET", "/v1/leads?q=%00", "viewer", nil), 422, apikit.EPayloadInvalid)
		}
		for i := 1; i <= 5; i++ {
			r := e.call("GET", "/v1/me", "viewer", nil)
			is.Equal(r.Status, 200)
			is.Equal(r.Header.Get("X-RateLimit-Remaining"), strconv.Itoa(5-i))
		}
		r := e.call("GET", "/v1/me", "viewer", nil)
		assertEnvelope(t, r, 429, apikit.ERateLimited)
		is.Equal(r.Header.Get("X-RateLimit-Limit"), "5")
		is.Equal(r.Header.Get("X-RateLimit-Remaining"), "0")
		assertEnvelope(t, e.call("GET", "/v1/webhooks/event-kinds", "viewer", nil), 403, apikit.EForbidden) // the role first
		// The manager's own budget is whole: the viewer's refusals and
		// calls were not counted against it.
		r = e.call("GET", "/v1/webhooks/event-kinds", "manager", nil)
		is.Equal(r.Status, 200)
		is.Equal(r.Header.Get("X-RateLimit-Remaining"), "4")
	})
}

func TestRateLimitExactUnderConcurrency(t *testing.T) {
	eachEnv(t, RateLimits{Read: 25, Write: 10, Spend: 5}, func(t *testing.T, e *env) {
		is := is.New(t)
		var mu sync.Mutex
		codes := map[int]int{}
		var wg sync.WaitGroup
		for i := 0; i < 60; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.call("GET", "/v1/me", "viewer", nil)
				mu.Lock()
				codes[r.Status]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		is.Equal(codes[200], 25)
		is.Equal(codes[429], 35)
	})
}

func TestSpendCountsAsWrite(t *testing.T) {
	eachEnv(t, smallLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		lead := e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": "ACoA1"}) // write 1
		is.Equal(lead.Status, 201)
		id := lead.data()["id"]
		for i := 1; i <= 2; i++ { // spend 1, 2 (writes 2, 3)
			r := e.call("POST", "/v1/leads/enrich", "member", map[string]any{"lead_ids": []any{id}, "force": true})
			is.Equal(r.Status, 202)
			is.Equal(r.Header.Get("X-RateLimit-Limit"), "2") // the call's own class
			is.Equal(r.Header.Get("X-RateLimit-Remaining"), strconv.Itoa(2-i))
		}
		r := e.call("POST", "/v1/leads/enrich", "member", map[string]any{"lead_ids": []any{id}})
		assertEnvelope(t, r, 429, apikit.ERateLimited) // spend exhausted; the refused call costs no write
		r = e.call("PUT", "/v1/leads/"+id.(string)+"/stage", "member", map[string]any{"stage_id": nil})
		is.Equal(r.Status, 200)
		is.Equal(r.Header.Get("X-RateLimit-Remaining"), "0") // write 4 of 4
		assertEnvelope(t, e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": "ACoA2"}), 429, apikit.ERateLimited)
	})
}

// TestSQLiteReadsSkipTheWriteQueue: on SQLite a read's rate count is kept
// in the process, so reads answer while a write transaction holds the
// file's write lock.
func TestSQLiteReadsSkipTheWriteQueue(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite), DefaultRateLimits)
	is.Equal(e.call("GET", "/v1/me", "viewer", nil).Status, 200) // refreshes last_used_at, a write, once a minute
	hold, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = e.db.InTx(context.Background(), func(ctx context.Context) error {
			close(hold)
			<-release
			return nil
		})
	}()
	<-hold
	done := make(chan int, 2)
	go func() {
		done <- e.call("GET", "/v1/me", "viewer", nil).Status
		done <- e.call("GET", "/v1/leads?limit=5", "viewer", nil).Status
	}()
	for i := 0; i < 2; i++ {
		select {
		case st := <-done:
			is.Equal(st, 200)
		case <-time.After(10 * time.Second):
			t.Fatal("a read waited for the write lock")
		}
	}
	close(release)
}

// TestSQLiteCountsSurviveARestart: the in-process counts are persisted, so
// a new process on the same file continues the window instead of
// starting it afresh.
func TestSQLiteCountsSurviveARestart(t *testing.T) {
	is := is.New(t)
	dsn := dbtest.NewDSN(t, db.SQLite)
	d, err := db.Open(context.Background(), dsn)
	is.NoErr(err)
	t.Cleanup(func() { d.Close() })
	_, err = d.Migrate(context.Background())
	is.NoErr(err)
	e := newEnv(t, d, smallLimits)
	for i := 0; i < 3; i++ {
		is.Equal(e.call("GET", "/v1/me", "viewer", nil).Status, 200)
	}
	is.NoErr(e.srv.Flush(context.Background()))
	localByPath.Delete(d.Path) // what a new process starts with

	restarted := New(Config{DB: d, Clock: e.clock, Limits: smallLimits, Logger: e.srv.logger, SecretKey: secret.TestKey()})
	e.handler = restarted.Handler()
	r := e.call("GET", "/v1/me", "viewer", nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Header.Get("X-RateLimit-Remaining"), "1") // 4 of 5 used
	is.Equal(e.call("GET", "/v1/me", "viewer", nil).Status, 200)
	assertEnvelope(t, e.call("GET", "/v1/me", "viewer", nil), 429, apikit.ERateLimited)
}
