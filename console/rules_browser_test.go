package console

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/browsertest"
	"github.com/leadline/leadline/sequences"
)

// TestBrowserBuilderRules: in a browser, a manager types a sequence's
// rules in the builder's table; a stage the workspace does not have is
// refused with apply's message, the typed value kept; fixed, the rules
// (a stage and a task for an interested reply, a tag for a meeting) are
// saved. Then a reply runs the rule and its thread's page says what it
// did.
func TestBrowserBuilderRules(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e, w, p, base := browseWork(t, "boss@acme.test", apikit.RoleManager)

	p.Do(chromedp.Navigate(base+"/sequences/"+w.seqs["Initech"]), chromedp.WaitVisible(chromedp.ID("rules")),
		chromedp.SendKeys(chromedp.CSS(`input[name="r.interested.stage"]`), "Won"),
		chromedp.SendKeys(chromedp.CSS(`input[name="r.interested.task"]`), "Call within a day"),
		chromedp.SendKeys(chromedp.CSS(`input[name="r.not_now.enroll"]`), "Mail Globex"),
		chromedp.SendKeys(chromedp.CSS(`input[name="r.not_now.after_days"]`), "90"))
	p.Allow("status of 422")
	p.Do(chromedp.Click(chromedp.ID("save")), chromedp.WaitVisible(chromedp.CSS(`.error[role="alert"]`)))
	is.True(strings.Contains(text(p, `.error[role="alert"]`), `stage "Won" is not a stage of the workspace`))
	is.Equal(browsertest.Get(p, chromedp.Value(chromedp.CSS(`input[name="r.interested.stage"]`))), "Won")

	// A stage of the workspace, no enrolment and a tag for a meeting:
	// saved.
	p.Do(chromedp.SetValue(chromedp.CSS(`input[name="r.interested.stage"]`), "Contacted"),
		chromedp.Clear(chromedp.CSS(`input[name="r.not_now.enroll"]`)),
		chromedp.Clear(chromedp.CSS(`input[name="r.not_now.after_days"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="r.meeting_booked.tag"]`), "vip"),
		chromedp.Click(chromedp.ID("save")))
	waitFlash(p, "Sequence saved.")
	q, err := e.pl.Sequences.ByID(ctx, w.owner.WorkspaceID, w.seqs["Initech"])
	is.NoErr(err)
	is.Equal(q.OnReply, map[string]sequences.Rule{"interested": {Stage: "Contacted", Task: "Call within a day"}})
	is.Equal(*q.OnMeetingBooked, sequences.Rule{Tag: "vip"})
	p.Screenshot("sequence-rules")

	// Cy answers; the thread shows what the rule did.
	w.reply(w.cy, "m-2", "Sounds good, let's talk. Thursday afternoon?")
	p.Do(chromedp.Navigate(base+"/inbox/"+w.cyThread), chromedp.WaitVisible(chromedp.ID("h-rules")))
	runs := text(p, ".rule-runs")
	is.True(strings.Contains(runs, "a reply read as interested"))
	is.True(strings.Contains(runs, "stage Contacted: done"))
	is.True(strings.Contains(runs, "task Call within a day: done"))
}
