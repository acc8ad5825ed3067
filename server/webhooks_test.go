package server

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestWebhookRoutes(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		body := map[string]any{"url": "https://127.0.0.1:9/hooks", "events": []string{"lead.created", "message.classified"}, "description": "CRM sync"}
		assertEnvelope(t, e.call("POST", "/v1/webhooks", "member", body), 403, "E_FORBIDDEN")
		assertEnvelope(t, e.call("GET", "/v1/webhooks", "viewer", nil), 403, "E_FORBIDDEN")
		r := e.call("POST", "/v1/webhooks", "other", body)
		assertEnvelope(t, r, 403, "E_FORBIDDEN")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["remedy"].(string), "pro"))
		r = e.call("POST", "/v1/webhooks", "manager", map[string]any{"url": "https://127.0.0.1:9/hooks", "events": []string{"lead.exploded"}})
		assertEnvelope(t, r, 422, "E_PAYLOAD_INVALID")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "message.classified")) // lists the known types
		assertEnvelope(t, e.call("POST", "/v1/webhooks", "manager", map[string]any{"url": "http://127.0.0.1:9/hooks", "events": []string{"*"}}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("POST", "/v1/webhooks", "manager", map[string]any{"url": "https://169.254.169.254/", "events": []string{"*"}}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("POST", "/v1/webhooks", "manager", map[string]any{"url": "https://127.0.0.1:9/hooks", "events": []string{}}), 422, "E_PAYLOAD_INVALID")

		r = e.call("POST", "/v1/webhooks", "manager", body)
		is.Equal(r.Status, 201)
		w := r.data()
		is.True(strings.HasPrefix(w["secret"].(string), "whsec_"))
		is.Equal(w["enabled"], true)
		is.Equal(w["events"], []any{"lead.created", "message.classified"})
		id := w["id"].(string)

		r = e.call("GET", "/v1/webhooks", "manager", nil)
		is.Equal(r.Status, 200)
		is.Equal(r.Body["total"], 1.0)
		listed := r.Body["data"].([]any)[0].(map[string]any)
		_, hasSecret := listed["secret"]
		is.True(!hasSecret)
		is.Equal(listed["consecutive_failures"], 0.0)
		is.Equal(listed["disabled_at"], nil)

		kinds := e.call("GET", "/v1/webhooks/event-kinds", "manager", nil)
		is.Equal(kinds.Status, 200)
		is.True(len(kinds.Body["data"].([]any)) > 30)

		// The outbox: a lead created through the API has its delivery.
		e.lead("member", map[string]any{"name": "Ann Lee", "linkedin_id": "ann-1"})
		r = e.call("GET", "/v1/webhooks/deliveries?webhook_id="+id, "manager", nil)
		is.Equal(r.Status, 200)
		ds := r.Body["data"].([]any)
		is.Equal(len(ds), 1)
		d := ds[0].(map[string]any)
		is.Equal(d["type"], "lead.created")
		is.Equal(d["status"], "pending")
		is.Equal(d["attempts"], 0.0)
		is.Equal(len(e.call("GET", "/v1/webhooks/deliveries?status=failed", "manager", nil).Body["data"].([]any)), 0)
		assertEnvelope(t, e.call("GET", "/v1/webhooks/deliveries?status=lost", "manager", nil), 422, "E_PAYLOAD_INVALID")

		r = e.call("POST", "/v1/webhooks/deliveries/"+d["id"].(string)+"/replay", "manager", nil)
		is.Equal(r.Status, 202)
		is.Equal(r.data()["replay_of"], d["id"])
		assertEnvelope(t, e.call("POST", "/v1/webhooks/deliveries/0193a000-0000-7000-8000-000000000000/replay", "manager", nil), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("POST", "/v1/webhooks/deliveries/"+d["id"].(string)+"/replay", "member", nil), 403, "E_FORBIDDEN")

		is.Equal(e.call("POST", "/v1/webhooks/"+id+"/enable", "manager", nil).data()["enabled"], true)
		is.Equal(e.call("DELETE", "/v1/webhooks/"+id, "manager", nil).Status, 200)
		assertEnvelope(t, e.call("DELETE", "/v1/webhooks/"+id, "manager", nil), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("POST", "/v1/webhooks/"+id+"/enable", "manager", nil), 404, "E_NOT_FOUND")
		is.Equal(e.call("GET", "/v1/webhooks", "manager", nil).Body["total"], 0.0)
		// Its log stays readable.
		is.Equal(len(e.call("GET", "/v1/webhooks/deliveries?webhook_id="+id, "manager", nil).Body["data"].([]any)), 2)
	})
}

// TestWebhookEndpointsCarryingPrivateIPv4: an endpoint whose IPv6 address
// carries a private or loopback IPv4 address is refused when saved, even
// where loopback itself is allowed (as it is in tests), and nothing is
// stored.
func TestWebhookEndpointsCarryingPrivateIPv4(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		for _, host := range []string{"[::127.0.0.1]", "[::7f00:1]", "[::ffff:10.0.0.1]", "[::ffff:0:7f00:1]", "[2002:7f00:1::]",
			"[64:ff9b::a00:1]", "[64:ff9b:1::7f00:1]", "[2001:0:4136:e378:8000:63bf:80ff:fffe]", "[fd00:ec2::254]"} {
			r := e.call("POST", "/v1/webhooks", "manager", map[string]any{"url": "https://" + host + "/hooks", "events": []string{"*"}})
			assertEnvelope(t, r, 422, "E_PAYLOAD_INVALID")
			is.True(strings.HasPrefix(r.Body["error"].(map[string]any)["message"].(string), "url: "))
		}
		is.Equal(e.call("GET", "/v1/webhooks", "manager", nil).Body["total"], 0.0)
	})
}

// TestWebhookEventsNull: "events": null is refused and names the field,
// like an empty list; a webhook that could never fire is not made.
func TestWebhookEventsNull(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		r := e.call("POST", "/v1/webhooks", "manager", `{"url": "https://127.0.0.1:9/hooks", "events": null}`)
		assertEnvelope(t, r, 422, "E_PAYLOAD_INVALID")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "events"))
		is.Equal(e.call("GET", "/v1/webhooks", "manager", nil).Body["total"], 0.0)
		// The class: no list in a request body takes null.
		r = e.call("POST", "/v1/enrollments/preview", "member", `{"sequence_id": "0193a000-0000-7000-8000-000000000000", "lead_ids": null}`)
		assertEnvelope(t, r, 422, "E_PAYLOAD_INVALID")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "lead_ids"))
	})
}
