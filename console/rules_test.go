package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/sequences"
)

// TestBuilderEditsRules: the builder's rules table saves a sequence's
// rules with its steps, through Apply; a rule Apply refuses (an unknown
// stage, an after_days that is no number) is shown with what was typed
// and changes nothing; a member reads the rules in words.
func TestBuilderEditsRules(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEnv(t, d)
		e.sandboxSenders()
		boss := e.member("boss@acme.test", apikit.RoleManager)
		id := e.newSequence(boss, "Outreach")
		e.newSequence(boss, "Nurture")
		page := boss.get("/app/sequences/" + id)
		is.True(strings.Contains(page.body, `id="rules"`))
		is.True(strings.Contains(page.body, `name="r.interested.stage"`))
		is.True(strings.Contains(page.body, `name="r.meeting_booked.stage"`))
		is.True(strings.Contains(page.body, `name="r.wrong_person.enroll_replacement"`))
		is.True(!strings.Contains(page.body, `name="r.interested.enroll_replacement"`)) // wrong_person's alone
		is.True(strings.Contains(page.body, `<option value="Contacted">`))              // the stages offered
		is.True(strings.Contains(page.body, `<option value="sdr@acme.test">`))          // the members

		form := url.Values{"steps": {"1"}, "sender": {"mail"}, "s0.type": {"email"}, "s0.id": {"hi"}, "s0.subject": {"Hello"}, "s0.body": {"Hi"},
			"r.interested.stage": {"Contacted"}, "r.interested.tag": {"vip"}, "r.interested.assign": {"sdr@acme.test"},
			"r.interested.task": {"Call within a day"}, "r.not_now.enroll": {"Nurture"}, "r.not_now.after_days": {"90"},
			"r.wrong_person.enroll_replacement": {"Outreach"}, "r.meeting_booked.tag": {"vip"}}
		is.Equal(builderPost(boss, id, "save", form).code, http.StatusSeeOther)
		q, err := e.pl.Sequences.Visible(ctx, e.owner(), id)
		is.NoErr(err)
		is.Equal(q.OnReply, map[string]sequences.Rule{
			"interested":   {Stage: "Contacted", Tag: "vip", Assign: "sdr@acme.test", Task: "Call within a day"},
			"not_now":      {Enroll: "Nurture", AfterDays: 90},
			"wrong_person": {EnrollReplacement: "Outreach"},
		})
		is.Equal(*q.OnMeetingBooked, sequences.Rule{Tag: "vip"})
		page = boss.get("/app/sequences/" + id)
		is.True(strings.Contains(page.body, `name="r.not_now.after_days" type="text" inputmode="numeric" value="90"`))

		// Adding a step keeps the rules, which the form carries.
		form.Set("add_type", "wait")
		is.Equal(builderPost(boss, id, "add", form).code, http.StatusSeeOther)
		q, _ = e.pl.Sequences.Visible(ctx, e.owner(), id)
		is.Equal(len(q.Steps), 2)
		is.Equal(len(q.OnReply), 3)

		// Refused rules: the form as typed, with the error; nothing changes.
		bad := url.Values{}
		for k, v := range form {
			bad[k] = v
		}
		bad.Set("r.interested.stage", "Won")
		r := builderPost(boss, id, "save", bad)
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, `stage &#34;Won&#34; is not a stage of the workspace`))
		is.True(strings.Contains(r.body, `name="r.interested.stage" type="text" list="rule-stages" value="Won"`))
		bad.Set("r.interested.stage", "Contacted")
		bad.Set("r.not_now.after_days", "soon")
		r = builderPost(boss, id, "save", bad)
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, `after days &#34;soon&#34; is not a whole number`))
		bad.Set("r.not_now.after_days", "")
		bad.Set("r.not_now.enroll", "Outreach")
		r = builderPost(boss, id, "save", bad)
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "enroll names the sequence itself"))
		q, _ = e.pl.Sequences.Visible(ctx, e.owner(), id)
		is.Equal(q.OnReply["interested"].Stage, "Contacted")
		is.Equal(q.OnReply["not_now"], sequences.Rule{Enroll: "Nurture", AfterDays: 90})

		// A member sees the rules in words, and no form.
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		page = sdr.get("/app/sequences/" + id)
		is.True(!strings.Contains(page.body, `id="rules"`))
		is.True(strings.Contains(page.body, "<strong>Not now</strong>: enrol in Nurture after 90 days"))
		is.True(strings.Contains(page.body, "<strong>A meeting booked</strong>: tag vip"))
	})
}

// TestThreadShowsWhatTheRulesDid: a reply that runs a sequence's rule
// shows each field's outcome on its thread's page.
func TestThreadShowsWhatTheRulesDid(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEnv(t, d)
		w := e.work()
		_, err := e.pl.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: w.owner.WorkspaceID, Clients: w.clients}, []sequences.Spec{{
			Name: "Mail Initech", Client: "Initech", Senders: []string{"mail"},
			Steps:   []sequences.Step{{ID: "hi", Type: "email", Subject: "Hello {{first_name}}", Body: "Hi {{first_name}}"}},
			OnReply: map[string]sequences.Rule{"interested": {Stage: "Contacted", Enroll: "Mail later"}}}, {
			Name: "Mail later", Senders: []string{"mail"},
			Steps: []sequences.Step{{ID: "hi", Type: "email", Subject: "About {{custom.topic}}", Body: "Hi"}}}})
		is.NoErr(err)
		w.reply(w.cy, "m-2", "Sounds good, let's talk. Thursday afternoon?")

		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		page := sdr.get("/app/inbox/" + w.cyThread)
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(page.body, "What the sequences' rules did"))
		is.True(strings.Contains(page.body, "<strong>Mail Initech</strong> · a reply read as interested"))
		is.True(strings.Contains(page.body, "stage <code>Contacted</code>: done"))
		// Mail later needs a topic Cy does not have: refused, with why.
		is.True(strings.Contains(page.body, `enroll <code>Mail later</code>: <span class="badge bad">refused</span> missing_variable`))
		// Ann's thread has no run: no section.
		is.True(!strings.Contains(sdr.get("/app/inbox/"+w.annThread).body, "What the sequences' rules did"))
	})
}
