package setup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/setup"
)

// ruled is a setup file whose sequence has rules; RULES marks where a
// test puts others.
const ruled = `workspaces:
  - name: acme
    timezone: Europe/Berlin
    members: [{email: owner@acme.test, role: owner}]
    clients: [Globex, Initech]
    stages: [Qualified, Meeting]
    tags: [hot]
    senders:
      - {name: mail, channel: email, address: sales@acme.test}
    sequences:
      - name: Outreach
        client: Globex
        senders: [mail]
        steps:
          - {id: mail, type: email, subject: "Hello", body: "Hello"}
        RULES
      - name: Nurture
        senders: [mail]
        steps:
          - {id: mail, type: email, subject: "Again", body: "Hello again"}
      - name: Initech only
        client: Initech
        senders: [mail]
        steps:
          - {id: mail, type: email, subject: "Hi", body: "Hi"}
`

const goodRules = `on_reply:
          interested: {stage: Qualified, tag: hot, assign: Owner@acme.test, task: "Call within a day"}
          not_now: {enroll: Nurture, after_days: 90}
          wrong_person: {enroll_replacement: Outreach}
        on_meeting_booked: {stage: Meeting}`

// TestApplyChecksSequenceRules: apply saves a sequence's rules (naming a
// sequence listed after it) and changes them on an active sequence; it
// refuses every rule that names what the workspace does not have, or
// could never do, with E_PAYLOAD_INVALID and a remedy, and changes
// nothing.
func TestApplyChecksSequenceRules(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		apply := func(rules string) ([]string, error) {
			f, err := setup.Decode(strings.NewReader(strings.Replace(ruled, "RULES", rules, 1)))
			if err != nil {
				return nil, err
			}
			return setup.Apply(ctx, d, clock, secret.TestKey(), f)
		}
		_, err := apply(goodRules)
		is.NoErr(err)
		pl := platform.New(platform.Config{DB: d, Clock: clock})
		var wsID string
		is.NoErr(d.NewSelect().Table("workspaces").Column("id").Where("name = 'acme'").Scan(ctx, &wsID))
		q, err := pl.Sequences.ByName(ctx, wsID, "Outreach")
		is.NoErr(err)
		is.Equal(q.OnReply["interested"], sequences.Rule{Stage: "Qualified", Tag: "hot", Assign: "Owner@acme.test", Task: "Call within a day"})
		is.Equal(q.OnReply["not_now"], sequences.Rule{Enroll: "Nurture", AfterDays: 90})
		is.Equal(*q.OnMeetingBooked, sequences.Rule{Stage: "Meeting"})
		changes, err := apply(goodRules)
		is.NoErr(err)
		is.Equal(len(changes), 0)

		// The rules of an active sequence may change; its steps may not.
		is.NoErr(pl.Sequences.ActivateByName(ctx, wsID, "Outreach"))
		changes, err = apply(strings.Replace(goodRules, "after_days: 90", "after_days: 30", 1))
		is.NoErr(err)
		is.Equal(changes, []string{"workspace acme: sequence Outreach updated (rules)"})

		for _, c := range []struct{ rules, says string }{
			{"on_reply: {maybe: {stage: Qualified}}", `"maybe" is not a reply intent`},
			{"on_reply: {interested: {stage: Won}}", `stage "Won" is not a stage of the workspace`},
			{"on_reply: {interested: {tag: cold}}", `tag "cold" is not a tag of the workspace`},
			{"on_reply: {interested: {assign: nobody@acme.test}}", `assign "nobody@acme.test" is not the email of an active member`},
			{"on_reply: {not_now: {enroll: Later}}", `enroll "Later" is not a sequence of the workspace`},
			{"on_reply: {not_now: {enroll: Outreach}}", "enroll names the sequence itself"},
			{"on_reply: {not_now: {enroll: Nurture, after_days: 366}}", "after_days 366 is out of range"},
			{"on_reply: {not_now: {enroll: Nurture, after_days: -1}}", "after_days -1 is out of range"},
			{"on_reply: {not_now: {after_days: 3}}", "after_days applies only with enroll"},
			{"on_reply: {not_now: {enroll: Initech only}}", "works for another client"},
			{"on_reply: {interested: {enroll_replacement: Nurture}}", "enroll_replacement applies only to on_reply wrong_person"},
			{"on_reply: {wrong_person: {enroll_replacement: Later}}", `enroll_replacement "Later" is not a sequence`},
			{"on_reply: {interested: {}}", "the rule does nothing"},
			{"on_meeting_booked: {stage: Won}", `on_meeting_booked: stage "Won"`},
			{"on_meeting_booked: {enroll_replacement: Nurture}", "enroll_replacement applies only"},
			{"on_reply: {interested: {task: \"Call\\nnow\"}}", "task"},
		} {
			_, err := apply(c.rules)
			ae := apikit.AsError(err)
			if ae.Code != apikit.EPayloadInvalid || !strings.Contains(ae.Message, c.says) || ae.Remedy == "" {
				t.Errorf("%s: got %v, want E_PAYLOAD_INVALID saying %q with a remedy", c.rules, err, c.says)
			}
		}
		// Nothing of the refused files was applied.
		q, err = pl.Sequences.ByName(ctx, wsID, "Outreach")
		is.NoErr(err)
		is.Equal(q.OnReply["not_now"], sequences.Rule{Enroll: "Nurture", AfterDays: 30})
		is.Equal(len(q.OnReply), 3)
		is.Equal(*q.OnMeetingBooked, sequences.Rule{Stage: "Meeting"})

		// Rules removed are removed.
		changes, err = apply("")
		is.NoErr(err)
		is.Equal(changes, []string{"workspace acme: sequence Outreach updated (rules)"})
		q, err = pl.Sequences.ByName(ctx, wsID, "Outreach")
		is.NoErr(err)
		is.Equal(len(q.OnReply), 0)
		is.Equal(q.OnMeetingBooked, nil)
	})
}
