package server

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
)

// TestMetrics scrapes the platform's registry after API calls, a refused
// call, a runner's steps and a webhook's failed attempt, and checks the
// metrics' names and labels.
func TestMetrics(t *testing.T) {
	eachEnv(t, RateLimits{Read: 1000, Write: 1000, Spend: 1}, func(t *testing.T, e *env) {
		is := is.New(t)
		// A receiver that is not there: its deliveries fail.
		is.Equal(e.call("POST", "/v1/webhooks", "manager", map[string]any{"url": "https://127.0.0.1:9/hooks", "events": []string{"*"}}).Status, 201)
		ids := e.addSequences()
		seq := ids["Berlin CTOs"]
		bo := e.lead("member", map[string]any{"name": "Bo Chen", "linkedin_id": "bo-1", "email_work": "bo@example.test", "client_id": e.ids["Globex"]})["id"].(string)
		is.Equal(e.call("POST", "/v1/sequences/"+seq+"/activate", "manager", nil).Status, 200)
		body := map[string]any{"sequence_id": seq, "lead_ids": []string{bo}, "confirm": true}
		is.Equal(e.call("POST", "/v1/enrollments", "member", body).Status, 200)
		assertEnvelope(t, e.call("POST", "/v1/enrollments", "member", body), 429, "E_RATE_LIMITED") // spend: 1 an hour
		is.Equal(e.call("GET", "/v1/me", "", nil).Status, 401)
		is.Equal(e.call("GET", "/nowhere", "", nil).Status, 404)

		net := sandbox.New(1, e.clock, sandbox.Rates{})
		net.Script(bo, sandbox.Outcome{})
		runner := e.runner(map[string]senders.Transport{senders.TransportSandbox: net})
		for range 3 {
			_, err := runner.Tick(context.Background())
			is.NoErr(err)
			e.clock.Advance(time.Hour)
		}
		is.True(len(net.Performed()) > 0)
		_, err := e.pl.WebhookWorker(nil).Tick(context.Background())
		is.NoErr(err)

		rec := httptest.NewRecorder()
		e.pl.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		is.Equal(rec.Code, 200)
		is.True(strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain"))
		out, _ := io.ReadAll(rec.Body)
		text := string(out)
		for _, want := range []string{
			`leadline_http_requests_total{operation="enrol-leads",status="200"} 1`,
			`leadline_http_requests_total{operation="enrol-leads",status="429"} 1`,
			`leadline_http_requests_total{operation="get-me",status="401"} 1`,
			`leadline_http_requests_total{operation="unrouted",status="404"} 1`,
			`leadline_http_request_duration_seconds_bucket{operation="activate-sequence",status="200",le="+Inf"} 1`,
			`leadline_http_request_duration_seconds_count{operation="create-webhook",status="201"} 1`,
			`leadline_rate_limit_refusals_total{class="spend"} 1`,
			`leadline_runner_steps_total{action="profile_view",outcome="sent"} 1`,
			`leadline_webhook_deliveries_total{result="failed"} `,
			"\nleadline_runner_due_lag_seconds ",
			"\nleadline_runner_leases_held 0\n",
			"\nleadline_inbound_queue_depth 0\n",
			"\nleadline_webhook_queue_depth ",
			"\nleadline_metrics_database_up 1\n",
			"\ngo_goroutines ",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the scrape has no %q", want)
			}
		}
		if t.Failed() {
			t.Log(text)
		}
	})
}
