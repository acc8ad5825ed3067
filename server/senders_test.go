package server

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/senders"
)

// addSenders gives acme three senders: anna (LinkedIn, Globex), ben
// (LinkedIn, Initech, paused) and mail (email, workspace-wide). It returns
// their ids by name.
func (e *env) addSenders() map[string]string {
	e.t.Helper()
	ctx := context.Background()
	w, err := e.ws.ByName(ctx, "acme")
	if err != nil {
		e.t.Fatal(err)
	}
	owner := senders.Owner{WorkspaceID: w.ID, Timezone: w.Timezone, Clients: map[string]string{"Globex": e.ids["Globex"], "Initech": e.ids["Initech"]}}
	_, err = e.srv.senders.Apply(ctx, owner, []senders.Spec{
		{Name: "anna", Channel: senders.LinkedIn, Client: "Globex", MonthlyCost: 99, Caps: map[string]int{"invite": 25},
			Warmup: &senders.Warmup{Start: "2026-11-01", From: 5, Step: 5}},
		{Name: "ben", Channel: senders.LinkedIn, Client: "Initech", Status: senders.Paused},
		{Name: "mail", Channel: senders.Email, Address: "sales@acme.test"},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	ids := map[string]string{}
	all, _ := e.srv.senders.All(ctx, w.ID)
	for _, s := range all {
		ids[s.Name] = s.ID
	}
	return ids
}

func names(r *resp) []string {
	var out []string
	for _, d := range r.Body["data"].([]any) {
		out = append(out, d.(map[string]any)["name"].(string))
	}
	return out
}

func TestSenderRoutes(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ids := e.addSenders()

		r := e.call("GET", "/v1/senders", "viewer", nil)
		is.Equal(r.Status, 200)
		is.Equal(names(r), []string{"anna", "ben", "mail"})
		is.Equal(r.Body["total"], 3.0)
		is.Equal(r.Body["has_more"], false)
		is.Equal(names(e.call("GET", "/v1/senders?channel=linkedin&status=active", "viewer", nil)), []string{"anna"})
		is.Equal(names(e.call("GET", "/v1/senders?client_id="+e.ids["Initech"], "viewer", nil)), []string{"ben"})
		r = e.call("GET", "/v1/senders?limit=1&offset=1", "viewer", nil)
		is.Equal(names(r), []string{"ben"})
		is.Equal(r.Body["has_more"], true)
		assertEnvelope(t, e.call("GET", "/v1/senders?channel=fax", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("GET", "/v1/senders?limit=201", "viewer", nil), 422, "E_PAYLOAD_INVALID")

		// A scoped key sees only its clients' senders.
		is.Equal(names(e.call("GET", "/v1/senders", "globexViewer", nil)), []string{"anna"})
		assertEnvelope(t, e.call("GET", "/v1/senders?client_id="+e.ids["Initech"], "globexViewer", nil), 403, "E_FORBIDDEN")
		assertEnvelope(t, e.call("GET", "/v1/senders/"+ids["ben"], "globexViewer", nil), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("GET", "/v1/senders/"+ids["mail"]+"/budgets", "globexViewer", nil), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("GET", "/v1/senders/"+ids["anna"], "other", nil), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("GET", "/v1/senders/"+ids["anna"], "", nil), 401, "E_UNAUTHORIZED")

		r = e.call("GET", "/v1/senders/"+ids["anna"], "globexViewer", nil)
		is.Equal(r.Status, 200)
		anna := r.data()
		is.Equal(anna["client_id"], e.ids["Globex"])
		is.Equal(anna["timezone"], "Europe/Berlin")
		is.Equal(anna["health"], "healthy")
		is.Equal(anna["monthly_cost"], 99.0)
		is.Equal(anna["caps"].(map[string]any)["invite"], 25.0)
		is.Equal(anna["schedule"].(map[string]any)["mon"], []any{"09:00-17:00"})
		is.Equal(anna["warmup"], map[string]any{"start": "2026-11-01", "from": 5.0, "step": 5.0})

		r = e.call("GET", "/v1/senders/"+ids["anna"]+"/health", "viewer", nil)
		is.Equal(r.Status, 200)
		is.Equal(r.data()["state"], "healthy")
		is.Equal(r.data()["reasons"], []any{})
		is.Equal(r.data()["acceptance_rate"], nil)
		is.Equal(r.data()["pending_invitations"], 0.0)

		// 2 November 2026 09:15 UTC is 10:15 in Berlin, day 1 of the ramp.
		r = e.call("GET", "/v1/senders/"+ids["anna"]+"/budgets", "viewer", nil)
		is.Equal(r.Status, 200)
		b := r.data()
		is.Equal(b["date"], "2026-11-02")
		is.Equal(b["resets_at"], "2026-11-02T23:00:00Z")
		inv := b["actions"].([]any)[1].(map[string]any)
		is.Equal(inv["action"], "invite")
		is.Equal(inv["cap"], 25.0)
		is.Equal(inv["ceiling"], 100.0)
		is.Equal(inv["warmup_cap"], 10.0)
		is.Equal(inv["health_cap"], nil)
		is.Equal(inv["effective_cap"], 10.0)
		is.Equal(inv["remaining"], 10.0)
		is.Equal(b["invite_week"], map[string]any{"cap": 100.0, "used": 0.0, "remaining": 100.0})
		r = e.call("GET", "/v1/senders/"+ids["mail"]+"/budgets", "viewer", nil)
		is.Equal(len(r.data()["actions"].([]any)), 1)
		is.Equal(r.data()["invite_week"], nil)

		assertEnvelope(t, e.call("GET", "/v1/senders/"+ids["anna"]+"/budgets?x=1", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("GET", "/v1/senders/0193A000-0000-7000-8000-000000000000", "viewer", nil), 422, "E_PAYLOAD_INVALID")
	})
}
