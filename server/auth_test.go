package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/workspace"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.addTestOps()

		t.Run("no key", func(t *testing.T) {
			assertEnvelope(t, e.call("GET", "/v1/me", "", nil), 401, apikit.EUnauthorized)
		})
		t.Run("bad key", func(t *testing.T) {
			assertEnvelope(t, e.call("GET", "/v1/me", "ll_0000", nil), 401, apikit.EUnauthorized)
			assertEnvelope(t, e.call("GET", "/v1/me", "", nil, "Authorization", "Basic Zm9vOmJhcg=="), 401, apikit.EUnauthorized)
		})
		t.Run("X-API-Key works like Bearer", func(t *testing.T) {
			is := is.New(t)
			r := e.call("GET", "/v1/me", "", nil, "X-API-Key", e.keys["viewer"])
			is.Equal(r.Status, 200)
			is.Equal(r.data()["role"], "client_viewer")
		})
		t.Run("expired", func(t *testing.T) {
			_, secret, err := e.ws.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "boss@acme.test", Role: apikit.RoleMember, ExpiresAt: ptr(t0.Add(time.Hour))})
			if err != nil {
				t.Fatal(err)
			}
			is.New(t).Equal(e.call("GET", "/v1/me", secret, nil).Status, 200)
			e.clock.Advance(time.Hour)
			assertEnvelope(t, e.call("GET", "/v1/me", secret, nil), 401, apikit.EUnauthorized)
		})
		t.Run("revoked", func(t *testing.T) {
			k, secret, err := e.ws.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "boss@acme.test", Role: apikit.RoleMember})
			if err != nil {
				t.Fatal(err)
			}
			is.New(t).Equal(e.call("GET", "/v1/me", secret, nil).Status, 200)
			if _, err := e.ws.RevokeKey(ctx, "acme", k.ID); err != nil {
				t.Fatal(err)
			}
			assertEnvelope(t, e.call("GET", "/v1/me", secret, nil), 401, apikit.EUnauthorized)
		})
	})
}

// TestTwoCredentialsAreRefused: a request that carries more than one
// credential is refused with 401 and a remedy, whichever keys they are,
// on every route, and changes nothing; leadline does not pick one.
func TestTwoCredentialsAreRefused(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		send := func(method, path string, header http.Header) *resp {
			t.Helper()
			req := httptest.NewRequest(method, path, strings.NewReader(`{"linkedin_id": "ACoA9"}`))
			req.Header = header
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			r := &resp{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
			_ = json.Unmarshal(r.Raw, &r.Body)
			return r
		}
		bearer := func(name string) string { return "Bearer " + e.keys[name] }
		for name, h := range map[string]http.Header{
			"two different keys":       {"Authorization": {bearer("member")}, "X-Api-Key": {e.keys["viewer"]}},
			"the same key twice":       {"Authorization": {bearer("member")}, "X-Api-Key": {e.keys["member"]}},
			"two bearer headers":       {"Authorization": {bearer("member"), bearer("viewer")}},
			"two X-API-Key headers":    {"X-Api-Key": {e.keys["member"], e.keys["member"]}},
			"an invalid and a valid":   {"Authorization": {"Bearer ll_nope"}, "X-Api-Key": {e.keys["member"]}},
			"another scheme and a key": {"Authorization": {"Basic Zm9vOmJhcg=="}, "X-Api-Key": {e.keys["member"]}},
		} {
			for _, route := range [][2]string{{"POST", "/v1/leads"}, {"GET", "/v1/me"}, {"GET", "/v1/no-such-route"}} {
				r := send(route[0], route[1], h.Clone())
				assertEnvelope(t, r, 401, apikit.EUnauthorized)
				if !strings.Contains(r.Body["error"].(map[string]any)["remedy"].(string), "one credential") {
					t.Errorf("%s, %s %s: remedy %s", name, route[0], route[1], r.Raw)
				}
			}
		}
		r := e.call("GET", "/v1/leads", "member", nil)
		is.Equal(r.Body["total"], 0.0) // no lead was created
	})
}

// TestRoles checks each role against a read, a write and a manager-only
// call, and that a creator's lowered role or departure changes the key on
// the very next request.
func TestRoles(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		e.addTestOps()
		read := func(key string) *resp { return e.call("GET", "/v1/me", key, nil) }
		write := func(key string) *resp {
			return e.call("POST", "/v1/leads", key, map[string]any{"email_work": "roles@x.test", "client_id": e.ids["Globex"]})
		}
		manager := func(key string) *resp { return e.call("POST", "/v1/test/manager", key, map[string]any{"n": 1}) }

		for _, c := range []struct {
			key                  string
			read, write, manager int
		}{
			{"viewer", 200, 403, 403},
			{"member", 200, 0, 403},
			{"manager", 200, 0, 200},
		} {
			t.Run(c.key, func(t *testing.T) {
				is := is.New(t)
				is.Equal(read(c.key).Status, c.read)
				if w := write(c.key); c.write == 403 {
					assertEnvelope(t, w, 403, apikit.EForbidden)
				} else {
					is.True(w.Status == 200 || w.Status == 201)
				}
				if m := manager(c.key); c.manager == 403 {
					assertEnvelope(t, m, 403, apikit.EForbidden)
				} else {
					is.Equal(m.Status, 200)
				}
			})
		}

		t.Run("creator's role lowered", func(t *testing.T) {
			is := is.New(t)
			is.Equal(manager("manager").Status, 200)
			s := acmeSetup()
			s.Workspaces[0].Members[1].Role = apikit.RoleMember // boss, who created the manager key
			_, err := e.ws.Apply(context.Background(), s)
			is.NoErr(err)
			assertEnvelope(t, manager("manager"), 403, apikit.EForbidden)
			r := read("manager")
			is.Equal(r.Status, 200)
			is.Equal(r.data()["role"], "member")
			is.True(write("manager").Status < 300)
		})
		t.Run("creator left", func(t *testing.T) {
			s := acmeSetup()
			s.Workspaces[0].Members[1].Active = ptr(false)
			if _, err := e.ws.Apply(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			assertEnvelope(t, read("manager"), 401, apikit.EUnauthorized)
		})
		t.Run("suspended workspace", func(t *testing.T) {
			s := acmeSetup()
			s.Workspaces[0].Suspended = ptr(true)
			if _, err := e.ws.Apply(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"viewer", "member"} {
				assertEnvelope(t, read(key), http.StatusPaymentRequired, apikit.EPlanSuspended)
				assertEnvelope(t, write(key), http.StatusPaymentRequired, apikit.EPlanSuspended)
			}
			is.New(t).Equal(read("other").Status, 200) // other workspaces go on
		})
	})
}

func TestMe(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		r := e.call("GET", "/v1/me", "globexViewer", nil)
		is.Equal(r.Status, 200)
		d := r.data()
		is.Equal(d["role"], "client_viewer")
		is.Equal(d["client_scope"], []any{e.ids["Globex"]})
		is.Equal(d["clients"], []any{map[string]any{"id": e.ids["Globex"], "name": "Globex"}}) // only its own client
		is.Equal(len(d["stages"].([]any)), 3)
		is.Equal(len(d["tags"].([]any)), 3)
		is.Equal(len(d["lists"].([]any)), 2)
		is.Equal(d["member"].(map[string]any)["email"], "owner@acme.test")

		r = e.call("GET", "/v1/me", "manager", nil)
		is.Equal(r.data()["client_scope"], []any{})
		is.Equal(len(r.data()["clients"].([]any)), 3)

		r = e.call("GET", "/v1/metrics/definitions", "viewer", nil)
		is.Equal(r.Status, 200)
		for _, k := range []string{"sends.invite", "sends.email", "acceptance_rate", "replies", "intents.interested", "meetings.booked", "cost.total"} {
			def, ok := r.data()[k].(map[string]any)
			is.True(ok) // every product metric is defined
			for _, f := range []string{"label", "description", "unit", "computation"} {
				is.True(def[f] != "")
			}
		}
	})
}
