package server

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/sequences"
)

// addCopySequences gives acme, besides addSequences', "Copy" (Globex,
// mail: a condition, spin and fallbacks) and "Typo" (Globex, mail: a
// condition on a field that does not exist).
func (e *env) addCopySequences() map[string]string {
	e.t.Helper()
	ids := e.addSequences()
	e.applySequences(ids, []sequences.Spec{
		{Name: "Copy", Client: "Globex", Senders: []string{"mail"}, Steps: []sequences.Step{
			{ID: "mail", Type: "email", Subject: "{{#if company}}{{company}} and us{{else}}A quick idea{{/if}}",
				Body: `{{spin "Hi" "Hello" "Hey"}} {{first_name}}, {{#if custom.topic}}about {{custom.topic}}{{else}}a question{{/if}}.`},
			{ID: "pause", Type: "wait", Days: 2},
			{ID: "again", Type: "email", Body: "{{#if company}}{{company}}{{else}}{{headline|You}}{{/if}}, again."},
		}},
		{Name: "Typo", Client: "Globex", Senders: []string{"mail"}, Steps: []sequences.Step{
			{ID: "mail", Type: "email", Subject: "Hi", Body: "{{#if compny}}x{{/if}}"},
		}},
	})
	return ids
}

// TestRenderSequenceRoute: POST /v1/sequences/{id}/render answers each
// text step rendered for the lead, its branches and spin chosen for it
// and the same on every call, with what it misses; members may call it,
// within their clients.
func TestRenderSequenceRoute(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ids := e.addCopySequences()
		lead := func(body map[string]any) string {
			r := e.call("POST", "/v1/leads", "member", body)
			is.Equal(r.Status, 201)
			return r.data()["id"].(string)
		}
		ann := lead(map[string]any{"email_work": "ann@acme.test", "name": "Ann Lee", "company": "Acme", "custom": map[string]any{"topic": "Go"}, "client_id": e.ids["Globex"]})
		anon := lead(map[string]any{"email_work": "x@acme.test", "client_id": e.ids["Globex"]})
		initech := lead(map[string]any{"email_work": "i@initech.test", "name": "Ivy", "client_id": e.ids["Initech"]})
		path := "/v1/sequences/" + ids["Copy"] + "/render"

		r := e.call("POST", path, "member", map[string]any{"lead_id": ann})
		is.Equal(r.Status, 200)
		is.Equal(r.data()["sequence_id"], ids["Copy"])
		is.Equal(r.data()["lead_id"], ann)
		steps := r.data()["steps"].([]any)
		is.Equal(len(steps), 2) // the wait sends no text
		mail := steps[0].(map[string]any)
		is.Equal(mail["step_id"], "mail")
		is.Equal(mail["type"], "email")
		is.Equal(mail["subject"], "Acme and us")
		greeting, rest, _ := strings.Cut(mail["body"].(string), " ")
		is.True(greeting == "Hi" || greeting == "Hello" || greeting == "Hey")
		is.Equal(rest, "Ann, about Go.")
		is.Equal(mail["missing"], []any{})
		is.Equal(mail["problem"], nil)
		is.Equal(steps[1], map[string]any{"step_id": "again", "type": "email", "body": "Acme, again.", "missing": []any{}})
		// The same lead gets the same text on every call, with any key.
		is.Equal(e.call("POST", path, "globex", map[string]any{"lead_id": ann}).data()["steps"], r.data()["steps"])

		// A lead without the fields takes the else branches; the
		// missing first name is named, and would hold the step back.
		r = e.call("POST", path, "member", map[string]any{"lead_id": anon})
		is.Equal(r.Status, 200)
		mail = r.data()["steps"].([]any)[0].(map[string]any)
		is.Equal(mail["subject"], "A quick idea")
		is.True(strings.HasSuffix(mail["body"].(string), " , a question."))
		is.Equal(mail["missing"], []any{"first_name"})
		is.True(strings.Contains(mail["problem"].(string), "{{[first_name]}}"))
		is.Equal(r.data()["steps"].([]any)[1].(map[string]any)["body"], "You, again.") // a fallback inside a branch

		// Roles and scopes: a member's read; a scoped key sees neither
		// another client's sequence nor its leads.
		assertEnvelope(t, e.call("POST", path, "viewer", map[string]any{"lead_id": ann}), 403, "E_FORBIDDEN")
		assertEnvelope(t, e.call("POST", "/v1/sequences/"+ids["Broken"]+"/render", "globex", map[string]any{"lead_id": ann}), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("POST", path, "globex", map[string]any{"lead_id": initech}), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("POST", path, "member", map[string]any{"lead_id": "0b7e5cf6-8a38-4a4e-9d2e-5e5a4b0c2a11"}), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("POST", path, "member", map[string]any{"lead_id": "ann"}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("POST", path, "member", map[string]any{"lead_id": ann, "extra": 1}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("POST", path, "member", map[string]any{}), 422, "E_PAYLOAD_INVALID")

		// A draft whose template does not parse renders, naming the
		// problem; activating it names the same problem.
		r = e.call("POST", "/v1/sequences/"+ids["Typo"]+"/render", "member", map[string]any{"lead_id": ann})
		is.Equal(r.Status, 200)
		is.True(strings.Contains(r.data()["steps"].([]any)[0].(map[string]any)["problem"].(string), "unknown variable {{compny}}"))
		r = e.call("POST", "/v1/sequences/"+ids["Typo"]+"/activate", "manager", nil)
		assertEnvelope(t, r, 422, "E_GRAPH_INVALID")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), `template_error: Step "mail", body: unknown variable {{compny}}`))
		is.Equal(e.call("POST", "/v1/sequences/"+ids["Copy"]+"/activate", "manager", nil).Status, 200)
	})
}
