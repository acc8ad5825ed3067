package server

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
)

// leadCount is how many leads the member key sees.
func (e *env) leadCount() float64 {
	e.t.Helper()
	r := e.call("GET", "/v1/leads?limit=1", "member", nil)
	if r.Status != 200 {
		e.t.Fatalf("list: %d %s", r.Status, r.Raw)
	}
	return r.Body["total"].(float64)
}

// TestBodiesTakenExactlyOrRefused sends bodies that a lenient decoder
// would change on the way in: each gets 422 and changes nothing.
func TestBodiesTakenExactlyOrRefused(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		id := e.lead("member", map[string]any{"linkedin_id": "strict-1", "name": "Kept"})["id"].(string)
		before := e.leadCount()
		for name, body := range map[string]string{
			"invalid UTF-8 in a value":       "{\"linkedin_id\":\"s-2\",\"name\":\"\xff\xfe\xc3\x28\"}",
			"overlong encoding in an email":  "{\"email_work\":\"a\xc0\x80b@x.test\"}",
			"invalid UTF-8 in a custom key":  "{\"linkedin_id\":\"s-3\",\"custom\":{\"\xc0\xaf\":1}}",
			"escaped lone surrogate":         `{"linkedin_id":"s-4","name":"\ud800"}`,
			"field name in upper case":       `{"EMAIL_WORK":"up@x.test"}`,
			"field name in another case":     `{"linkedin_id":"s-5","name":"lower","Name":"Upper"}`,
			"duplicate field":                `{"linkedin_id":"s-6","name":"a","name":"b"}`,
			"duplicate key inside custom":    `{"linkedin_id":"s-7","custom":{"a":1,"a":2}}`,
			"two JSON values":                `{"linkedin_id":"s-8"} {"linkedin_id":"s-9"}`,
			"deep nesting beyond the parser": `{"linkedin_id":"s-10","custom":{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}`,
		} {
			t.Run(name, func(t *testing.T) {
				assertEnvelope(t, e.call("POST", "/v1/leads", "member", body), 422, apikit.EPayloadInvalid)
				assertEnvelope(t, e.call("PATCH", "/v1/leads/"+id, "member", body), 422, apikit.EPayloadInvalid)
			})
		}
		is := is.New(t)
		is.Equal(e.leadCount(), before)
		got := e.call("GET", "/v1/leads/"+id, "member", nil).data()
		is.Equal(got["name"], "Kept")
	})
}

// TestCustomNumbersRoundTrip stores numbers no float64 can hold and reads
// every digit back, from the write's answer, the lead and the list.
func TestCustomNumbersRoundTrip(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		body := `{"linkedin_id":"num-1","custom":{"big":12345678901234567891,"odd":9007199254740993,"neg":-0.1000000000000000055511151231257827,"nested":{"n":[18446744073709551617]}}}`
		for _, r := range []*resp{
			e.call("POST", "/v1/leads", "member", body),
			e.call("PATCH", "/v1/leads/"+e.lead("member", map[string]any{"linkedin_id": "num-1"})["id"].(string), "member", `{"custom":{"more":123456789012345678901234567890}}`),
		} {
			is.True(r.Status < 300)
		}
		id := e.lead("member", map[string]any{"linkedin_id": "num-1"})["id"].(string)
		for _, raw := range [][]byte{e.call("GET", "/v1/leads/"+id, "member", nil).Raw, e.call("GET", "/v1/leads?source=&public_identifier=", "member", nil).Raw} {
			s := string(raw)
			for _, want := range []string{"12345678901234567891", "9007199254740993", "18446744073709551617", "123456789012345678901234567890"} {
				if !strings.Contains(s, want) {
					t.Fatalf("%s lost digits: %s", want, s)
				}
			}
		}
	})
}

// TestIDsOneForm takes ids only as lower-case uuids, on both engines and
// in paths, queries and bodies alike.
func TestIDsOneForm(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		id := e.lead("member", map[string]any{"linkedin_id": "ids-1"})["id"].(string)
		hex := strings.ReplaceAll(id, "-", "")
		for name, path := range map[string]string{
			"upper case":     "/v1/leads/" + strings.ToUpper(id),
			"braces":         "/v1/leads/%7B" + id + "%7D",
			"urn":            "/v1/leads/urn:uuid:" + id,
			"bare hex":       "/v1/leads/" + hex,
			"query":          "/v1/leads?client_id=" + strings.ToUpper(e.ids["Globex"]),
			"timeline upper": "/v1/leads/" + strings.ToUpper(id) + "/timeline",
		} {
			t.Run(name, func(t *testing.T) {
				r := e.call("GET", path, "member", nil)
				assertEnvelope(t, r, 422, apikit.EPayloadInvalid)
				if !strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "lower-case uuid") {
					t.Fatalf("message does not say the form: %s", r.Raw)
				}
			})
		}
		for name, c := range map[string]struct {
			method, path string
			body         any
		}{
			"body client_id":   {"POST", "/v1/leads", map[string]any{"linkedin_id": "ids-2", "client_id": strings.ToUpper(e.ids["Globex"])}},
			"body tag_id":      {"POST", "/v1/leads/" + id + "/tags", map[string]any{"tag_id": "{" + e.ids["vip"] + "}"}},
			"body tag_ids":     {"POST", "/v1/leads/" + id + "/tags", map[string]any{"tag_ids": []string{strings.ToUpper(e.ids["vip"])}}},
			"body stage_id":    {"PUT", "/v1/leads/" + id + "/stage", map[string]any{"stage_id": strings.ToUpper(e.ids["New"])}},
			"body lead_ids":    {"POST", "/v1/leads/enrich", map[string]any{"lead_ids": []string{strings.ToUpper(id)}}},
			"path tag_id":      {"DELETE", "/v1/leads/" + id + "/tags/" + strings.ToUpper(e.ids["vip"]), nil},
			"patch list_id":    {"PATCH", "/v1/leads/" + id, map[string]any{"list_id": "urn:uuid:" + e.ids["Berlin CTOs"]}},
			"suppress upper":   {"POST", "/v1/leads/" + strings.ToUpper(id) + "/suppress", nil},
			"unsuppress upper": {"DELETE", "/v1/leads/" + strings.ToUpper(id) + "/suppress", nil},
		} {
			t.Run(name, func(t *testing.T) {
				assertEnvelope(t, e.call(c.method, c.path, "member", c.body), 422, apikit.EPayloadInvalid)
			})
		}
		is.New(t).Equal(e.call("GET", "/v1/leads/"+id, "member", nil).Status, 200)
	})
}

// TestShortSearchFoldsCase finds a lead by a search shorter than a trigram
// in any case, for letters beyond ASCII too, on both engines.
func TestShortSearchFoldsCase(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		e.lead("member", map[string]any{"linkedin_id": "lev-1", "name": "Лев Толстой", "company": "Ясная Поляна"})
		e.lead("member", map[string]any{"linkedin_id": "emil-1", "name": "Émile Zola"})
		for q, want := range map[string]float64{"ле": 1, "Ле": 1, "ЛЕ": 1, "ya": 0, "яс": 1, "ÉM": 1, "ém": 1, "Лев": 1, "лев": 1, "ЕМ": 0} {
			r := e.call("GET", "/v1/leads?q="+q, "member", nil)
			is.Equal(r.Status, 200)
			if r.Body["total"].(float64) != want {
				t.Fatalf("q=%s: want %v, got %s", q, want, r.Raw)
			}
		}
	})
}

// TestCountingRules: every tag id sent counts and may be sent once; custom
// field names count characters; an Idempotency-Key must say something.
func TestCountingRules(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		id := e.lead("member", map[string]any{"linkedin_id": "count-1"})["id"].(string)
		vip := e.ids["vip"]
		copies := make([]string, 20)
		for i := range copies {
			copies[i] = vip
		}
		r := e.call("POST", "/v1/leads/"+id+"/tags", "member", map[string]any{"tag_ids": copies, "tag_id": vip})
		assertEnvelope(t, r, 422, apikit.ETooMany)
		r = e.call("POST", "/v1/leads/"+id+"/tags", "member", map[string]any{"tag_ids": []string{vip, e.ids["cold"]}, "tag_id": vip})
		assertEnvelope(t, r, 422, apikit.EPayloadInvalid)
		is.True(strings.Contains(string(r.Raw), "twice"))
		is.Equal(len(e.call("GET", "/v1/leads/"+id, "member", nil).data()["tags"].([]any)), 0)
		r = e.call("POST", "/v1/leads/"+id+"/tags", "member", map[string]any{"tag_ids": []string{e.ids["cold"]}, "tag_id": vip})
		is.Equal(r.Status, 200)
		is.Equal(len(r.data()["tags"].([]any)), 2)

		name100 := strings.Repeat("я", 100) // 200 bytes, 100 characters
		is.Equal(e.call("PATCH", "/v1/leads/"+id, "member", map[string]any{"custom": map[string]any{name100: 1}}).Status, 200)
		r = e.call("PATCH", "/v1/leads/"+id, "member", map[string]any{"custom": map[string]any{name100 + "я": 1}})
		assertEnvelope(t, r, 422, apikit.EPayloadInvalid)
		is.True(strings.Contains(string(r.Raw), "100 characters"))

		for _, k := range []string{"   ", "\t"} {
			r = e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": "count-2"}, "Idempotency-Key", k)
			assertEnvelope(t, r, 422, apikit.EPayloadInvalid)
		}
		r = e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": "count-2"}, "Idempotency-Key", "a\x7fb")
		assertEnvelope(t, r, 422, apikit.EPayloadInvalid)
		is.Equal(e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": "count-2"}, "Idempotency-Key", "order 42").Status, 201)
	})
}

// TestCustomStaysBounded: the stored custom object of a lead is bounded as
// a whole, across any series of updates.
func TestCustomStaysBounded(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		id := e.lead("member", map[string]any{"linkedin_id": "bound-1"})["id"].(string)
		chunk := strings.Repeat("x", 7000)
		is.Equal(e.call("PATCH", "/v1/leads/"+id, "member", map[string]any{"custom": map[string]any{"a": chunk}}).Status, 200)
		is.Equal(e.call("PATCH", "/v1/leads/"+id, "member", map[string]any{"custom": map[string]any{"b": chunk}}).Status, 200)
		r := e.call("PATCH", "/v1/leads/"+id, "member", map[string]any{"custom": map[string]any{"c": chunk}})
		assertEnvelope(t, r, 422, apikit.ETooMany)
		// Replacing a value within the bound still works; removing frees room.
		is.Equal(e.call("PATCH", "/v1/leads/"+id, "member", map[string]any{"custom": map[string]any{"a": nil, "c": chunk}}).Status, 200)

		// 100 fields in all, reached over several calls.
		id2 := e.lead("member", map[string]any{"linkedin_id": "bound-2"})["id"].(string)
		for round := 0; round < 2; round++ {
			c := map[string]any{}
			for i := 0; i < 50; i++ {
				c[fmt.Sprintf("k%d_%d", round, i)] = i
			}
			is.Equal(e.call("PATCH", "/v1/leads/"+id2, "member", map[string]any{"custom": c}).Status, 200)
		}
		r = e.call("PATCH", "/v1/leads/"+id2, "member", map[string]any{"custom": map[string]any{"one_more": 1}})
		assertEnvelope(t, r, 422, apikit.ETooMany)
		r = e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": "bound-2", "custom": map[string]any{"one_more": 1}})
		assertEnvelope(t, r, 422, apikit.ETooMany)
		is.Equal(len(e.call("GET", "/v1/leads/"+id2, "member", nil).data()["custom"].(map[string]any)), 100)

		// Nesting: five levels counting custom itself, no more.
		ok := `{"custom":{"a":{"b":{"c":{"d":{"e":1}}}}}}`
		deep := `{"custom":{"a":{"b":{"c":{"d":{"e":{"f":1}}}}}}}`
		is.Equal(e.call("PATCH", "/v1/leads/"+id, "member", ok).Status, 200)
		assertEnvelope(t, e.call("PATCH", "/v1/leads/"+id, "member", deep), 422, apikit.EPayloadInvalid)
		before := e.leadCount()
		assertEnvelope(t, e.call("POST", "/v1/leads", "member", `{"linkedin_id":"bound-3","custom":{"a":[[[[[1]]]]]}}`), 422, apikit.EPayloadInvalid)
		is.Equal(e.leadCount(), before)
	})
}

// TestOtherClientsRevealOnlyExistence: a client-scoped key can learn that
// an identity exists elsewhere in the workspace (matching is
// workspace-wide), and nothing more: no id, name or client.
func TestOtherClientsRevealOnlyExistence(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		hidden := e.lead("member", map[string]any{"linkedin_id": "hidden-li", "email_work": "hidden@initech.test",
			"name": "Hidden Person", "company": "Initech Corp", "client_id": e.ids["Initech"]})
		own := e.lead("globex", map[string]any{"linkedin_id": "own-li"})
		secrets := []string{hidden["id"].(string), "Hidden Person", "Initech", e.ids["Initech"]}
		check := func(r *resp) {
			t.Helper()
			for _, s := range secrets {
				if strings.Contains(string(r.Raw), s) {
					t.Fatalf("answer reveals %q: %s", s, r.Raw)
				}
			}
		}
		r := e.call("POST", "/v1/leads", "globex", map[string]any{"email_work": "HIDDEN@initech.test", "name": "Probe"})
		assertEnvelope(t, r, 409, apikit.EConflict)
		check(r)
		r = e.call("PATCH", "/v1/leads/"+own["id"].(string), "globex", map[string]any{"email_work": "hidden@initech.test"})
		is.Equal(r.Status, 200)
		is.Equal(r.Body["unchanged_fields"], []any{"email_work"})
		check(r)
		r = e.call("PATCH", "/v1/leads/"+own["id"].(string), "globex", map[string]any{"linkedin_id": "hidden-li"})
		assertEnvelope(t, r, 409, apikit.EConflict)
		check(r)
		r = e.call("GET", "/v1/leads?email=hidden@initech.test", "globex", nil)
		is.Equal(r.Body["total"], float64(0))
		check(r)
	})
}

// TestRepeatedIdempotencyKey: two Idempotency-Key headers on one request
// are refused; which one would count is not for the server to guess.
func TestRepeatedIdempotencyKey(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		req := httptest.NewRequest("POST", "/v1/leads", strings.NewReader(`{"linkedin_id":"twice-1"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.keys["member"])
		req.Header.Add("Idempotency-Key", "a")
		req.Header.Add("Idempotency-Key", "b")
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		r := &resp{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
		_ = json.Unmarshal(r.Raw, &r.Body)
		assertEnvelope(t, r, 422, apikit.EPayloadInvalid)
	})
}
