package console

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/browsertest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/sequences"
)

// TestBrowserABTest: a manager reads a step's A/B test on the sequence's
// page (the table, and the chart Chart.js draws from the same numbers),
// picks the better variant and undoes the pick there, then turns another
// step's text into a test in the builder. It takes the screenshots of
// docs/SEQUENCES.md.
func TestBrowserABTest(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	d := dbtest.Open(t, db.SQLite)
	e := newEnv(t, d)
	e.sandboxSenders()
	ctx, p0 := e.principal("acme")
	_, err := e.pl.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: p0.WorkspaceID}, []sequences.Spec{{Name: "Berlin CTOs test", Senders: []string{"mail"},
		Steps: []sequences.Step{
			{ID: "mail", Type: "email", Variants: []sequences.Variant{
				{ID: "a", Subject: "{{company|Your team}} and us", Body: "Hello {{first_name|there}}, …"},
				{ID: "b", Subject: "Quick idea for {{company|your team}}", Body: "Hi {{first_name|there}}, …"}},
				PickWinner: &sequences.PickWinner{Metric: "reply_rate", MinSends: 100, Confidence: 0.95}},
			{ID: "nudge", Type: "email", Body: "{{first_name|Hi}}, a quick nudge."}}}})
	is.NoErr(err)
	q, err := e.pl.Sequences.ByName(ctx, p0.WorkspaceID, "Berlin CTOs test")
	is.NoErr(err)
	// What the test has seen: a sent 120 times with 6 replies, b 118
	// with 15.
	for v, n := range map[string][2]int{"a": {120, 6}, "b": {118, 15}} {
		for i := range n[0] {
			replied := 0
			if i < n[1] {
				replied = 1
			}
			_, err := d.NewRaw(`INSERT INTO variant_sends (enrollment_id, step_id, workspace_id, sequence_id, variant_id, lead_id, sender_id, action, sent_at, replied)
				VALUES (?, 'mail', ?, ?, ?, ?, 'mail', 'email', ?, ?)`, fmt.Sprintf("%s-%d", v, i), p0.WorkspaceID, q.ID, v, fmt.Sprintf("lead-%s-%d", v, i),
				e.clock.Now(), replied).Exec(ctx)
			is.NoErr(err)
		}
	}
	token := e.invite("acme", "boss@acme.test", apikit.RoleManager)
	base := e.srv.URL + "/app"
	p := browsertest.Open(t)
	p.Do(chromedp.Navigate(base+"/invite/"+token), chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("password"), testPassword), chromedp.SendKeys(chromedp.ID("confirm"), testPassword),
		chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`table`)))

	// The test's numbers: the table and the chart agree.
	p.Do(chromedp.Navigate(base+"/sequences/"+q.ID), chromedp.WaitVisible(chromedp.ID("chart-variants-mail")))
	is.True(browsertest.Get(p, chromedp.Poll[bool](`!!Chart.getChart("chart-variants-mail")`)))
	var rates []float64
	is.NoErr(json.Unmarshal([]byte(browsertest.Get(p, chromedp.Evaluate[string](`JSON.stringify(Chart.getChart("chart-variants-mail").data.datasets[0].data)`))), &rates))
	is.Equal(rates, []float64{5, 12.7}) // percentages, as the table shows them
	is.True(strings.Contains(text(p, "#table-variants-mail tbody"), "12.7%"))
	p.Screenshot("sequence-ab")

	// b picked by hand, then the pick undone.
	p.Do(chromedp.SetValue(chromedp.ID("pick-mail-variant"), "b"), chromedp.Click(chromedp.CSS(`#pick-mail button`)),
		chromedp.WaitVisible(chromedp.ID("winner-mail")))
	is.True(strings.Contains(text(p, "#winner-mail"), "b was picked by a manager on"))
	p.Do(chromedp.Navigate(base+"/sequences/"+q.ID), chromedp.WaitVisible(chromedp.ID("undo-mail")),
		chromedp.Click(chromedp.CSS(`#undo-mail button`)), chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	is.True(strings.Contains(text(p, "#winner-mail"), "undone"))
	is.Equal(evalInt(p, `document.querySelectorAll("#undo-mail").length`), 0)

	// The nudge's text becomes variant a of a new test; b is typed in.
	p.Do(chromedp.Navigate(base+"/sequences/"+q.ID), chromedp.WaitVisible(chromedp.ID("s1-add-variant")),
		chromedp.Click(chromedp.ID("s1-add-variant")), chromedp.WaitVisible(chromedp.ID("s1-v1-body")))
	is.Equal(browsertest.Get(p, chromedp.Evaluate[string](`document.getElementById("s1-v0-body").value`)), "{{first_name|Hi}}, a quick nudge.")
	p.Do(chromedp.Navigate(base+"/sequences/"+q.ID), chromedp.WaitVisible(chromedp.ID("s1-v1-body")),
		chromedp.SendKeys(chromedp.ID("s1-v1-body"), "{{first_name|Hi}}, one more thought."), chromedp.Click(chromedp.ID("save")),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	p.Screenshot("sequence-variants-builder")
	stored, err := e.pl.Sequences.ByName(ctx, p0.WorkspaceID, "Berlin CTOs test")
	is.NoErr(err)
	is.Equal(len(stored.Steps[1].Variants), 2)
	is.Equal(stored.Steps[1].Variants[1].Body, "{{first_name|Hi}}, one more thought.")
}
