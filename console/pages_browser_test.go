package console

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/browsertest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// signIn opens an invite link of email in p and sets the password.
func signIn(p *browsertest.Page, e *env, email string, role apikit.Role, clients ...string) {
	token := e.invite("acme", email, role, clients...)
	p.Do(chromedp.Navigate(e.srv.URL+"/app/invite/"+token), chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("password"), testPassword), chromedp.SendKeys(chromedp.ID("confirm"), testPassword),
		chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`table`)))
}

// browseWork is the world (work) on SQLite, and a browser signed in as
// email with role; base is the console's address.
func browseWork(t *testing.T, email string, role apikit.Role) (e *env, w *world, p *browsertest.Page, base string) {
	t.Helper()
	e = newEnv(t, dbtest.Open(t, db.SQLite))
	w = e.work()
	p = browsertest.Open(t)
	signIn(p, e, email, role)
	return e, w, p, e.srv.URL + "/app"
}

// waitFlash waits for the page after a form: its flash message ends with
// want (the page before may show another flash until the new one loads).
func waitFlash(p *browsertest.Page, want string) {
	p.Do(chromedp.WaitVisible(chromedp.Search(`//p[@class="flash"][contains(., "` + want + `")]`)))
}

// TestBrowserInboxReportsAndKeys is the flows in these pages:
// after the runner worked on a fake clock (the sandbox mailed Ann and Cy,
// Ann answered), a manager opens the reply in the inbox, sees a new reply
// appear without a reload, sets the intent and answers; sees the report's
// charts with the API's numbers; creates a key, sees its secret once, and
// revokes it.
func TestBrowserInboxReportsAndKeys(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e, w, p, base := browseWork(t, "boss@acme.test", apikit.RoleManager)
	w.callTasks()

	// The inbox: Ann's reply, unread, read as interested.
	p.Do(chromedp.Navigate(base+"/inbox"), chromedp.WaitVisible(chromedp.ID("threads")))
	is.True(strings.Contains(text(p, "#threads tbody tr:first-child"), "Ann Lee"))
	is.True(strings.Contains(text(p, "#threads tbody tr:first-child"), "interested"))
	p.Screenshot("inbox")

	// The thread: the reply's HTML shown as text.
	p.Do(chromedp.Click(chromedp.CSS(`#threads a[href$="/inbox/`+w.annThread+`"]`)), chromedp.WaitVisible(chromedp.ID("reply-body")))
	is.True(strings.Contains(text(p, "#messages"), "<b>let's talk</b>"))
	is.Equal(evalInt(p, `document.querySelectorAll('#messages b').length`), 0)
	// A new reply appears without a reload (the messages are polled).
	is.True(browsertest.Get(p, chromedp.Evaluate[bool](`window.notReloaded = true`)))
	w.reply(w.ann, "m-2", "Also: bring the pricing sheet.")
	p.Do(chromedp.WaitVisible(chromedp.Search(`//section[@id="messages"]//div[contains(., "pricing sheet")]`)))
	is.Equal(evalInt(p, `window.notReloaded ? 1 : 0`), 1)

	// Set the intent, then answer.
	p.Do(chromedp.SetValue(chromedp.ID("set-intent"), "question"),
		chromedp.Click(chromedp.CSS(`form[action$="/intent"] button`)))
	waitFlash(p, "Intent set to question.")
	is.True(strings.HasPrefix(text(p, "#intent"), "question (manual)"))
	sent := len(w.net.Performed())
	p.Do(chromedp.SendKeys(chromedp.ID("reply-body"), "Thursday 3pm works. See you then."),
		chromedp.Click(chromedp.CSS(`form[action$="/reply"] button`)))
	waitFlash(p, "Reply sent.")
	is.True(strings.Contains(text(p, "#messages"), "Thursday 3pm works."))
	is.Equal(len(w.net.Performed()), sent+1) // through the sandbox sender
	th, err := e.pl.Inbox.Get(ctx, w.owner, w.annThread)
	is.NoErr(err)
	is.Equal(*th.Intent, inbox.Question)
	p.Screenshot("thread")

	// Tasks: all of them (tasks_browser_test.go takes the page's
	// screenshot).
	p.Do(chromedp.Navigate(base+"/tasks?assignee_id="), chromedp.WaitVisible(chromedp.CSS(`main table`)))
	is.True(strings.Contains(text(p, "main table"), "Call Dee"))

	// The report: charts drawn by Chart.js with the API's numbers.
	ov := e.api("/v1/reports/overview", "owner@acme.test", apikit.RoleManager)["data"].(map[string]any)
	p.Do(chromedp.Navigate(base+"/reports"), chromedp.WaitVisible(chromedp.ID("chart-series")))
	is.True(browsertest.Get(p, chromedp.Poll[bool](`!!(Chart.getChart("chart-series") && Chart.getChart("chart-funnel") && Chart.getChart("chart-intents"))`)))
	var drawn []float64
	is.NoErr(json.Unmarshal([]byte(browsertest.Get(p, chromedp.Evaluate[string](`JSON.stringify(Chart.getChart("chart-series").data.datasets[0].data)`))), &drawn))
	var want []float64
	for _, pt := range ov["series"].([]any) {
		want = append(want, pt.(map[string]any)["metrics"].(map[string]any)["sends.total"].(float64))
	}
	is.Equal(drawn, want)
	total := browsertest.Get(p, chromedp.Evaluate[string](`[...document.querySelectorAll("#table-totals tr")].find(r => r.cells[1] && r.cells[1].textContent === "sends.total").cells[2].dataset.value`))
	is.Equal(total, apiNumber(ov["totals"].(map[string]any)["sends.total"]))
	is.Equal(total, "3") // the two emails and the reply
	p.Screenshot("reports")
	p.Do(chromedp.Navigate(base+"/reports/clients"), chromedp.WaitVisible(chromedp.ID("table-clients")))
	p.Screenshot("reports-clients")

	// A key: created, its secret shown once, then revoked.
	p.Do(chromedp.Navigate(base+"/settings/keys"), chromedp.WaitVisible(chromedp.ID("key-name")),
		chromedp.SendKeys(chromedp.ID("key-name"), "CRM sync"), chromedp.SetValue(chromedp.ID("key-role"), "member"),
		chromedp.Click(chromedp.CSS(`form[action$="/settings/keys"] button`)), chromedp.WaitVisible(chromedp.ID("key-secret")))
	secret := text(p, "#key-secret")
	pr, err := e.pl.Workspaces.Authenticate(ctx, secret)
	is.NoErr(err)
	is.Equal(pr.Role, apikit.RoleMember)
	p.Screenshot("settings-keys")
	p.Do(chromedp.Click(chromedp.CSS(`button[aria-label="Revoke key CRM sync"]`)))
	waitFlash(p, "revoked.")
	is.True(!strings.Contains(text(p, "main"), secret))
	_, err = e.pl.Workspaces.Authenticate(ctx, secret)
	is.Equal(apikit.ErrorCode(err), apikit.EUnauthorized)

	p.Do(chromedp.Navigate(base+"/settings/webhooks"), chromedp.WaitVisible(chromedp.ID("wh-url")))
	p.Screenshot("settings-webhooks")
	p.Do(chromedp.Navigate(base+"/settings/suppressions"), chromedp.WaitVisible(chromedp.ID("s-emails")))
	p.Screenshot("settings-suppressions")
}
