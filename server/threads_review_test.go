package server

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/senders"
)

// The classifier's confidence is on the thread, its messages and
// message.classified; a reply it was unsure of is unclear and marked for
// review until a member sets its intent.
func TestThreadNeedsReview(t *testing.T) {
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		setup := e.mailAnnAndCy(t)
		ids, ann, cy, net, tick := setup.ids, setup.ann, setup.cy, setup.net, setup.tick
		for range 6 {
			tick()
			e.clock.Advance(time.Hour)
		}
		net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: ids["mail"], LeadID: ann, At: e.clock.Now(), ProviderMessageID: "m-1",
			Subject: "Re: Hello Ann", Body: "Sounds good, let's talk. Thursday afternoon?"})
		net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: ids["mail"], LeadID: cy, At: e.clock.Now(), ProviderMessageID: "m-2",
			Subject: "Re: Hello Cy", Body: "Hm, possibly. Depends on Tom, the budget and the timing."})
		tick()
		threads := map[string]map[string]any{}
		for _, d := range e.call("GET", "/v1/threads", "viewer", nil).Body["data"].([]any) {
			threads[d.(map[string]any)["lead_id"].(string)] = d.(map[string]any)
		}
		a := e.call("GET", "/v1/threads/"+threads[ann]["id"].(string), "viewer", nil).data()
		is.Equal(a["intent"], "interested")
		is.True(a["intent_confidence"].(float64) >= 0.6)
		is.Equal(a["needs_review"], false)
		msgs := a["messages"].([]any)
		is.Equal(msgs[1].(map[string]any)["intent_confidence"], a["intent_confidence"])
		is.Equal(msgs[0].(map[string]any)["intent_confidence"], nil) // sent messages have none

		c := e.call("GET", "/v1/threads/"+threads[cy]["id"].(string), "viewer", nil).data()
		is.Equal(c["intent"], "unclear")
		is.True(c["intent_confidence"].(float64) < 0.6)
		is.Equal(c["needs_review"], true)

		count := func(q string) float64 { return e.call("GET", "/v1/threads?"+q, "viewer", nil).Body["total"].(float64) }
		is.Equal(count("needs_review=true"), 1.0)
		is.Equal(count("needs_review=false"), 1.0)
		assertEnvelope(t, e.call("GET", "/v1/threads?needs_review=maybe", "viewer", nil), 422, "E_PAYLOAD_INVALID")

		// message.classified carries the confidence.
		var evs []events.Event
		is.NoErr(e.db.NewSelect().Model(&evs).Where("kind = ? AND lead_id = ?", "message.classified", cy).Scan(context.Background()))
		is.Equal(len(evs), 1)
		is.Equal(evs[0].Data["intent_confidence"], c["intent_confidence"])
		is.Equal(evs[0].Data["needs_review"], true)

		// A member reads it and sets the intent: reviewed.
		r := e.call("PUT", "/v1/threads/"+threads[cy]["id"].(string)+"/intent", "member", map[string]any{"intent": "not_now"})
		is.Equal(r.Status, 200)
		is.Equal(r.data()["needs_review"], false)
		is.Equal(r.data()["intent_confidence"], nil)
		is.Equal(count("needs_review=true"), 0.0)
	})
}
