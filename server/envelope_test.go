package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

// TestErrorEnvelopeEverywhere walks every kind of error answer and checks
// each is in the spec's envelope with its status and code.
func TestErrorEnvelopeEverywhere(t *testing.T) {
	t.Parallel()
	eachEnv(t, RateLimits{Read: 600, Write: 300, Spend: 1}, func(t *testing.T, e *env) {
		e.addTestOps()
		lead := e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": "env-1", "client_id": e.ids["Initech"]})
		id := lead.data()["id"].(string)
		e.call("POST", "/v1/leads/enrich", "member", map[string]any{"lead_ids": []string{id}})
		for _, c := range []struct {
			name, method, path, key string
			body                    any
			status                  int
			code                    string
		}{
			{"unknown route", "GET", "/v1/nope", "member", nil, 404, apikit.ENotFound},
			{"unknown route outside v1", "GET", "/", "", nil, 404, apikit.ENotFound},
			{"wrong method", "DELETE", "/v1/me", "member", nil, 404, apikit.ENotFound},
			{"no key", "GET", "/v1/leads", "", nil, 401, apikit.EUnauthorized},
			{"role", "POST", "/v1/leads", "viewer", map[string]any{"linkedin_id": "x"}, 403, apikit.EForbidden},
			{"scope", "GET", "/v1/leads?client_id=" + e.ids["Initech"], "globex", nil, 403, apikit.EForbidden},
			{"not visible", "GET", "/v1/leads/" + id, "globex", nil, 404, apikit.ENotFound},
			{"no such lead", "GET", "/v1/leads/" + apikit.NewID(), "member", nil, 404, apikit.ENotFound},
			{"malformed id", "GET", "/v1/leads/123", "member", nil, 422, apikit.EPayloadInvalid},
			{"unknown field", "POST", "/v1/leads", "member", map[string]any{"linkedin_id": "x", "bogus": true}, 422, apikit.EPayloadInvalid},
			{"malformed json", "POST", "/v1/leads", "member", `{"linkedin_id":`, 422, apikit.EPayloadInvalid},
			{"wrong type", "POST", "/v1/leads", "member", `{"linkedin_id": 5}`, 422, apikit.EPayloadInvalid},
			{"unknown query parameter", "GET", "/v1/leads?colour=red", "member", nil, 422, apikit.EPayloadInvalid},
			{"limit out of range", "GET", "/v1/leads?limit=201", "member", nil, 422, apikit.EPayloadInvalid},
			{"too many tags", "POST", "/v1/leads/" + id + "/tags", "member", map[string]any{"tag_ids": make21()}, 422, apikit.ETooMany},
			{"conflict", "POST", "/v1/leads", "globex", map[string]any{"linkedin_id": "env-1"}, 409, apikit.EConflict},
			{"rate limited", "POST", "/v1/leads/enrich", "member", map[string]any{"lead_ids": []string{id}}, 429, apikit.ERateLimited},
			{"internal", "POST", "/v1/test/flaky", "member", map[string]any{"n": 1}, 500, apikit.EInternal},
		} {
			t.Run(c.name, func(t *testing.T) {
				assertEnvelope(t, e.call(c.method, c.path, c.key, c.body), c.status, c.code)
			})
		}
	})
}

// TestNoInputReaches500 sends input that databases refuse (NUL bytes,
// invalid UTF-8): each is a 422, never a 500.
func TestNoInputReaches500(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		id := e.lead("member", map[string]any{"linkedin_id": "nul-1"})["id"].(string)
		for name, c := range map[string]struct {
			method, path string
			body         any
		}{
			"NUL in a field":      {"POST", "/v1/leads", map[string]any{"linkedin_id": "a\x00b"}},
			"NUL in a name":       {"PATCH", "/v1/leads/" + id, map[string]any{"name": "A\x00"}},
			"NUL in custom":       {"PATCH", "/v1/leads/" + id, map[string]any{"custom": map[string]any{"k": []any{"x\x00"}}}},
			"NUL in a custom key": {"PATCH", "/v1/leads/" + id, map[string]any{"custom": map[string]any{"k\x00": 1}}},
			"NUL in q":            {"GET", "/v1/leads?q=ab%00cd", nil},
			"NUL in source":       {"GET", "/v1/leads?source=%00", nil},
			"bad UTF-8 in q":      {"GET", "/v1/leads?q=%ff%fe%fd", nil},
			"bad UTF-8 in email":  {"GET", "/v1/leads?email=%ff@x", nil},
			"NUL in suppressions": {"POST", "/v1/suppressions", map[string]any{"linkedin_ids": []string{"a\x00"}}},
			"NUL in a reason":     {"POST", "/v1/suppressions", map[string]any{"linkedin_ids": []string{"a"}, "reason": "\x00"}},
		} {
			t.Run(name, func(t *testing.T) {
				assertEnvelope(t, e.call(c.method, c.path, "member", c.body), 422, apikit.EPayloadInvalid)
			})
		}
	})
}

func make21() []string {
	out := make([]string, 21)
	for i := range out {
		out[i] = apikit.NewID()
	}
	return out
}

func TestOpenAPIAndDocs(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		r := e.call("GET", "/v1/openapi.json", "", nil)
		is.Equal(r.Status, 200)
		var doc struct {
			OpenAPI string `json:"openapi"`
			Info    struct{ Version string }
			Paths   map[string]map[string]struct {
				Responses map[string]any `json:"responses"`
			}
		}
		is.NoErr(json.Unmarshal(r.Raw, &doc))
		is.True(strings.HasPrefix(doc.OpenAPI, "3.1"))
		is.Equal(doc.Info.Version, "1.0.0")
		for _, c := range []struct{ method, path, codes string }{
			{"get", "/v1/me", "200 401 402 403 422 429 500"},
			{"get", "/v1/leads", "200 401 402 403 422 429 500"},
			{"post", "/v1/leads", "200 201 401 402 403 409 422 429 500"},
			{"get", "/v1/leads/{id}", "200 404"},
			{"patch", "/v1/leads/{id}", "200 404 409"},
			{"post", "/v1/leads/{id}/tags", "200 404 409"},
			{"delete", "/v1/leads/{id}/tags/{tag_id}", "200 404"},
			{"put", "/v1/leads/{id}/stage", "200 404"},
			{"put", "/v1/leads/{id}/list", "200 404"},
			{"post", "/v1/leads/{id}/suppress", "200 404"},
			{"delete", "/v1/leads/{id}/suppress", "200 404"},
			{"get", "/v1/leads/{id}/timeline", "200 404"},
			{"post", "/v1/leads/enrich", "202 409 429"},
			{"post", "/v1/suppressions", "200 409"},
			{"get", "/v1/threads", "200 401 403 422 429"},
			{"get", "/v1/threads/{id}", "200 404"},
			{"post", "/v1/threads/{id}/reply", "200 404 409 422"},
			{"put", "/v1/threads/{id}/intent", "200 404 422"},
			{"put", "/v1/threads/{id}/assignee", "200 404 422"},
			{"post", "/v1/threads/{id}/read", "200 404"},
			{"get", "/v1/tasks", "200 422"},
			{"get", "/v1/tasks/{id}", "200 404"},
			{"post", "/v1/tasks/{id}/complete", "200 404 409 422"},
			{"get", "/v1/webhooks", "200 403"},
			{"post", "/v1/webhooks", "201 403 422"},
			{"delete", "/v1/webhooks/{id}", "200 404"},
			{"post", "/v1/webhooks/{id}/enable", "200 404"},
			{"get", "/v1/webhooks/deliveries", "200 403"},
			{"post", "/v1/webhooks/deliveries/{id}/replay", "202 404 409"},
			{"get", "/v1/webhooks/event-kinds", "200"},
			{"get", "/v1/reports/overview", "200 401 403 404 422 429"},
			{"get", "/v1/reports/funnel", "200 403 404 422"},
			{"get", "/v1/reports/intents", "200 403 404 422"},
			{"get", "/v1/reports/reply-threads", "200 403 404 422"},
			{"get", "/v1/reports/cost", "200 403 404 422"},
			{"get", "/v1/reports/sequences", "200 403 404 422"},
			{"get", "/v1/reports/senders", "200 403 404 422"},
			{"get", "/v1/reports/clients", "200 403 404 422"},
			{"get", "/v1/reports/sequences/{id}", "200 403 404 422"},
			{"get", "/v1/reports/senders/{id}", "200 403 404 422"},
			{"get", "/v1/reports/clients/{id}", "200 403 404 422"},
		} {
			op, ok := doc.Paths[c.path][c.method]
			is.True(ok) // every route is documented
			for _, code := range strings.Fields(c.codes) {
				if _, ok := op.Responses[code]; !ok {
					t.Errorf("%s %s does not document %s", c.method, c.path, code)
				}
			}
		}
		is.Equal(e.call("GET", "/v1/docs", "", nil).Status, 200)
		is.Equal(e.call("GET", "/healthz", "", nil).Status, 200)
	})
}

// TestPathsAnsweredInEnvelope: a path that is not clean is not found (no
// redirect to another path), and so is a schema the document lacks.
func TestPathsAnsweredInEnvelope(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		for _, path := range []string{"/v1//leads", "/v1/leads/../me", "/v1/./me", "/v1/leads/", "//v1/me", "/v1/schemas/Nope", "/v1/schemas/Nope.json"} {
			t.Run(path, func(t *testing.T) {
				assertEnvelope(t, e.call("GET", path, "member", nil), 404, apikit.ENotFound)
			})
		}
		is := is.New(t)
		is.Equal(e.call("GET", "/v1/me", "member", nil).Status, 200)
		r := e.call("GET", "/v1/schemas/LeadDetail.json", "", nil)
		is.Equal(r.Status, 200)
		is.Equal(r.Body["type"], "object")
	})
}

// TestOpenAPIDocumentsHeaders: generated clients see the headers guard
// reads and writes.
func TestOpenAPIDocumentsHeaders(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		var doc struct {
			Paths map[string]map[string]struct {
				Parameters []struct{ Name, In string }
				Responses  map[string]struct {
					Headers map[string]any
				}
			}
		}
		e.openAPI(&doc)
		ops := 0
		for path, item := range doc.Paths {
			for method, op := range item {
				if !strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/v1/schemas") || path == "/v1/openapi.{extension}" {
					continue
				}
				ops++
				// The previews are POSTs of the read class: no idempotency.
				write := method != "get" && path != "/v1/enrollments/preview" && path != "/v1/sequences/{id}/render"
				hasKey := false
				for _, p := range op.Parameters {
					hasKey = hasKey || (p.In == "header" && p.Name == "Idempotency-Key")
				}
				if hasKey != write {
					t.Errorf("%s %s: Idempotency-Key documented %v", method, path, hasKey)
				}
				for code, resp := range op.Responses {
					want := []string{}
					switch {
					case strings.HasPrefix(code, "2"):
						want = append(want, "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
						if write {
							want = append(want, "Idempotent-Replayed")
						}
					case code == "429":
						want = append(want, "Retry-After", "X-RateLimit-Reset")
					}
					for _, h := range want {
						if resp.Headers[h] == nil {
							t.Errorf("%s %s %s: header %s not documented", method, path, code, h)
						}
					}
				}
			}
		}
		is.True(ops > 10)
	})
}

// TestOpenAPIDocumentsInbound: the scheduling providers' webhook route,
// served outside huma, is in the document with no API key, its two
// providers and its answers.
func TestOpenAPIDocumentsInbound(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		var doc struct {
			Paths map[string]map[string]struct {
				Security   []any
				Parameters []struct {
					Name, In string
					Schema   struct{ Enum []string }
				}
				Responses map[string]struct {
					Content map[string]struct {
						Schema struct {
							Ref string `json:"$ref"`
						}
					}
				}
			}
		}
		e.openAPI(&doc)
		op, ok := doc.Paths["/inbound/{provider}/{workspace_id}"]["post"]
		is.True(ok)
		is.Equal(len(op.Security), 2) // the providers' signatures, not an API key
		is.Equal(op.Parameters[0].Name, "provider")
		is.Equal(op.Parameters[0].Schema.Enum, []string{"calcom", "calendly"})
		for _, code := range []string{"200", "401", "404", "422", "500"} {
			is.True(op.Responses[code].Content["application/json"].Schema.Ref != "")
		}
	})
}

// openAPI reads the OpenAPI document into doc.
func (e *env) openAPI(doc any) {
	e.t.Helper()
	r := e.call("GET", "/v1/openapi.json", "", nil)
	if r.Status != 200 {
		e.t.Fatalf("GET /v1/openapi.json: %d", r.Status)
	}
	if err := json.Unmarshal(r.Raw, doc); err != nil {
		e.t.Fatal(err)
	}
}

// TestOpenAPIEnumsFromRegistries: the enums of the step types and the
// capped actions are the registries' (sequences.Steps, senders.Specs),
// and no registry's name is left in the document.
func TestOpenAPIEnumsFromRegistries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Open(t, db.SQLite), DefaultRateLimits)
	is := is.New(t)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct{ Enum []string }
			}
		}
	}
	e.openAPI(&doc)
	is.Equal(doc.Components.Schemas["Step"].Properties["type"].Enum, sequences.StepTypes())
	is.Equal(doc.Components.Schemas["ActionBudget"].Properties["action"].Enum, senders.ActionNames())
	var raw map[string]any
	e.openAPI(&raw)
	text, _ := json.Marshal(raw)
	is.True(!strings.Contains(string(text), `"@`)) // a registry's name left in an enum
}
