package server

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/sequences"
)

// TestVariantWinnerRoutes: a manager picks a step's winning variant and
// undoes it; the sequence shows the pick, the stats list the step's
// variants, and the render route renders each. Bad input changes nothing.
func TestVariantWinnerRoutes(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ids := e.addSequences()
		e.applySequences(ids, []sequences.Spec{
			{Name: "AB", Client: "Globex", Senders: []string{"mail"}, Steps: []sequences.Step{
				{ID: "mail", Type: "email", Variants: []sequences.Variant{
					{ID: "a", Subject: "A {{company|you}}", Body: "Hello"},
					{ID: "b", Subject: "B {{company|you}}", Body: "Hi", Weight: 2},
				}, PickWinner: &sequences.PickWinner{Metric: "reply_rate", MinSends: 50, Confidence: 0.95}},
			}},
		})
		winner := "/v1/sequences/" + ids["AB"] + "/steps/mail/winner"

		assertEnvelope(t, e.call("POST", winner, "member", map[string]any{"variant_id": "a"}), 403, "E_FORBIDDEN")
		r := e.call("POST", winner, "manager", map[string]any{"variant_id": "zz"})
		assertEnvelope(t, r, 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("POST", "/v1/sequences/"+ids["AB"]+"/steps/nope/winner", "manager", map[string]any{"variant_id": "a"}), 404, "E_NOT_FOUND")
		r = e.call("GET", "/v1/sequences/"+ids["AB"], "viewer", nil)
		is.Equal(r.Status, 200)
		is.Equal(len(r.data()["winners"].(map[string]any)), 0) // nothing changed

		r = e.call("POST", winner, "manager", map[string]any{"variant_id": "b"})
		is.Equal(r.Status, 200)
		w := r.data()["winners"].(map[string]any)["mail"].(map[string]any)
		is.Equal(w["variant_id"], "b")
		is.Equal(w["by"], "manual")

		r = e.call("GET", "/v1/sequences/"+ids["AB"]+"/stats", "viewer", nil)
		is.Equal(r.Status, 200)
		vs := r.data()["steps"].([]any)[0].(map[string]any)["variants"].([]any)
		is.Equal(len(vs), 2)
		is.Equal(vs[0].(map[string]any)["variant_id"], "a")
		is.Equal(vs[0].(map[string]any)["won"], false)
		is.Equal(vs[1].(map[string]any)["won"], true)
		is.Equal(vs[1].(map[string]any)["weight"], 2.0)

		r = e.call("DELETE", winner, "manager", nil)
		is.Equal(r.Status, 200)
		w = r.data()["winners"].(map[string]any)["mail"].(map[string]any)
		is.True(w["undone_at"] != nil)

		lead := e.call("POST", "/v1/leads", "member", map[string]any{"email_work": "ann@acme.test", "company": "Acme", "client_id": e.ids["Globex"]})
		is.Equal(lead.Status, 201)
		r = e.call("POST", "/v1/sequences/"+ids["AB"]+"/render", "member", map[string]any{"lead_id": lead.data()["id"]})
		is.Equal(r.Status, 200)
		steps := r.data()["steps"].([]any)
		is.Equal(len(steps), 2)
		is.Equal(steps[1].(map[string]any)["variant_id"], "b")
		is.Equal(steps[1].(map[string]any)["subject"], "B Acme")
	})
}
