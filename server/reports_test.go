package server

import (
	"math"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/senders"
)

func TestReportRoutes(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		m := e.mailAnnAndCy(t)
		ids, ann, net, tick := m.ids, m.ann, m.net, m.tick
		// Ann's email: the mailbox spaces its two emails out, and which
		// goes first is the runner's to choose.
		var sentAt time.Time
		for _, p := range net.Performed() {
			if p.LeadID == ann {
				sentAt = p.At
			}
		}
		net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: ids["mail"], LeadID: ann, At: e.clock.Now(), ProviderMessageID: "m-1",
			Subject: "Re: Hello Ann", Body: "Sounds good, let's talk. Thursday afternoon?"})
		tick()
		repliedAt := e.clock.Now()

		totals := func(key, query string) map[string]any {
			t.Helper()
			r := e.call("GET", "/v1/reports/overview"+query, key, nil)
			if r.Status != 200 {
				t.Fatalf("overview %s: %d %s", query, r.Status, r.Raw)
			}
			return r.data()["totals"].(map[string]any)
		}
		all := totals("viewer", "")
		for metric, want := range map[string]any{"sends.total": 2.0, "sends.email": 2.0, "sends.invite": 0.0, "leads.contacted": 2.0,
			"enrollments.started": 2.0, "replies": 1.0, "intents.interested": 1.0, "intents.ooo": 0.0, "reply_rate": 0.5,
			"positive_reply_rate": 1.0, "meetings.booked": 0.0, "meeting_rate": 0.0, "emails.bounced": 0.0, "bounce_rate": 0.0,
			"leads.created": 2.0, "enrollments.finished": 2.0, "acceptance_rate": nil, "cost.per_meeting": nil} {
			is.Equal(all[metric], want) // the metric, over both clients
		}
		is.Equal(all["time_to_reply"], math.Floor(repliedAt.Sub(sentAt).Seconds()))
		// anna (99 a month, Globex) worked no day of the period: her days
		// are Globex's; mail costs nothing.
		annaDay := math.Round(99.0/30*100) / 100
		is.Equal(all["cost.total"], annaDay)
		is.Equal(all["cost.per_reply"], annaDay)

		// A client-scoped key sees its clients' numbers only.
		globex := totals("globexViewer", "")
		is.Equal(globex["sends.total"], 1.0)
		is.Equal(globex["replies"], 1.0)
		is.Equal(globex["cost.total"], annaDay)
		is.Equal(totals("viewer", "?client_id="+e.ids["Initech"])["replies"], 0.0)
		is.Equal(totals("viewer", "?client_id="+e.ids["Initech"])["reply_rate"], 0.0)
		is.Equal(totals("viewer", "?client_id="+e.ids["Initech"])["cost.total"], 0.0)
		is.Equal(totals("viewer", "?sequence_id="+ids["Mail Globex"])["cost.total"], 0.0) // idle days count for no sequence
		is.Equal(totals("viewer", "?channel=linkedin")["sends.total"], 0.0)
		is.Equal(totals("viewer", "?sender_id="+ids["mail"])["sends.total"], 2.0)
		assertEnvelope(t, e.call("GET", "/v1/reports/overview?client_id="+e.ids["Initech"], "globexViewer", nil), 403, "E_FORBIDDEN")
		assertEnvelope(t, e.call("GET", "/v1/reports/overview?sequence_id="+ids["Mail Initech"], "globexViewer", nil), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("GET", "/v1/reports/sequences/"+ids["Mail Initech"], "globexViewer", nil), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("GET", "/v1/reports/clients/"+e.ids["Initech"], "globexViewer", nil), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("GET", "/v1/reports/senders/"+ids["mail"], "other", nil), 404, "E_NOT_FOUND")
		// Nothing to divide by is null, never an error.
		none := totals("other", "")
		is.Equal(none["reply_rate"], nil)
		is.Equal(none["positive_reply_rate"], nil)
		is.Equal(none["time_to_reply"], nil)
		is.Equal(none["sends.total"], 0.0)

		// Period rules.
		assertEnvelope(t, e.call("GET", "/v1/reports/overview?from=2026-11-05&to=2026-11-01", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("GET", "/v1/reports/overview?from=2025-01-01&to=2026-11-01", "viewer", nil), 422, "E_TOO_MANY")
		assertEnvelope(t, e.call("GET", "/v1/reports/overview?from=2026-13-01", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("GET", "/v1/reports/overview?from=1.11.2026", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("GET", "/v1/reports/overview?interval=month", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		assertEnvelope(t, e.call("GET", "/v1/reports/sequences?sort=-nope", "viewer", nil), 422, "E_PAYLOAD_INVALID")
		r := e.call("GET", "/v1/reports/overview?from=2026-11-01&to=2026-11-03", "viewer", nil).data()
		is.Equal(r["timezone"], "Europe/Berlin")
		series := r["series"].([]any)
		is.Equal(len(series), 3)
		is.Equal(series[1].(map[string]any)["date"], "2026-11-02")
		is.Equal(series[1].(map[string]any)["metrics"].(map[string]any)["sends.total"], 2.0)
		is.Equal(series[0].(map[string]any)["metrics"].(map[string]any)["reply_rate"], nil)
		weeks := e.call("GET", "/v1/reports/overview?from=2026-11-01&to=2026-11-10&interval=week", "viewer", nil).data()["series"].([]any)
		is.Equal(len(weeks), 3) // the weeks of Oct 26, Nov 2 and Nov 9
		is.Equal(weeks[0].(map[string]any)["date"], "2026-10-26")
		is.Equal(weeks[1].(map[string]any)["metrics"].(map[string]any)["sends.total"], 2.0)

		// Funnel and intents.
		stages := e.call("GET", "/v1/reports/funnel", "viewer", nil).data()["stages"].([]any)
		is.Equal(len(stages), 6)
		is.Equal(stages[0].(map[string]any)["stage"], "enrolled")
		is.Equal(stages[0].(map[string]any)["conversion"], nil)
		is.Equal(stages[1].(map[string]any)["conversion"], 1.0)
		is.Equal(stages[2].(map[string]any)["count"], 0.0)      // no invitations: an email sequence
		is.Equal(stages[3].(map[string]any)["conversion"], nil) // after a stage of 0
		is.Equal(stages[4].(map[string]any)["conversion"], 1.0)
		in := e.call("GET", "/v1/reports/intents", "viewer", nil).data()
		is.Equal(in["replies"], 1.0)
		is.Equal(in["intents"].([]any)[0].(map[string]any)["share"], 1.0)

		// The reply's thread, and a member's change of its intent.
		page := e.call("GET", "/v1/reports/reply-threads", "viewer", nil)
		is.Equal(page.Body["total"], 1.0)
		rt := page.Body["data"].([]any)[0].(map[string]any)
		is.Equal(rt["lead_name"], "Ann Lee")
		is.Equal(rt["sequence_id"], ids["Mail Globex"])
		is.Equal(rt["intent"], "interested")
		is.Equal(rt["time_to_reply"], all["time_to_reply"])
		is.Equal(e.call("GET", "/v1/reports/reply-threads", "other", nil).Body["total"], 0.0)
		is.Equal(e.call("PUT", "/v1/threads/"+rt["thread_id"].(string)+"/intent", "member", map[string]any{"intent": "not_now"}).Status, 200)
		moved := totals("viewer", "")
		is.Equal(moved["replies"], 1.0)
		is.Equal(moved["intents.interested"], 0.0)
		is.Equal(moved["intents.not_now"], 1.0)
		is.Equal(moved["positive_reply_rate"], 0.0)

		// Cost.
		cost := e.call("GET", "/v1/reports/cost", "viewer", nil).data()
		is.Equal(cost["totals"].(map[string]any)["cost.total"], annaDay)
		bySender := cost["by_sender"].([]any)
		is.Equal(bySender[0].(map[string]any)["name"], "anna")
		is.Equal(bySender[0].(map[string]any)["cost"], annaDay)
		is.Equal(len(e.call("GET", "/v1/reports/cost", "globexViewer", nil).data()["by_sender"].([]any)), 1)

		// Lists, sorted by a metric.
		rows := e.call("GET", "/v1/reports/sequences?sort=-replies", "viewer", nil)
		is.Equal(rows.Body["total"], 2.0)
		first := rows.Body["data"].([]any)[0].(map[string]any)
		is.Equal(first["name"], "Mail Globex")
		is.Equal(first["metrics"].(map[string]any)["replies"], 1.0)
		is.Equal(e.call("GET", "/v1/reports/sequences?sort=replies", "viewer", nil).Body["data"].([]any)[0].(map[string]any)["name"], "Mail Initech")
		for _, sort := range []string{"time_to_reply", "-time_to_reply"} { // Initech's is null: last either way
			is.Equal(e.call("GET", "/v1/reports/sequences?sort="+sort, "viewer", nil).Body["data"].([]any)[0].(map[string]any)["name"], "Mail Globex")
		}
		is.Equal(e.call("GET", "/v1/reports/sequences", "globexViewer", nil).Body["total"], 1.0)
		is.Equal(e.call("GET", "/v1/reports/senders", "viewer", nil).Body["total"], 3.0)
		is.Equal(e.call("GET", "/v1/reports/senders", "globexViewer", nil).Body["total"], 1.0) // anna
		clients := e.call("GET", "/v1/reports/clients?sort=-sends.total&limit=1", "viewer", nil)
		is.Equal(clients.Body["total"], 3.0)
		is.Equal(clients.Body["has_more"], true)

		// One subject each.
		seq := e.call("GET", "/v1/reports/sequences/"+ids["Mail Globex"], "globexViewer", nil).data()
		is.Equal(seq["name"], "Mail Globex")
		is.Equal(seq["totals"].(map[string]any)["sends.email"], 1.0)
		steps := seq["steps"].([]any)
		is.Equal(len(steps), 1)
		is.Equal(steps[0].(map[string]any)["sent"], 1.0)
		is.Equal(steps[0].(map[string]any)["replied"], 0.0) // the one step had finished
		snd := e.call("GET", "/v1/reports/senders/"+ids["mail"], "viewer", nil).data()
		is.Equal(snd["totals"].(map[string]any)["sends.email"], 2.0)
		usage := snd["usage"].([]any)
		today := usage[len(usage)-1].(map[string]any)
		is.Equal(today["date"], "2026-11-02")
		is.Equal(today["actions"].([]any)[0].(map[string]any)["used"], 2.0)
		is.Equal(today["actions"].([]any)[0].(map[string]any)["effective_cap"], 30.0)
		cl := e.call("GET", "/v1/reports/clients/"+e.ids["Globex"], "globexViewer", nil).data()
		is.Equal(cl["totals"].(map[string]any)["sends.total"], 1.0)
	})
}
