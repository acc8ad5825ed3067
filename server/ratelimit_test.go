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
	t.Parallel()
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

// TestRefusedCallsCount: every answer to a call made with a valid key
// carries the rate-limit headers, and the call counts against the key's
// budget whatever the answer (403, 404 of a route or of a resource, the
// 404 of a wrong method, 409, 422): a key cannot make unlimited attempts
// at what it may not do. A call without a valid key (401) counts against
// no key and carries no such headers.
func TestRefusedCallsCount(t *testing.T) {
	t.Parallel()
	eachEnv(t, smallLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		counted := func(r *resp, status int, code, limit, remaining string) {
			t.Helper()
			if code != "" {
				assertEnvelope(t, r, status, code)
			} else if r.Status != status {
				t.Fatalf("want %d, got %d %s", status, r.Status, r.Raw)
			}
			if r.Header.Get("X-RateLimit-Limit") != limit || r.Header.Get("X-RateLimit-Remaining") != remaining ||
				r.Header.Get("X-RateLimit-Reset") != strconv.FormatInt(t0.Truncate(time.Hour).Add(time.Hour).Unix(), 10) {
				t.Fatalf("%d %s: rate-limit headers %q %q %q, want %s %s", r.Status, code, r.Header.Get("X-RateLimit-Limit"),
					r.Header.Get("X-RateLimit-Remaining"), r.Header.Get("X-RateLimit-Reset"), limit, remaining)
			}
		}
		// Reads of a client_viewer: 5 an hour.
		counted(e.call("GET", "/v1/webhooks/event-kinds", "viewer", nil), 403, apikit.EForbidden, "5", "4")
		counted(e.call("GET", "/v1/leads?q=%00", "viewer", nil), 422, apikit.EPayloadInvalid, "5", "3")
		counted(e.call("GET", "/v1/leads?colour=red", "viewer", nil), 422, apikit.EPayloadInvalid, "5", "2")
		counted(e.call("GET", "/v1/no-such-route", "viewer", nil), 404, apikit.ENotFound, "5", "1")
		counted(e.call("GET", "/v1/leads/0193a000-0000-7000-8000-000000000000", "viewer", nil), 404, apikit.ENotFound, "5", "0")
		r := e.call("GET", "/v1/me", "viewer", nil)
		counted(r, 429, apikit.ERateLimited, "5", "0")
		is.True(r.Header.Get("Retry-After") != "")
		counted(e.call("GET", "/v1/webhooks/event-kinds", "viewer", nil), 429, apikit.ERateLimited, "5", "0") // the budget first

		// Writes a client_viewer may not make still spend its write budget
		// (4 an hour), then stop at 429.
		counted(e.call("POST", "/v1/leads", "viewer", map[string]any{"linkedin_id": "ACoA1"}), 403, apikit.EForbidden, "4", "3")
		counted(e.call("DELETE", "/v1/me", "viewer", nil), 404, apikit.ENotFound, "4", "2")   // a wrong method
		counted(e.call("POST", "/v1//leads", "viewer", nil), 404, apikit.ENotFound, "4", "1") // a path that is not clean
		counted(e.call("POST", "/v1/leads", "viewer", map[string]any{"linkedin_id": "ACoA1"}), 403, apikit.EForbidden, "4", "0")
		counted(e.call("POST", "/v1/leads", "viewer", map[string]any{"linkedin_id": "ACoA1"}), 429, apikit.ERateLimited, "4", "0")
		counted(e.call("POST", "/v1/no-such-route", "viewer", nil), 429, apikit.ERateLimited, "4", "0")

		// A member's 409 and 422 answers count as writes.
		body := map[string]any{"linkedin_id": "ACoA2"}
		counted(e.call("POST", "/v1/leads", "member", body, "Idempotency-Key", "k1"), 201, "", "4", "3")
		counted(e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": "ACoA3"}, "Idempotency-Key", "k1"), 409, apikit.EIdempotencyMismatch, "4", "2")
		counted(e.call("POST", "/v1/leads", "member", body, "Idempotency-Key", "\x01"), 422, apikit.EPayloadInvalid, "4", "1")
		counted(e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": 7}), 422, apikit.EPayloadInvalid, "4", "0")

		// Without a valid key nothing is counted, and no budget is shown.
		for _, r := range []*resp{
			e.call("GET", "/v1/me", "ll_not-a-key", nil),
			e.call("GET", "/v1/me", "", nil),
			e.call("GET", "/v1/me", "manager", nil, "X-API-Key", e.keys["viewer"]), // two credentials
		} {
			assertEnvelope(t, r, 401, apikit.EUnauthorized)
			is.Equal(r.Header.Get("X-RateLimit-Remaining"), "")
		}
		r = e.call("GET", "/v1/no-such-route", "ll_not-a-key", nil)
		assertEnvelope(t, r, 404, apikit.ENotFound)
		is.Equal(r.Header.Get("X-RateLimit-Remaining"), "")
		counted(e.call("GET", "/v1/me", "manager", nil), 200, "", "5", "4") // the manager's budget is whole
	})
}

func TestRateLimitExactUnderConcurrency(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

// TestFlushWaitsForTheFlushUnderWay: a call may start a flush of the
// counts in the background; Flush returns only once that one has ended
// too, so that nothing is written once the binary closes the database.
func TestFlushWaitsForTheFlushUnderWay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	d, err := db.Open(context.Background(), dbtest.NewDSN(t, db.SQLite))
	is.NoErr(err)
	t.Cleanup(func() { d.Close() })
	_, err = d.Migrate(context.Background())
	is.NoErr(err)
	e := newEnv(t, d, smallLimits)
	is.Equal(e.call("GET", "/v1/me", "viewer", nil).Status, 200) // the first call's counts are due: a flush starts
	is.NoErr(e.srv.Flush(context.Background()))
	lc := e.srv.limiter.local
	is.True(lc.flushing.TryLock()) // no flush runs any more
	lc.flushing.Unlock()
	n, err := d.NewSelect().Table("rate_windows").Count(context.Background())
	is.NoErr(err)
	is.True(n > 0)
}
