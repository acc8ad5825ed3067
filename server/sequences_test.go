package server

import (
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/sequences"
)

// addSequences gives acme the senders of addSenders and two sequences:
// "Berlin CTOs" (Globex: anna and mail, valid) and "Broken" (Initech: ben,
// a message without a connection check). It returns ids by name.
func (e *env) addSequences() map[string]string {
	e.t.Helper()
	ids := e.addSenders()
	e.applySequences(ids, []sequences.Spec{
		{Name: "Berlin CTOs", Client: "Globex", Senders: []string{"anna", "mail"}, Steps: []sequences.Step{
			{ID: "visit", Type: "profile_view"},
			{ID: "invite", Type: "invite", Note: "Hi {{first_name}}"},
			{ID: "accepted", Type: "condition", If: "invite_accepted", WithinDays: 14, Then: "hello", Else: "mail"},
			{ID: "hello", Type: "message", Body: "Thanks, {{first_name|there}}!", Next: "end"},
			{ID: "mail", Type: "email", Subject: "{{company|Your team}} and us", Body: "Hello {{first_name|there}}"},
		}},
		{Name: "Broken", Client: "Initech", Senders: []string{"ben"}, Steps: []sequences.Step{
			{ID: "hello", Type: "message", Body: "Hi"},
		}},
	})
	return ids
}

// applySequences applies specs to acme, as a setup file does, and adds
// their ids to ids by name.
func (e *env) applySequences(ids map[string]string, specs []sequences.Spec) {
	e.t.Helper()
	ctx := context.Background()
	w, _ := e.ws.ByName(ctx, "acme")
	_, err := e.srv.sequences.Apply(ctx, sequences.Owner{WorkspaceID: w.ID, Clients: map[string]string{"Globex": e.ids["Globex"], "Initech": e.ids["Initech"]}}, specs)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, spec := range specs {
		q, err := e.srv.sequences.ByName(ctx, w.ID, spec.Name)
		if err != nil {
			e.t.Fatal(err)
		}
		ids[spec.Name] = q.ID
	}
}

func TestSequenceRoutes(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ids := e.addSequences()
		r := e.call("GET", "/v1/sequences", "viewer", nil)
		is.Equal(r.Status, 200)
		is.Equal(names(r), []string{"Berlin CTOs", "Broken"})
		is.Equal(names(e.call("GET", "/v1/sequences", "globexViewer", nil)), []string{"Berlin CTOs"})
		is.Equal(names(e.call("GET", "/v1/sequences?status=draft&client_id="+e.ids["Initech"], "viewer", nil)), []string{"Broken"})
		assertEnvelope(t, e.call("GET", "/v1/sequences?client_id="+e.ids["Initech"], "globexViewer", nil), 403, "E_FORBIDDEN")
		assertEnvelope(t, e.call("GET", "/v1/sequences/"+ids["Broken"], "globexViewer", nil), 404, "E_NOT_FOUND")

		r = e.call("GET", "/v1/sequences/"+ids["Berlin CTOs"], "viewer", nil)
		is.Equal(r.Status, 200)
		q := r.data()
		is.Equal(q["status"], "draft")
		is.Equal(q["problems"], []any{})
		is.Equal(len(q["steps"].([]any)), 5)
		is.Equal(q["steps"].([]any)[2], map[string]any{"id": "accepted", "type": "condition", "if": "invite_accepted", "within_days": 14.0, "then": "hello", "else": "mail"})
		is.Equal(len(q["senders"].([]any)), 2)
		is.Equal(q["senders"].([]any)[1].(map[string]any)["channel"], "email")

		// Activation: manager only; an invalid graph names its problems.
		assertEnvelope(t, e.call("POST", "/v1/sequences/"+ids["Berlin CTOs"]+"/activate", "member", nil), 403, "E_FORBIDDEN")
		r = e.call("POST", "/v1/sequences/"+ids["Broken"]+"/activate", "manager", nil)
		assertEnvelope(t, r, 422, "E_GRAPH_INVALID")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "message_needs_connection"))
		assertEnvelope(t, e.call("POST", "/v1/sequences/"+ids["Broken"]+"/pause", "manager", nil), 409, "E_CONFLICT")

		r = e.call("POST", "/v1/sequences/"+ids["Berlin CTOs"]+"/activate", "manager", nil)
		is.Equal(r.Status, 200)
		is.Equal(r.data()["status"], "active")
		is.True(r.data()["activated_at"] != nil)
		is.Equal(e.call("POST", "/v1/sequences/"+ids["Berlin CTOs"]+"/activate", "manager", nil).Status, 200) // again: no change
		r = e.call("POST", "/v1/sequences/"+ids["Berlin CTOs"]+"/pause", "manager", nil)
		is.Equal(r.Status, 200)
		is.Equal(r.data()["status"], "paused")

		var kinds []string
		is.NoErr(e.db.NewSelect().Table("events").Column("kind").Where("sequence_id = ?", ids["Berlin CTOs"]).OrderExpr("created_at, id").Scan(context.Background(), &kinds))
		is.Equal(kinds, []string{sequences.EventActivated, sequences.EventPaused})
	})
}
