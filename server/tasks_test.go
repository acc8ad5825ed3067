package server

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

// addClientSequences adds, for Globex and for Initech, an active sequence
// named prefix and the client, sent by the shared mailbox, with steps.
func (e *env) addClientSequences(prefix string, steps []sequences.Step) map[string]string {
	e.t.Helper()
	ids := e.addSenders()
	ctx := context.Background()
	w, _ := e.ws.ByName(ctx, "acme")
	owner := sequences.Owner{WorkspaceID: w.ID, Clients: map[string]string{"Globex": e.ids["Globex"], "Initech": e.ids["Initech"]}}
	var specs []sequences.Spec
	for _, c := range []string{"Globex", "Initech"} {
		specs = append(specs, sequences.Spec{Name: prefix + c, Client: c, Senders: []string{"mail"}, Steps: steps})
	}
	if _, err := e.srv.sequences.Apply(ctx, owner, specs); err != nil {
		e.t.Fatal(err)
	}
	for _, c := range []string{"Globex", "Initech"} {
		q, err := e.srv.sequences.ByName(ctx, w.ID, prefix+c)
		if err != nil {
			e.t.Fatal(err)
		}
		ids[prefix+c] = q.ID
		if r := e.call("POST", "/v1/sequences/"+q.ID+"/activate", "manager", nil); r.Status != 200 {
			e.t.Fatalf("activate: %d %s", r.Status, r.Raw)
		}
	}
	return ids
}

// addTaskSequences adds two active sequences that start with a call task
// and then email: one for Globex, one for Initech.
func (e *env) addTaskSequences() map[string]string {
	return e.addClientSequences("Call ", []sequences.Step{
		{ID: "call", Type: "task", Title: "Call {{first_name}}", DueInDays: 1},
		{ID: "mail", Type: "email", Subject: "Our call", Body: "Hello {{first_name|there}}"},
	})
}

func TestTaskRoutes(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ids := e.addTaskSequences()
		ann := e.lead("member", map[string]any{"name": "Ann Lee", "email_work": "ann@example.test", "client_id": e.ids["Globex"]})["id"].(string)
		cy := e.lead("member", map[string]any{"name": "Cy Park", "email_work": "cy@example.test", "client_id": e.ids["Initech"]})["id"].(string)
		enrolled := map[string]string{}
		for lead, seq := range map[string]string{ann: ids["Call Globex"], cy: ids["Call Initech"]} {
			r := e.call("POST", "/v1/enrollments", "member", map[string]any{"sequence_id": seq, "lead_ids": []string{lead}, "confirm": true})
			is.Equal(r.Status, 200)
			enrolled[lead] = r.data()["enrollment_ids"].([]any)[0].(string)
		}
		net := sandbox.New(1, e.clock, sandbox.Rates{})
		runner := e.runner(map[string]senders.Transport{senders.TransportSandbox: net})
		tick := func() {
			_, err := runner.Tick(context.Background())
			is.NoErr(err)
		}
		start := e.clock.Now()
		tick()

		// The task step opened one task per lead; the enrollment waits for it.
		r := e.call("GET", "/v1/tasks", "viewer", nil)
		is.Equal(r.Status, 200)
		is.Equal(r.Body["total"], 2.0)
		task := r.Body["data"].([]any)[0].(map[string]any)
		is.Equal(task["status"], "open")
		is.Equal(task["step_id"], "call")
		is.Equal(task["completed_at"], nil)
		is.True(task["title"] == "Call Ann" || task["title"] == "Call Cy")
		due, _ := time.Parse(time.RFC3339, task["due_at"].(string))
		is.Equal(due, start.AddDate(0, 0, 1))
		tasks := map[string]string{}
		for _, d := range r.Body["data"].([]any) {
			tasks[d.(map[string]any)["lead_id"].(string)] = d.(map[string]any)["id"].(string)
		}
		is.Equal(e.call("GET", "/v1/tasks?lead_id="+ann, "viewer", nil).Body["total"], 1.0)
		is.Equal(e.call("GET", "/v1/tasks?sequence_id="+ids["Call Initech"], "viewer", nil).Body["total"], 1.0)
		is.Equal(e.call("GET", "/v1/tasks?status=done", "viewer", nil).Body["total"], 0.0)
		is.Equal(e.call("GET", "/v1/tasks?due_before="+url.QueryEscape(due.Format(time.RFC3339)), "viewer", nil).Body["total"], 0.0)
		is.Equal(e.call("GET", "/v1/tasks?due_before="+url.QueryEscape(due.Add(time.Second).Format(time.RFC3339)), "viewer", nil).Body["total"], 2.0)
		assertEnvelope(t, e.call("GET", "/v1/tasks?status=late", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("GET", "/v1/tasks?due_before=tomorrow", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		// Client scope: a Globex key sees Globex's task only.
		r = e.call("GET", "/v1/tasks", "globexViewer", nil)
		is.Equal(r.Body["total"], 1.0)
		is.Equal(r.Body["data"].([]any)[0].(map[string]any)["lead_id"], ann)
		assertEnvelope(t, e.call("GET", "/v1/tasks?client_id="+e.ids["Initech"], "globexViewer", nil), 403, "E_FORBIDDEN")
		assertEnvelope(t, e.call("GET", "/v1/tasks/"+tasks[cy], "globexViewer", nil), 404, "E_NOT_FOUND")
		is.Equal(e.call("GET", "/v1/tasks/"+tasks[ann], "globexViewer", nil).data()["lead_id"], ann)
		is.Equal(e.call("GET", "/v1/tasks", "other", nil).Body["total"], 0.0)

		// Assignment: the member key's member (the owner) enrolled both
		// leads, so the tasks are the owner's; a member of the workspace or
		// null, as threads are assigned.
		var owner, boss string
		ctx := context.Background()
		is.NoErr(e.db.NewSelect().Table("members").Column("id").Where("email = ?", "owner@acme.test").Scan(ctx, &owner))
		is.NoErr(e.db.NewSelect().Table("members").Column("id").Where("email = ?", "boss@acme.test").Scan(ctx, &boss))
		is.Equal(task["assignee_id"], owner)
		is.Equal(e.call("GET", "/v1/tasks?assignee_id="+owner+"&status=open", "viewer", nil).Body["total"], 2.0)
		is.Equal(e.call("GET", "/v1/tasks?assignee_id=none", "viewer", nil).Body["total"], 0.0)
		assertEnvelope(t, e.call("GET", "/v1/tasks?assignee_id=bob", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("PUT", "/v1/tasks/"+tasks[ann]+"/assignee", "viewer", map[string]any{"assignee_id": boss}), 403, "E_FORBIDDEN")
		assertEnvelope(t, e.call("PUT", "/v1/tasks/"+tasks[cy]+"/assignee", "globex", map[string]any{"assignee_id": boss}), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("PUT", "/v1/tasks/"+tasks[ann]+"/assignee", "member", map[string]any{"assignee_id": "0193a000-0000-7000-8000-000000000000"}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("PUT", "/v1/tasks/"+tasks[ann]+"/assignee", "member", map[string]any{}), 422, "E_PAYLOAD_INVALID")
		r = e.call("PUT", "/v1/tasks/"+tasks[ann]+"/assignee", "globex", map[string]any{"assignee_id": boss})
		is.Equal(r.Status, 200)
		is.Equal(r.Header.Get("X-RateLimit-Limit"), "300") // write class
		is.Equal(r.data()["assignee_id"], boss)
		is.Equal(e.call("GET", "/v1/tasks?assignee_id="+boss, "viewer", nil).Body["total"], 1.0)
		is.Equal(e.call("PUT", "/v1/tasks/"+tasks[cy]+"/assignee", "member", map[string]any{"assignee_id": nil}).data()["assignee_id"], nil)
		is.Equal(e.call("GET", "/v1/tasks?assignee_id=none", "viewer", nil).Body["total"], 1.0)
		is.Equal(e.call("GET", "/v1/tasks/"+tasks[cy], "viewer", nil).data()["assignee_id"], nil)

		// Before its due time the task is an ordinary wait; past it, the
		// sequence is held and why-not-sending says tasks_pending.
		w := e.call("GET", "/v1/sequences/"+ids["Call Globex"]+"/why-not-sending", "viewer", nil).data()
		is.Equal(w["sending"], true)
		e.clock.Advance(25 * time.Hour)
		tick()
		w = e.call("GET", "/v1/sequences/"+ids["Call Globex"]+"/why-not-sending", "viewer", nil).data()
		is.Equal(w["sending"], false)
		reason := w["reasons"].([]any)[0].(map[string]any)
		is.Equal(reason["code"], "tasks_pending")
		is.Equal(reason["count"], 1.0)

		// Completing: member role, in scope, done or skipped, once.
		done := map[string]any{"outcome": "done", "note": "Called, she wants the deck."}
		assertEnvelope(t, e.call("POST", "/v1/tasks/"+tasks[ann]+"/complete", "viewer", done), 403, "E_FORBIDDEN")
		assertEnvelope(t, e.call("POST", "/v1/tasks/"+tasks[cy]+"/complete", "globex", done), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("POST", "/v1/tasks/"+tasks[ann]+"/complete", "member", map[string]any{"outcome": "maybe"}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("POST", "/v1/tasks/"+tasks[ann]+"/complete", "member", map[string]any{}), 422, "E_PAYLOAD_INVALID")
		r = e.call("POST", "/v1/tasks/"+tasks[ann]+"/complete", "globex", done)
		is.Equal(r.Status, 200)
		is.Equal(r.Header.Get("X-RateLimit-Limit"), "300") // write class
		is.Equal(r.data()["status"], "done")
		is.Equal(r.data()["note"], "Called, she wants the deck.")
		is.True(r.data()["completed_by"] != nil)
		is.True(r.data()["completed_at"] != nil)
		assertEnvelope(t, e.call("POST", "/v1/tasks/"+tasks[ann]+"/complete", "member", map[string]any{"outcome": "skipped"}), 409, "E_CONFLICT")
		// The enrollment moved on in the same call.
		en := e.call("GET", "/v1/enrollments?lead_id="+ann, "viewer", nil).Body["data"].([]any)[0].(map[string]any)
		is.Equal(en["step_id"], "mail")
		is.Equal(en["waiting_for"], nil)

		// A paused enrollment moves on when resumed.
		is.Equal(e.call("POST", "/v1/enrollments/"+enrolled[cy]+"/pause", "member", nil).Status, 200)
		is.Equal(e.call("POST", "/v1/tasks/"+tasks[cy]+"/complete", "member", map[string]any{"outcome": "skipped"}).data()["status"], "skipped")
		en = e.call("GET", "/v1/enrollments?lead_id="+cy, "viewer", nil).Body["data"].([]any)[0].(map[string]any)
		is.Equal(en["step_id"], "call")
		is.Equal(en["status"], "paused")
		is.Equal(e.call("POST", "/v1/enrollments/"+enrolled[cy]+"/resume", "member", nil).Status, 200)
		for range 48 {
			tick()
			e.clock.Advance(time.Hour)
		}
		sent := map[string]int{}
		for _, p := range net.Performed() {
			sent[p.LeadID]++
		}
		is.Equal(sent, map[string]int{ann: 1, cy: 1}) // one email each, after the task
		is.Equal(e.call("GET", "/v1/tasks?status=open", "viewer", nil).Body["total"], 0.0)

		// The lead's timeline has the task's life.
		var kinds []string
		for _, ev := range e.call("GET", "/v1/leads/"+ann+"/timeline", "viewer", nil).Body["data"].([]any) {
			kinds = append(kinds, ev.(map[string]any)["kind"].(string))
		}
		is.True(slices.Contains(kinds, "task.created"))
		is.True(slices.Contains(kinds, "task.completed"))
		is.True(slices.Contains(kinds, "task.assigned"))
	})
}
