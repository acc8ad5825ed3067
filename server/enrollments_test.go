package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
)

func TestEnrollmentRoutes(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ids := e.addSequences()
		seq := ids["Berlin CTOs"]
		ann := e.lead("member", map[string]any{"name": "Ann Lee", "linkedin_id": "ann-1", "email_work": "ann@example.test", "client_id": e.ids["Globex"]})["id"].(string)
		bo := e.lead("member", map[string]any{"name": "Bo Chen", "linkedin_id": "bo-1", "email_work": "bo@example.test", "client_id": e.ids["Globex"]})["id"].(string)
		ghost := "0193a000-0000-7000-8000-000000000000"

		body := map[string]any{"sequence_id": seq, "lead_ids": []string{ann, bo, ghost}}
		assertEnvelope(t, e.call("POST", "/v1/enrollments/preview", "viewer", body), 403, "E_FORBIDDEN")
		r := e.call("POST", "/v1/enrollments/preview", "member", body)
		is.Equal(r.Status, 200)
		is.Equal(r.Header.Get("X-RateLimit-Limit"), "600") // read class
		pv := r.data()
		is.Equal(pv["eligible_ids"], []any{ann, bo})
		is.Equal(pv["excluded"], []any{map[string]any{"lead_id": ghost, "reason": "not_found", "detail": "No lead with this id is visible to this key."}})
		is.Equal(len(pv["assignments"].([]any)), 2)
		is.Equal(pv["warnings"].([]any)[0].(map[string]any)["code"], "sequence_not_active")
		is.True(pv["estimate"].(map[string]any)["first_action_at"] != nil)
		assertEnvelope(t, e.call("POST", "/v1/enrollments/preview", "member", map[string]any{"sequence_id": seq, "lead_ids": []string{}}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("POST", "/v1/enrollments/preview", "member", map[string]any{"sequence_id": seq, "lead_ids": []string{ann}, "extra": 1}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("POST", "/v1/enrollments/preview", "globex", map[string]any{"sequence_id": ids["Broken"], "lead_ids": []string{ann}}), 404, "E_NOT_FOUND")

		r = e.call("POST", "/v1/enrollments", "member", body)
		assertEnvelope(t, r, 422, "E_PAYLOAD_INVALID")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["remedy"].(string), "preview"))
		assertEnvelope(t, e.call("POST", "/v1/enrollments", "member", map[string]any{"sequence_id": ids["Broken"], "lead_ids": []string{ann}, "confirm": true}), 422, "E_GRAPH_INVALID")
		body["confirm"] = true
		r = e.call("POST", "/v1/enrollments", "member", body)
		is.Equal(r.Status, 200)
		is.Equal(r.Header.Get("X-RateLimit-Limit"), "60") // spend class
		is.Equal(r.data()["enrolled"], 2.0)
		enIDs := r.data()["enrollment_ids"].([]any)

		r = e.call("GET", "/v1/enrollments?sequence_id="+seq+"&status=active", "viewer", nil)
		is.Equal(r.Body["total"], 2.0)
		is.Equal(e.call("GET", "/v1/enrollments?lead_id="+ann, "globexViewer", nil).Body["total"], 1.0)
		is.Equal(e.call("GET", "/v1/enrollments", "other", nil).Body["total"], 0.0)

		first := enIDs[0].(string)
		assertEnvelope(t, e.call("POST", "/v1/enrollments/"+first+"/resume", "member", nil), 409, "E_CONFLICT")
		is.Equal(e.call("POST", "/v1/enrollments/"+first+"/pause", "member", nil).data()["status"], "paused")
		is.Equal(e.call("POST", "/v1/enrollments/"+first+"/resume", "member", nil).data()["status"], "active")
		assertEnvelope(t, e.call("POST", "/v1/enrollments/"+first+"/exit", "viewer", nil), 403, "E_FORBIDDEN")
		is.Equal(e.call("POST", "/v1/enrollments/"+first+"/exit", "member", nil).data()["status"], "exited")
		assertEnvelope(t, e.call("POST", "/v1/enrollments/"+first+"/exit", "member", nil), 409, "E_CONFLICT")
		assertEnvelope(t, e.call("POST", "/v1/enrollments/"+ghost+"/pause", "member", nil), 404, "E_NOT_FOUND")

		// A draft sequence does not send: why-not-sending says so.
		w := e.call("GET", "/v1/sequences/"+seq+"/why-not-sending", "viewer", nil).data()
		is.Equal(w["sending"], false)
		is.Equal(w["reasons"].([]any)[0].(map[string]any)["code"], "sequence_not_active")

		// Run the engine: activate, and let the runner work through Monday.
		is.Equal(e.call("POST", "/v1/sequences/"+seq+"/activate", "manager", nil).Status, 200)
		net := sandbox.New(1, e.clock, sandbox.Rates{})
		net.Script(bo, sandbox.Outcome{})
		runner := e.runner(map[string]senders.Transport{senders.TransportSandbox: net})
		for range 10 {
			_, err := runner.Tick(context.Background())
			is.NoErr(err)
			e.clock.Advance(time.Hour)
		}
		is.Equal(len(net.Performed()), 2) // bo: visit and invite
		w = e.call("GET", "/v1/sequences/"+seq+"/why-not-sending", "viewer", nil).data()
		is.Equal(w["sending"], true)
		is.Equal(w["reasons"].([]any)[0].(map[string]any)["code"], "all_waiting")

		st := e.call("GET", "/v1/sequences/"+seq+"/stats", "viewer", nil).data()
		is.Equal(st["statuses"].(map[string]any)["active"], 1.0)
		is.Equal(st["statuses"].(map[string]any)["exited"], 1.0)
		is.Equal(st["invites_sent"], 1.0)
		is.Equal(st["steps"].([]any)[0], map[string]any{"step_id": "visit", "type": "profile_view", "entered": 2.0, "done": 1.0, "failed": 0.0, "waiting": 0.0})
		is.Equal(st["steps"].([]any)[2].(map[string]any)["waiting"], 1.0) // at the condition

		lead := e.call("GET", "/v1/leads/"+bo, "viewer", nil).data()
		is.Equal(lead["enrollments"].([]any)[0].(map[string]any)["sequence_name"], "Berlin CTOs")
		is.Equal(lead["sender_state"].([]any)[0].(map[string]any)["connection_status"], "pending")

		capacity := e.call("GET", "/v1/senders/"+ids["anna"]+"/capacity", "viewer", nil)
		is.Equal(capacity.Status, 200)
		days := capacity.Body["data"].([]any)
		is.Equal(len(days), 7)
		is.Equal(days[0].(map[string]any)["date"], "2026-11-02")

		is.Equal(e.call("GET", "/v1/sequences/"+seq+"/failed", "viewer", nil).Body["total"], 0.0)
		r = e.call("POST", "/v1/enrollments/recover", "member", map[string]any{"sequence_id": seq})
		is.Equal(r.Status, 200)
		is.Equal(r.data()["recovered"], 0.0)
	})
}
