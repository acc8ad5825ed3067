package server

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
)

func TestIdempotentReplay(t *testing.T) {
	t.Parallel()
	eachEnv(t, smallLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		body := map[string]any{"email_work": "idem@x.test", "name": "Idem"}
		first := e.call("POST", "/v1/leads", "member", body, "Idempotency-Key", "k1")
		is.Equal(first.Status, 201)
		is.Equal(first.Header.Get("Idempotent-Replayed"), "")

		again := e.call("POST", "/v1/leads", "member", body, "Idempotency-Key", "k1")
		is.Equal(again.Status, 201) // the first answer, not a 200 update
		is.Equal(again.Header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(again.Raw), string(first.Raw))
		is.Equal(again.Header.Get("Content-Type"), first.Header.Get("Content-Type"))

		// Nothing ran twice: one lead, one created event, no update.
		id := first.data()["id"].(string)
		tl := e.call("GET", "/v1/leads/"+id+"/timeline", "member", nil)
		is.Equal(len(tl.Body["data"].([]any)), 1)

		// Every call counts, a replay too (it carried the headers of the
		// second write): this is the third write of 4.
		is.Equal(again.Header.Get("X-RateLimit-Remaining"), "2")
		r := e.call("PUT", "/v1/leads/"+id+"/stage", "member", map[string]any{"stage_id": nil})
		is.Equal(r.Header.Get("X-RateLimit-Remaining"), "1")
		e.clock.Advance(time.Hour) // a new window for what follows

		t.Run("different request", func(t *testing.T) {
			r := e.call("POST", "/v1/leads", "member", map[string]any{"email_work": "other@x.test"}, "Idempotency-Key", "k1")
			assertEnvelope(t, r, 409, apikit.EIdempotencyMismatch)
			r = e.call("PATCH", "/v1/leads/"+id, "member", body, "Idempotency-Key", "k1")
			assertEnvelope(t, r, 409, apikit.EIdempotencyMismatch)
		})
		t.Run("keys belong to one API key", func(t *testing.T) {
			r := e.call("POST", "/v1/leads", "manager", map[string]any{"email_work": "mgr@x.test"}, "Idempotency-Key", "k1")
			is.New(t).Equal(r.Status, 201)
		})
		t.Run("4xx answers are stored", func(t *testing.T) {
			is := is.New(t)
			bad := map[string]any{"email_work": "not-an-email"}
			r1 := e.call("POST", "/v1/leads", "manager", bad, "Idempotency-Key", "k-bad")
			assertEnvelope(t, r1, 422, apikit.EPayloadInvalid)
			r2 := e.call("POST", "/v1/leads", "manager", bad, "Idempotency-Key", "k-bad")
			assertEnvelope(t, r2, 422, apikit.EPayloadInvalid)
			is.Equal(r2.Header.Get("Idempotent-Replayed"), "true")
		})
		t.Run("kept 24 hours", func(t *testing.T) {
			is := is.New(t)
			e.clock.Advance(25 * time.Hour)
			r := e.call("POST", "/v1/leads", "member", body, "Idempotency-Key", "k1")
			is.Equal(r.Status, 200) // runs again: now an update of the lead
			is.Equal(r.Header.Get("Idempotent-Replayed"), "")
		})
	})
}

func TestIdempotencyInProgressAndFailures(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		ops := e.addTestOps()
		t.Run("same key while the first call runs", func(t *testing.T) {
			is := is.New(t)
			done := make(chan *resp)
			go func() {
				done <- e.call("POST", "/v1/test/block", "member", map[string]any{"n": 1}, "Idempotency-Key", "slow")
			}()
			<-ops.entered
			r := e.call("POST", "/v1/test/block", "member", map[string]any{"n": 1}, "Idempotency-Key", "slow")
			assertEnvelope(t, r, 409, apikit.EInProgress)
			close(ops.release)
			first := <-done
			is.Equal(first.Status, 200)
			r = e.call("POST", "/v1/test/block", "member", map[string]any{"n": 1}, "Idempotency-Key", "slow")
			is.Equal(r.Header.Get("Idempotent-Replayed"), "true")
			is.Equal(string(r.Raw), string(first.Raw))
		})
		t.Run("a 5xx is not stored", func(t *testing.T) {
			is := is.New(t)
			ops.runs.Store(0)
			r := e.call("POST", "/v1/test/flaky", "member", map[string]any{"n": 2}, "Idempotency-Key", "flaky")
			assertEnvelope(t, r, 500, apikit.EInternal)
			is.True(!contains(string(r.Raw), "database went away")) // causes are logged, never shown
			ops.fail.Store(false)
			r = e.call("POST", "/v1/test/flaky", "member", map[string]any{"n": 2}, "Idempotency-Key", "flaky")
			is.Equal(r.Status, 200)
			is.Equal(r.Header.Get("Idempotent-Replayed"), "")
			is.Equal(ops.runs.Load(), int32(2)) // it ran again
		})
		t.Run("a panic is not stored", func(t *testing.T) {
			r := e.call("GET", "/v1/test/panic", "viewer", nil)
			assertEnvelope(t, r, 500, apikit.EInternal)
		})
	})
}

func contains(s, sub string) bool {
	return len(sub) > 0 && len(s) >= len(sub) && (s == sub || indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestIdempotentBurst(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		body := map[string]any{"email_work": "burst@x.test", "source": "burst"}
		var wg sync.WaitGroup
		results := make(chan *resp, 20)
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results <- e.call("POST", "/v1/leads", "member", body, "Idempotency-Key", "burst")
			}()
		}
		wg.Wait()
		close(results)
		created := 0
		for r := range results {
			switch {
			case r.Status == http.StatusCreated && r.Header.Get("Idempotent-Replayed") == "":
				created++
			case r.Status == http.StatusCreated:
			case r.Status == 409:
				is.Equal(r.code(), apikit.EInProgress)
			default:
				t.Fatalf("unexpected %d %s", r.Status, r.Raw)
			}
		}
		is.Equal(created, 1) // exactly one effect
		list := e.call("GET", "/v1/leads?source=burst", "member", nil)
		is.Equal(list.Body["total"], float64(1))
	})
}

func TestSweep(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := t.Context()
		count := func(table string) int {
			var n int
			is.NoErr(e.db.NewRaw("SELECT count(*) FROM "+table).Scan(ctx, &n))
			return n
		}
		e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": "sw"}, "Idempotency-Key", "sw")
		is.NoErr(e.srv.Sweep(ctx))
		is.Equal(count("idempotency"), 1) // still live
		is.True(count("rate_windows") > 0)
		e.clock.Advance(25 * time.Hour)
		is.NoErr(e.srv.Sweep(ctx))
		is.Equal(count("idempotency"), 0)
		is.Equal(count("rate_windows"), 0)
	})
}

// TestStaleReservation: a key reserved by a process that died (running, never
// completed) blocks retries only for the lease; after it the retry runs.
func TestStaleReservation(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		p, err := e.ws.Authenticate(t.Context(), e.keys["member"])
		is.NoErr(err)
		body := map[string]any{"linkedin_id": "stale"}
		raw, _ := json.Marshal(body)
		reserved, err := e.srv.idem.reserve(t.Context(), p.KeyID, "crashed", fingerprint("POST", "/v1/leads", raw))
		is.NoErr(err)
		is.True(reserved)

		assertEnvelope(t, e.call("POST", "/v1/leads", "member", body, "Idempotency-Key", "crashed"), 409, apikit.EInProgress)
		e.clock.Advance(idempotencyLease)
		r := e.call("POST", "/v1/leads", "member", body, "Idempotency-Key", "crashed")
		is.Equal(r.Status, 201)
		is.Equal(r.Header.Get("Idempotent-Replayed"), "")
	})
}

// TestLeaseRenewedWhileRunning: a request that runs longer than the lease
// keeps its key, because it renews the lease while it runs; a retry during
// it is still E_IN_PROGRESS, and nothing runs twice.
func TestLeaseRenewedWhileRunning(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ops := e.addTestOps()
		tick := make(chan time.Time)
		e.srv.idem.ticks = func() (<-chan time.Time, func()) { return tick, func() {} }
		e.srv.idem.renewed = make(chan struct{})
		first := make(chan *resp)
		go func() {
			first <- e.call("POST", "/v1/test/block", "member", map[string]any{"n": 1}, "Idempotency-Key", "long")
		}()
		<-ops.entered
		for range 3 { // 75 seconds of work, renewed every 25
			e.clock.Advance(25 * time.Second)
			tick <- e.clock.Now()
			<-e.srv.idem.renewed
		}
		e.clock.Advance(25 * time.Second) // 100 s after the start, 25 s after the last renewal
		assertEnvelope(t, e.call("POST", "/v1/test/block", "member", map[string]any{"n": 1}, "Idempotency-Key", "long"), 409, apikit.EInProgress)
		close(ops.release)
		r := <-first
		is.Equal(r.Status, 200)
		is.Equal(ops.runs.Load(), int32(1))
		r = e.call("POST", "/v1/test/block", "member", map[string]any{"n": 1}, "Idempotency-Key", "long")
		is.Equal(r.Header.Get("Idempotent-Replayed"), "true")
	})
}
