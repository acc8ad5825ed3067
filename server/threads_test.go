package server

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

// addMailSequences adds an active one-email sequence for Globex and one
// for Initech, both sent by the shared mailbox.
func (e *env) addMailSequences() map[string]string {
	return e.addClientSequences("Mail ", []sequences.Step{{ID: "hi", Type: "email", Subject: "Hello {{first_name}}", Body: "Hi {{first_name}}"}})
}

// mailed is Ann Lee (Globex) and Cy Park (Initech), each enrolled in their
// client's one-email sequence and mailed by the sandbox network.
type mailed struct {
	ids     map[string]string
	ann, cy string
	net     *sandbox.Network
	tick    func()
}

func (e *env) mailAnnAndCy(t *testing.T) *mailed {
	t.Helper()
	is := is.New(t)
	m := &mailed{ids: e.addMailSequences()}
	m.ann = e.lead("member", map[string]any{"name": "Ann Lee", "email_work": "ann@example.test", "client_id": e.ids["Globex"]})["id"].(string)
	m.cy = e.lead("member", map[string]any{"name": "Cy Park", "email_work": "cy@example.test", "client_id": e.ids["Initech"]})["id"].(string)
	for lead, seq := range map[string]string{m.ann: m.ids["Mail Globex"], m.cy: m.ids["Mail Initech"]} {
		is.Equal(e.call("POST", "/v1/enrollments", "member", map[string]any{"sequence_id": seq, "lead_ids": []string{lead}, "confirm": true}).Status, 200)
	}
	m.net = sandbox.New(1, e.clock, sandbox.Rates{})
	runner := e.runner(map[string]senders.Transport{senders.TransportSandbox: m.net})
	m.tick = func() {
		_, err := runner.Tick(context.Background())
		is.NoErr(err)
	}
	for range 6 {
		m.tick()
		e.clock.Advance(time.Hour)
	}
	is.Equal(len(m.net.Performed()), 2)
	return m
}

func TestThreadRoutes(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := context.Background()
		setup := e.mailAnnAndCy(t)
		ids, ann, cy, net, tick := setup.ids, setup.ann, setup.cy, setup.net, setup.tick
		for range 6 {
			tick()
			e.clock.Advance(time.Hour)
		}

		// Each email opened a thread; scope decides who sees it.
		r := e.call("GET", "/v1/threads", "viewer", nil)
		is.Equal(r.Status, 200)
		is.Equal(r.Body["total"], 2.0)
		threads := map[string]string{}
		for _, d := range r.Body["data"].([]any) {
			threads[d.(map[string]any)["lead_id"].(string)] = d.(map[string]any)["id"].(string)
		}
		is.Equal(e.call("GET", "/v1/threads", "globexViewer", nil).Body["total"], 1.0)
		is.Equal(e.call("GET", "/v1/threads", "other", nil).Body["total"], 0.0)
		assertEnvelope(t, e.call("GET", "/v1/threads?client_id="+e.ids["Initech"], "globexViewer", nil), 403, "E_FORBIDDEN")
		assertEnvelope(t, e.call("GET", "/v1/threads/"+threads[cy], "globexViewer", nil), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("GET", "/v1/threads/"+threads[cy], "other", nil), 404, "E_NOT_FOUND")

		// Ann answers; the reply lands in her thread, read as interested.
		net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: ids["mail"], LeadID: ann, At: e.clock.Now(), ProviderMessageID: "m-1",
			Subject: "Re: Hello Ann", Body: "Sounds good, let's talk. Thursday afternoon?"})
		tick()
		v := e.call("GET", "/v1/threads/"+threads[ann], "globexViewer", nil).data()
		is.Equal(v["intent"], "interested")
		is.Equal(v["intent_source"], "auto")
		is.Equal(v["unread"], true)
		is.Equal(v["message_count"], 2.0)
		msgs := v["messages"].([]any)
		is.Equal(len(msgs), 2)
		is.Equal(msgs[0].(map[string]any)["direction"], "out")
		is.Equal(msgs[0].(map[string]any)["subject"], "Hello Ann")
		is.Equal(msgs[1].(map[string]any)["direction"], "in")
		is.Equal(msgs[1].(map[string]any)["intent"], "interested")
		// Reading changes nothing.
		is.Equal(e.call("GET", "/v1/threads/"+threads[ann], "viewer", nil).data()["unread"], true)

		// Filters.
		count := func(q string) float64 { return e.call("GET", "/v1/threads?"+q, "viewer", nil).Body["total"].(float64) }
		is.Equal(count("intent=interested"), 1.0)
		is.Equal(count("intent=ooo"), 0.0)
		is.Equal(count("unread=true"), 1.0)
		is.Equal(count("unread=false"), 1.0)
		is.Equal(count("assignee_id=none"), 2.0)
		is.Equal(count("sender_id="+ids["mail"]), 2.0)
		is.Equal(count("sequence_id="+ids["Mail Initech"]), 1.0)
		is.Equal(count("lead_id="+ann), 1.0)
		is.Equal(count("client_id="+e.ids["Globex"]), 1.0)
		is.Equal(count("updated_since="+url.QueryEscape(e.clock.Now().Add(time.Hour).Format(time.RFC3339))), 0.0)
		assertEnvelope(t, e.call("GET", "/v1/threads?intent=happy", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("GET", "/v1/threads?assignee_id=bob", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("GET", "/v1/threads?unread=yes", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		// Newest activity first.
		is.Equal(e.call("GET", "/v1/threads", "viewer", nil).Body["data"].([]any)[0].(map[string]any)["lead_id"], ann)

		// Intent by hand.
		assertEnvelope(t, e.call("PUT", "/v1/threads/"+threads[ann]+"/intent", "viewer", map[string]any{"intent": "not_now"}), 403, "E_FORBIDDEN")
		assertEnvelope(t, e.call("PUT", "/v1/threads/"+threads[ann]+"/intent", "member", map[string]any{"intent": "maybe"}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("PUT", "/v1/threads/"+threads[cy]+"/intent", "globex", map[string]any{"intent": "not_now"}), 404, "E_NOT_FOUND")
		r = e.call("PUT", "/v1/threads/"+threads[ann]+"/intent", "globex", map[string]any{"intent": "not_now"})
		is.Equal(r.Status, 200)
		is.Equal(r.data()["intent"], "not_now")
		is.Equal(r.data()["intent_source"], "manual")

		// Assignment: a member of the workspace, or null.
		var owner string
		is.NoErr(e.db.NewSelect().Table("members").Column("id").Where("email = ?", "owner@acme.test").Scan(ctx, &owner))
		assertEnvelope(t, e.call("PUT", "/v1/threads/"+threads[ann]+"/assignee", "member", map[string]any{"assignee_id": "0193a000-0000-7000-8000-000000000000"}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("PUT", "/v1/threads/"+threads[ann]+"/assignee", "member", map[string]any{}), 422, "E_PAYLOAD_INVALID")
		is.Equal(e.call("PUT", "/v1/threads/"+threads[ann]+"/assignee", "member", map[string]any{"assignee_id": owner}).data()["assignee_id"], owner)
		is.Equal(count("assignee_id="+owner), 1.0)
		var assigned int
		for _, ev := range e.call("GET", "/v1/leads/"+ann+"/timeline", "viewer", nil).Body["data"].([]any) {
			if ev.(map[string]any)["kind"] == "thread.assigned" {
				assigned++
			}
		}
		is.Equal(assigned, 1) // the change is on the lead's timeline
		is.Equal(count("assignee_id=none"), 1.0)
		is.Equal(e.call("PUT", "/v1/threads/"+threads[ann]+"/assignee", "member", map[string]any{"assignee_id": nil}).data()["assignee_id"], nil)

		// Marking read is a write.
		assertEnvelope(t, e.call("POST", "/v1/threads/"+threads[ann]+"/read", "viewer", nil), 403, "E_FORBIDDEN")
		is.Equal(e.call("POST", "/v1/threads/"+threads[ann]+"/read", "member", nil).data()["unread"], false)

		// Replies: refused while the rules forbid them, and nothing is sent.
		reply := map[string]any{"body": "Great, Thursday 3pm works."}
		sent := len(net.Performed())
		assertEnvelope(t, e.call("POST", "/v1/threads/"+threads[ann]+"/reply", "viewer", reply), 403, "E_FORBIDDEN")
		assertEnvelope(t, e.call("POST", "/v1/threads/"+threads[ann]+"/reply", "member", map[string]any{"body": ""}), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("POST", "/v1/threads/"+threads[ann]+"/reply", "member", map[string]any{"body": "  "}), 422, "E_PAYLOAD_INVALID")
		// The mailbox used today's budget (cap 2: both emails).
		w, _ := e.ws.ByName(ctx, "acme")
		_, err := e.srv.senders.Apply(ctx, senders.Owner{WorkspaceID: w.ID, Timezone: w.Timezone, Clients: map[string]string{"Globex": e.ids["Globex"], "Initech": e.ids["Initech"]}},
			[]senders.Spec{{Name: "mail", Channel: senders.Email, Address: "sales@acme.test", Caps: map[string]int{"email": 2}}})
		is.NoErr(err)
		r = e.call("POST", "/v1/threads/"+threads[ann]+"/reply", "member", reply)
		assertEnvelope(t, r, 409, "E_CONFLICT")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "email budget"))
		// The next day, late at night (outside working hours), it goes.
		e.clock.Set(time.Date(2026, 11, 3, 22, 30, 0, 0, time.UTC))
		// The sender restricted: refused.
		mail, err := e.srv.senders.Sender(ctx, ids["mail"])
		is.NoErr(err)
		is.NoErr(e.srv.senders.Signal(ctx, mail, senders.SignalRestricted, "account restricted"))
		r = e.call("POST", "/v1/threads/"+threads[ann]+"/reply", "member", reply)
		assertEnvelope(t, r, 409, "E_CONFLICT")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "restricted"))
		is.NoErr(e.srv.senders.Signal(ctx, mail, senders.SignalRecovered, "ok"))
		// The provider refuses: nothing recorded, the budget given back.
		net.FailNext(ids["mail"], &senders.TransportError{Kind: senders.Permanent, Code: "mailbox_full", Message: "mailbox full"})
		r = e.call("POST", "/v1/threads/"+threads[ann]+"/reply", "member", reply)
		assertEnvelope(t, r, 409, "E_CONFLICT")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "mailbox_full"))
		is.Equal(e.call("GET", "/v1/threads/"+threads[ann], "viewer", nil).data()["message_count"], 2.0)
		// Now it is sent.
		r = e.call("POST", "/v1/threads/"+threads[ann]+"/reply", "globex", reply)
		is.Equal(r.Status, 200)
		is.Equal(r.Header.Get("X-RateLimit-Limit"), "60") // spend class
		m := r.data()
		is.Equal(m["direction"], "out")
		is.Equal(m["status"], "sent")
		is.Equal(m["subject"], "Re: Hello Ann")
		is.Equal(m["sent_by"], owner)
		is.Equal(len(net.Performed()), sent+1)
		is.Equal(net.Performed()[sent].LeadID, ann)
		v = e.call("GET", "/v1/threads/"+threads[ann], "viewer", nil).data()
		is.Equal(v["message_count"], 3.0)
		is.Equal(len(v["messages"].([]any)), 3)
		// The budget counted it: one email of 2 today.
		is.Equal(len(net.Violations()), 0)

		// A disconnected sender sends nothing.
		is.NoErr(e.srv.senders.Signal(ctx, mail, senders.SignalAuthFailed, "password changed"))
		r = e.call("POST", "/v1/threads/"+threads[ann]+"/reply", "member", reply)
		assertEnvelope(t, r, 409, "E_CONFLICT")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "disconnected"))
		is.NoErr(e.srv.senders.Signal(ctx, mail, senders.SignalRecovered, "ok"))
		// A lead whose company joins the blacklist gets nothing.
		is.Equal(e.call("PATCH", "/v1/leads/"+ann, "member", map[string]any{"company": "Umbrella"}).Status, 200)
		r = e.call("POST", "/v1/threads/"+threads[ann]+"/reply", "member", reply)
		assertEnvelope(t, r, 409, "E_CONFLICT")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "blacklist"))

		// A do-not-contact lead gets nothing.
		is.Equal(e.call("POST", "/v1/leads/"+cy+"/suppress", "member", nil).Status, 200)
		r = e.call("POST", "/v1/threads/"+threads[cy]+"/reply", "member", reply)
		assertEnvelope(t, r, 409, "E_CONFLICT")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "do-not-contact"))
		is.Equal(len(net.Performed()), sent+1)
	})
}

// TestReplyOfUnknownOutcome: a member's reply whose answer never came is
// looked up at once; found, it is sent; not found, it stays in the thread
// as sending with its budget spent, and the member is told that leadline
// cannot tell, never that nothing was sent.
func TestReplyOfUnknownOutcome(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		m := e.mailAnnAndCy(t)
		e.clock.Set(time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC))
		th := e.call("GET", "/v1/threads?lead_id="+m.ann, "viewer", nil).Body["data"].([]any)[0].(map[string]any)["id"].(string)
		before := e.call("GET", "/v1/senders/"+m.ids["mail"]+"/budgets", "viewer", nil).data()
		m.net.FailNext(m.ids["mail"], errors.New("connection reset after the data"))
		r := e.call("POST", "/v1/threads/"+th+"/reply", "member", map[string]any{"body": "Thursday works."})
		assertEnvelope(t, r, 409, "E_CONFLICT")
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "cannot tell whether the message went out"))
		v := e.call("GET", "/v1/threads/"+th, "viewer", nil).data()
		msgs := v["messages"].([]any)
		is.Equal(msgs[len(msgs)-1].(map[string]any)["status"], "sending")
		after := e.call("GET", "/v1/senders/"+m.ids["mail"]+"/budgets", "viewer", nil).data()
		used := func(b map[string]any) float64 {
			for _, a := range b["actions"].([]any) {
				if a.(map[string]any)["action"] == "email" {
					return a.(map[string]any)["used"].(float64)
				}
			}
			return -1
		}
		is.Equal(used(after), used(before)+1) // spent: it may have gone out
	})
}

// TestThreadFollowsItsLeadsClient: a thread's client is its lead's; when
// the lead gets a client, the client's scoped keys see its older threads.
func TestThreadFollowsItsLeadsClient(t *testing.T) {
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		setup := e.mailAnnAndCy(t)
		dee := e.lead("member", map[string]any{"name": "Dee Roy", "email_work": "dee@example.test"})["id"].(string)
		setup.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: setup.ids["mail"], LeadID: dee, At: e.clock.Now(), ProviderMessageID: "d-1",
			Subject: "Hello", Body: "Who is this?"})
		setup.tick()
		page := e.call("GET", "/v1/threads?lead_id="+dee, "viewer", nil)
		is.Equal(page.Body["total"], 1.0)
		id := page.Body["data"].([]any)[0].(map[string]any)["id"].(string)
		is.Equal(page.Body["data"].([]any)[0].(map[string]any)["client_id"], nil)
		is.Equal(e.call("GET", "/v1/threads", "globexViewer", nil).Body["total"], 1.0) // Ann's only
		assertEnvelope(t, e.call("GET", "/v1/threads/"+id, "globexViewer", nil), 404, "E_NOT_FOUND")

		// Dee joins Globex: her thread follows.
		is.Equal(e.call("PATCH", "/v1/leads/"+dee, "member", map[string]any{"client_id": e.ids["Globex"]}).Status, 200)
		is.Equal(e.call("GET", "/v1/threads", "globexViewer", nil).Body["total"], 2.0)
		v := e.call("GET", "/v1/threads/"+id, "globexViewer", nil)
		is.Equal(v.Status, 200)
		is.Equal(v.data()["client_id"], e.ids["Globex"])
		is.Equal(e.call("GET", "/v1/threads?client_id="+e.ids["Globex"], "viewer", nil).Body["total"], 2.0)
		is.Equal(e.call("GET", "/v1/threads?client_id="+e.ids["Initech"], "viewer", nil).Body["total"], 1.0) // Cy's only
	})
}
