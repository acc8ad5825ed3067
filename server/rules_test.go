package server

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

// TestSequenceRulesOverHTTP: a sequence's rules read back as on_reply and
// on_meeting_booked (an empty object and null without any); a reply that
// runs one shows the run on its thread, and sequence.rule_applied on the
// lead's timeline.
func TestSequenceRulesOverHTTP(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		m := e.mailAnnAndCy(t)
		steps := []sequences.Step{{ID: "hi", Type: "email", Subject: "Hello {{first_name}}", Body: "Hi {{first_name}}"}}
		e.applySequences(m.ids, []sequences.Spec{{Name: "Mail Globex", Client: "Globex", Senders: []string{"mail"}, Steps: steps,
			OnReply: map[string]sequences.Rule{
				"interested": {Stage: "Qualified", Tag: "vip", Assign: "max@acme.test", Task: "Call within a day"},
				"not_now":    {Enroll: "Mail later", AfterDays: 30},
			},
			OnMeetingBooked: &sequences.Rule{Stage: "Contacted"}}, {Name: "Mail later", Senders: []string{"mail"}, Steps: steps}})

		q := e.call("GET", "/v1/sequences/"+m.ids["Mail Globex"], "globexViewer", nil).data()
		is.Equal(q["on_reply"], map[string]any{
			"interested": map[string]any{"stage": "Qualified", "tag": "vip", "assign": "max@acme.test", "task": "Call within a day"},
			"not_now":    map[string]any{"enroll": "Mail later", "after_days": 30.0},
		})
		is.Equal(q["on_meeting_booked"], map[string]any{"stage": "Contacted"})
		other := e.call("GET", "/v1/sequences/"+m.ids["Mail Initech"], "viewer", nil).data()
		is.Equal(other["on_reply"], map[string]any{})
		is.Equal(other["on_meeting_booked"], nil)

		// Ann's interested reply runs the rule; her thread shows the run.
		m.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: m.ids["mail"], LeadID: m.ann, At: e.clock.Now(), ProviderMessageID: "m-1",
			Subject: "Re: Hello Ann", Body: "Sounds good, let's talk. Thursday afternoon?"})
		m.tick()
		threads := e.call("GET", "/v1/threads?lead_id="+m.ann, "globexViewer", nil).Body["data"].([]any)
		is.Equal(len(threads), 1)
		v := e.call("GET", "/v1/threads/"+threads[0].(map[string]any)["id"].(string), "globexViewer", nil).data()
		runs := v["rules"].([]any)
		is.Equal(len(runs), 1)
		run := runs[0].(map[string]any)
		is.Equal(run["rule"], "interested")
		is.Equal(run["sequence_id"], m.ids["Mail Globex"])
		is.Equal(run["message_id"], v["messages"].([]any)[1].(map[string]any)["id"])
		outcomes := run["outcomes"].([]any)
		is.Equal(len(outcomes), 4)
		for i, field := range []string{"stage", "tag", "assign", "task"} {
			is.Equal(outcomes[i].(map[string]any)["field"], field)
			is.Equal(outcomes[i].(map[string]any)["status"], "done")
		}
		is.Equal(e.call("GET", "/v1/leads/"+m.ann, "viewer", nil).data()["stage_id"], e.ids["Qualified"])
		kinds := map[string]int{}
		for _, ev := range e.call("GET", "/v1/leads/"+m.ann+"/timeline", "viewer", nil).Body["data"].([]any) {
			kinds[ev.(map[string]any)["kind"].(string)]++
		}
		is.Equal(kinds[sequences.EventRuleApplied], 1)
		is.Equal(kinds["lead.stage_changed"], 1)

		// Cy's thread shows no runs: an empty list, not null.
		threads = e.call("GET", "/v1/threads?lead_id="+m.cy, "viewer", nil).Body["data"].([]any)
		is.Equal(e.call("GET", "/v1/threads/"+threads[0].(map[string]any)["id"].(string), "viewer", nil).data()["rules"], []any{})
	})
}
