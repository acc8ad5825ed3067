package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/rules"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/workspace"
)

// ruleSequences are a sequence whose replies move leads on, and the
// sequence its rules enrol them in; with the workspace's stages and tags.
const ruleSequences = `
      - name: Outreach
        client: Globex
        senders: [mail]
        steps:
          - {id: hi, type: email, subject: "Hello {{first_name}}", body: "Hi {{first_name}}, a question."}
          - {id: pause, type: wait, days: 3}
          - {id: again, type: email, subject: "Again", body: "Following up."}
        on_reply:
          interested: {stage: Qualified, tag: hot, assign: owner@acme.test, task: "Call within a day"}
          question: {task: "Answer the question"}
          not_now: {enroll: Nurture, after_days: 10}
          not_interested: {enroll: Nurture}
          ooo: {enroll: Nurture}
          wrong_person: {enroll_replacement: Outreach}
        on_meeting_booked: {stage: Meeting, tag: hot}
      - name: Nurture
        client: Globex
        senders: [mail]
        steps:
          - {id: later, type: email, subject: "Checking back", body: "Hi {{first_name|there}}, checking back."}
    stages: [New, Qualified, Meeting]
    tags: [hot]
`

// contacted is a rig with Outreach and Nurture active and the leads named
// enrolled in Outreach and sent its first email.
func contacted(t *testing.T, d *db.DB, names ...string) (*rig, []string) {
	t.Helper()
	e := newEngine(t, d, ruleSequences, "mail")
	e.activate("Outreach")
	e.activate("Nurture")
	var ids []string
	for _, n := range names {
		ids = append(ids, e.lead(n, map[string]any{"company": "Acme"}))
	}
	e.enrol("Outreach", ids...)
	e.runUntil(monday.Add(6 * time.Hour))
	for _, id := range ids {
		if n := len(e.thread(id).Messages); n != 1 {
			t.Fatalf("lead %s has %d messages, want the first email", id, n)
		}
	}
	return e, ids
}

// replies has the lead answer the mail sender with body (a provider
// message id of its own) and runs the runner a minute.
func (e *rig) replies(leadID, providerID, body string, auto bool) {
	e.t.Helper()
	e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: leadID, At: e.clock.Now(),
		ProviderMessageID: providerID, Subject: "Re: Hello", Body: body, AutoReply: auto})
	e.runUntil(e.clock.Now().Add(time.Minute))
}

// runs returns what the rules did on the lead's thread, the oldest first.
func (e *rig) runs(leadID string) []sequences.RuleRun { return e.thread(leadID).Rules }

// outcome returns the run's outcome of field.
func outcome(t *testing.T, run sequences.RuleRun, field string) sequences.Outcome {
	t.Helper()
	for _, o := range run.Outcomes {
		if o.Field == field {
			return o
		}
	}
	t.Fatalf("run %s has no %s outcome: %+v", run.Rule, field, run.Outcomes)
	return sequences.Outcome{}
}

func (e *rig) detail(leadID string) *leads.LeadDetail {
	e.t.Helper()
	d, err := e.leads.Get(context.Background(), e.p, leadID)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *rig) named(kind workspace.Kind, name string) string {
	e.t.Helper()
	found, err := e.ws.NamedByName(context.Background(), e.p.WorkspaceID, kind, []string{name})
	if err != nil || len(found) != 1 {
		e.t.Fatalf("%s %q: %v", kind, name, err)
	}
	return found[0].ID
}

// TestInterestedReplyMovesTheLeadOn: an interested reply runs the
// sequence's interested rule once: the lead's stage and tag, its
// conversation given to the member, a task for that member, each on the
// lead's timeline, and the run on the thread and in
// sequence.rule_applied. The same reply again, or the rule run again on
// it (as a second replica would), does nothing more.
func TestInterestedReplyMovesTheLeadOn(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e, ids := contacted(t, d, "Ann Lee")
		ann := ids[0]
		e.replies(ann, "p-1", "Sounds interesting, happy to chat. How about Thursday afternoon?", false)

		is.Equal(e.enrollment(ann).Status, enrollments.Replied) // reply-stop first
		l := e.detail(ann)
		is.Equal(*l.StageID, e.named(workspace.Stages, "Qualified"))
		is.Equal(len(l.Tags), 1)
		is.Equal(l.Tags[0].Name, "hot")
		v := e.thread(ann)
		owner, err := e.ws.ActiveMemberID(ctx, e.p.WorkspaceID, "owner@acme.test")
		is.NoErr(err)
		is.Equal(*v.AssigneeID, owner)
		open, err := e.pl.Tasks.List(ctx, e.p, tasks.Filter{LeadID: ann, Limit: 10})
		is.NoErr(err)
		is.Equal(len(open.Data), 1)
		task := open.Data[0]
		is.Equal(task.Title, "Call within a day")
		is.Equal(*task.AssigneeID, owner)
		is.Equal(task.StepID, "rule:interested")
		is.Equal(task.SequenceID, e.ids["Outreach"])

		is.Equal(len(v.Rules), 1)
		run := v.Rules[0]
		is.Equal(run.Rule, "interested")
		is.Equal(run.SequenceID, e.ids["Outreach"])
		is.Equal(*run.MessageID, v.Messages[1].ID)
		is.Equal(outcome(t, run, "stage").Status, sequences.OutcomeDone)
		is.Equal(outcome(t, run, "tag").Status, sequences.OutcomeDone)
		is.Equal(outcome(t, run, "assign").Status, sequences.OutcomeDone)
		is.Equal(outcome(t, run, "task").Ref, task.ID)
		for _, kind := range []string{"lead.stage_changed", "lead.tagged", "thread.assigned", "task.created", sequences.EventRuleApplied} {
			is.Equal(e.count(kind, ann), 1) // on the lead's timeline, once
		}

		// The same provider message again is a duplicate: nothing runs.
		e.replies(ann, "p-1", "Sounds interesting, happy to chat. How about Thursday afternoon?", false)
		is.Equal(len(e.runs(ann)), 1)
		is.Equal(e.count(sequences.EventRuleApplied, ann), 1)

		// The rule run again on the same reply (another replica taking it
		// in) finds it ran.
		got := &inbox.Received{Thread: &v.Thread, Message: &v.Messages[1], Read: inbox.Classification{Intent: inbox.Interested}}
		is.NoErr(e.db.InTx(ctx, func(ctx context.Context) error { return e.pl.Rules.Replied(ctx, got) }))
		is.Equal(len(e.runs(ann)), 1)
		is.Equal(e.count("task.created", ann), 1)
		is.Equal(e.count(sequences.EventRuleApplied, ann), 1)

		// A second reply, read as a question, runs the question rule.
		e.replies(ann, "p-2", "Also: what does it cost?", false)
		runs := e.runs(ann)
		is.Equal(len(runs), 2)
		is.Equal(runs[1].Rule, "question")
		is.Equal(e.count("task.created", ann), 2)
	})
}

// TestNotNowEnrolsLater: a not_now reply enrols the lead in Nurture, which
// waits 10 days (starts_later) and then sends, although the lead replied:
// the rule answered that reply. A reply after it stops it as any.
func TestNotNowEnrolsLater(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e, ids := contacted(t, d, "Ann Lee", "Bob Ray")
		ann, bob := ids[0], ids[1]
		e.replies(ann, "p-1", "Not right now, maybe next quarter.", false)

		en := e.enrollment(ann)
		is.Equal(en.SequenceID, e.ids["Nurture"])
		is.Equal(*en.RuleOf, e.ids["Outreach"])
		is.Equal(*en.WaitingFor, enrollments.WaitStartsLater)
		start := e.clock.Now().Add(-time.Minute).Add(10 * 24 * time.Hour)
		is.True(en.NextRunAt.Sub(start).Abs() < time.Minute)
		run := e.runs(ann)[0]
		o := outcome(t, run, "enroll")
		is.Equal(o.Status, sequences.OutcomeDone)
		is.Equal(o.Ref, en.ID)
		is.True(strings.HasPrefix(o.Detail, "Starts "))
		is.Equal(e.count("enrollment.created", ann), 2)

		// Bob says not now too, then writes again while Nurture waits:
		// that reply stops it.
		e.replies(bob, "p-2", "Not right now, maybe next quarter.", false)
		is.Equal(e.enrollment(bob).SequenceID, e.ids["Nurture"])
		e.replies(bob, "p-3", "Please, do not write again.", false)
		is.Equal(e.enrollment(bob).Status, enrollments.Replied)

		// Nothing is sent before the 10 days are up; then Nurture's email
		// to Ann, and none to Bob.
		e.runUntil(start.Add(-time.Hour))
		is.Equal(len(e.thread(ann).Messages), 2)
		e.runUntil(start.Add(48 * time.Hour))
		v := e.thread(ann)
		is.Equal(len(v.Messages), 3)
		is.Equal(*v.Messages[2].Subject, "Checking back")
		is.Equal(e.enrollment(ann).Status, enrollments.Finished)
		is.Equal(len(e.thread(bob).Messages), 3)
	})
}

// TestRuleRefusalsAreRecorded: an enrol the enrolment's checks refuse (a
// do-not-contact lead, a blacklisted one, one live in a sequence) is
// recorded with its reason on the thread and in the event; the reply is
// kept and read as any.
func TestRuleRefusalsAreRecorded(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e, ids := contacted(t, d, "Ann Lee", "Bob Ray", "Cy Dunn", "Dee Fox")
		ann, bob, cy, dee := ids[0], ids[1], ids[2], ids[3]

		_, err := e.leads.Suppress(ctx, e.p, ann)
		is.NoErr(err)
		e.replies(ann, "p-1", "No thanks, not interested.", false)
		is.Equal(len(e.thread(ann).Messages), 2)
		o := outcome(t, e.runs(ann)[0], "enroll")
		is.Equal(o.Status, sequences.OutcomeRefused)
		is.Equal(o.Reason, "do_not_contact")
		is.Equal(e.enrollment(ann).SequenceID, e.ids["Outreach"])

		_, err = e.leads.Patch(ctx, e.p, bob, leads.LeadInput{Company: ptr("Umbrella")}) // the blacklisted company
		is.NoErr(err)
		e.replies(bob, "p-2", "No thanks, not interested.", false)
		is.Equal(outcome(t, e.runs(bob)[0], "enroll").Reason, "blacklisted")

		// An out-of-office auto-reply keeps Cy's enrollment live (it
		// delays it): the ooo rule cannot enrol Cy elsewhere.
		e.replies(cy, "p-3", "I am out of the office until 20 November with limited access to email.", true)
		is.Equal(e.enrollment(cy).SequenceID, e.ids["Outreach"])
		is.True(e.enrollment(cy).Status.Live())
		run := e.runs(cy)[0]
		is.Equal(run.Rule, "ooo")
		is.Equal(outcome(t, run, "enroll").Reason, "already_enrolled")

		// A reply whose subject asks to unsubscribe marks the lead
		// do-not-contact before the rule runs.
		e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: dee, At: e.clock.Now(),
			ProviderMessageID: "p-4", Subject: "unsubscribe", Body: "unsubscribe"})
		e.runUntil(e.clock.Now().Add(time.Minute))
		is.True(e.detail(dee).DoNotContact)
		run = e.runs(dee)[0]
		is.Equal(run.Rule, "not_interested")
		is.Equal(outcome(t, run, "enroll").Reason, "do_not_contact")
		is.Equal(e.count("enrollment.created", dee), 1)

		var raw []string
		is.NoErr(e.db.NewSelect().Table("events").Column("data").Where("kind = ? AND lead_id = ?", sequences.EventRuleApplied, cy).Scan(ctx, &raw))
		is.Equal(len(raw), 1)
		var data struct{ Done, Refused []sequences.Outcome }
		is.NoErr(json.Unmarshal([]byte(raw[0]), &data))
		is.Equal(len(data.Done), 0)
		is.Equal(len(data.Refused), 1)
		is.Equal(data.Refused[0].Reason, "already_enrolled")
		is.Equal(data.Refused[0].Field, "enroll")
		is.Equal(data.Refused[0].Value, "Nurture")
	})
}

// TestWrongPersonEnrolsTheReplacement: a wrong_person reply that names
// someone with an address enrols a new lead of the same company and
// client; one that names a person by name alone, or no one, does nothing
// and says why.
func TestWrongPersonEnrolsTheReplacement(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e, ids := contacted(t, d, "Ann Lee", "Bob Ray", "Cy Dunn")
		ann, bob, cy := ids[0], ids[1], ids[2]

		e.replies(ann, "p-1", "I'm not the right person, you should talk to Maria Lopez <maria@globex.example>.", false)
		o := outcome(t, e.runs(ann)[0], "enroll_replacement")
		is.Equal(o.Status, sequences.OutcomeDone)
		maria := e.detail(o.LeadID)
		is.Equal(*maria.Name, "Maria Lopez")
		is.Equal(*maria.EmailWork, "maria@globex.example")
		is.Equal(*maria.Company, "Acme")
		is.Equal(*maria.ClientID, e.ids["Globex"])
		is.Equal(*maria.Source, rules.SourceReplacement)
		en := e.enrollment(maria.ID)
		is.Equal(en.ID, o.Ref)
		is.Equal(en.SequenceID, e.ids["Outreach"])
		is.Equal(*en.RuleOf, e.ids["Outreach"])
		e.runUntil(e.clock.Now().Add(time.Hour))
		is.Equal(*e.thread(maria.ID).Messages[0].Subject, "Hello Maria")

		// A name alone makes no lead.
		e.replies(bob, "p-2", "I'm not the right person, please contact Petra Lang.", false)
		o = outcome(t, e.runs(bob)[0], "enroll_replacement")
		is.Equal(o.Reason, "no_replacement")
		is.True(strings.Contains(o.Detail, "Petra Lang"))

		// Nor does a reply that names no one.
		e.replies(cy, "p-3", "Wrong person, sorry.", false)
		o = outcome(t, e.runs(cy)[0], "enroll_replacement")
		is.Equal(o.Reason, "no_replacement")
		n, err := e.db.NewSelect().Table("leads").Where("workspace_id = ?", e.p.WorkspaceID).Count(ctx)
		is.NoErr(err)
		is.Equal(n, int64(4)) // three, and Maria
	})
}

// TestMeetingBookedRule: a booking for the lead runs the on_meeting_booked
// rule of the sequence it came from, once per booking.
func TestMeetingBookedRule(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e, ids := contacted(t, d, "Ann Lee")
		ann := ids[0]
		for range 2 { // a provider's retry queues nothing
			_, err := e.pl.Inbound.Push(ctx, e.p.WorkspaceID, bookings.CalCom, "bk-1",
				engine.Event{Booking: &bookings.Booking{Provider: bookings.CalCom, BookingID: "bk-1", LeadID: &ann, StartsAt: e.clock.Now().Add(48 * time.Hour)}})
			is.NoErr(err)
			_, err = e.runner.Tick(ctx)
			is.NoErr(err)
		}
		is.Equal(*e.detail(ann).StageID, e.named(workspace.Stages, "Meeting"))
		runs := e.runs(ann)
		is.Equal(len(runs), 1)
		is.Equal(runs[0].Rule, sequences.MeetingBooked)
		is.True(runs[0].BookingID != nil)
		is.Equal(outcome(t, runs[0], "stage").Status, sequences.OutcomeDone)
		is.Equal(outcome(t, runs[0], "tag").Status, sequences.OutcomeDone)
		is.Equal(e.count(sequences.EventRuleApplied, ann), 1)

		// Another booking runs the rule again: the lead is at the stage
		// already.
		_, err := e.pl.Inbound.Push(ctx, e.p.WorkspaceID, bookings.CalCom, "bk-2",
			engine.Event{Booking: &bookings.Booking{Provider: bookings.CalCom, BookingID: "bk-2", LeadID: &ann, StartsAt: e.clock.Now().Add(96 * time.Hour)}})
		is.NoErr(err)
		_, err = e.runner.Tick(ctx)
		is.NoErr(err)
		runs = e.runs(ann)
		is.Equal(len(runs), 2)
		is.Equal(outcome(t, runs[1], "stage").Status, sequences.OutcomeUnchanged)
		is.Equal(e.count("lead.stage_changed", ann), 1)
	})
}

// chainSequences are five sequences, each of whose not_now rule enrols in
// the next, and two that point at each other.
func chainSequences() string {
	var b strings.Builder
	step := `        senders: [mail]
        steps:
          - {id: hi, type: email, subject: "Hello from %[1]s", body: "Hi {{first_name|there}}."}
`
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&b, "      - name: S%d\n        client: Globex\n", i)
		fmt.Fprintf(&b, step, fmt.Sprint("S", i))
		if i < 5 {
			fmt.Fprintf(&b, "        on_reply: {not_now: {enroll: S%d}}\n", i+1)
		}
	}
	for _, pair := range [][2]string{{"Ping", "Pong"}, {"Pong", "Ping"}} {
		fmt.Fprintf(&b, "      - name: %s\n        client: Globex\n", pair[0])
		fmt.Fprintf(&b, step, pair[0])
		fmt.Fprintf(&b, "        on_reply: {not_now: {enroll: %s}}\n", pair[1])
	}
	return b.String()
}

// TestRuleChainsAreBounded: rules never move a lead back into a sequence
// a rule moved it out of (two sequences pointing at each other), and move
// one lead at most rules.MaxMoves times.
func TestRuleChainsAreBounded(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, chainSequences(), "mail")
		for _, q := range []string{"S1", "S2", "S3", "S4", "S5", "Ping", "Pong"} {
			e.activate(q)
		}
		ann, bob := e.lead("Ann Lee", nil), e.lead("Bob Ray", nil)
		e.enrol("S1", ann)
		e.enrol("Ping", bob)
		e.runUntil(monday.Add(6 * time.Hour))
		for i := 1; i <= 4; i++ {
			e.replies(ann, fmt.Sprint("a-", i), "Not right now, maybe next quarter.", false)
			e.runUntil(e.clock.Now().Add(time.Hour)) // the next sequence's email
		}
		runs := e.runs(ann)
		is.Equal(len(runs), 4)
		for i, run := range runs[:3] {
			is.Equal(outcome(t, run, "enroll").Status, sequences.OutcomeDone)
			is.Equal(outcome(t, run, "enroll").Value, fmt.Sprint("S", i+2))
		}
		is.Equal(outcome(t, runs[3], "enroll").Reason, "moved_too_often")
		is.Equal(e.enrollment(ann).SequenceID, e.ids["S4"])

		e.replies(bob, "b-1", "Not right now, maybe next quarter.", false)
		e.runUntil(e.clock.Now().Add(time.Hour))
		is.Equal(e.enrollment(bob).SequenceID, e.ids["Pong"])
		e.replies(bob, "b-2", "Not right now, maybe next quarter.", false)
		runs = e.runs(bob)
		is.Equal(len(runs), 2)
		is.Equal(outcome(t, runs[1], "enroll").Reason, "moved_out_before")
		is.Equal(e.enrollment(bob).Status, enrollments.Replied)
	})
}

// TestRuleQueriesUseIndexes: taking in replies whose rules run (stage,
// tag, an enrol now and one later, a refusal), and reading a thread's
// runs, read rule_runs and the lead's enrollments through their indexes
// on both engines.
func TestRuleQueriesUseIndexes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		e, ids := contacted(t, d, "Ann Lee", "Bob Ray")
		queries := dbtest.Record(d).During(func() {
			e.replies(ids[0], "p-1", "Not right now, maybe next quarter.", false)
			e.replies(ids[1], "p-2", "Sounds interesting, happy to chat. How about Thursday?", false)
			e.replies(ids[0], "p-3", "Not right now, maybe next quarter.", false)
			_ = e.runs(ids[0])
		})
		for _, table := range []string{"rule_runs", "enrollments"} {
			dbtest.AssertNoScan(t, d, table, "", queries)
		}
	})
}
