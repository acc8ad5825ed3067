package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/browsertest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
)

// The browser tests drive the console in headless Chromium
// (internal/browsertest), on SQLite only (but the OAuth connect,
// oauth_browser_test.go): the page tests beside them run the same pages
// on both engines. They fail on any console error or CSP
// violation, and with LEADLINE_SCREENSHOTS=1 they save the screenshots in
// docs/console/.

func TestMain(m *testing.M) { os.Exit(browsertest.Run(m)) }

// evalInt evaluates a JavaScript expression that gives a number.
func evalInt(p *browsertest.Page, js string) int {
	return browsertest.Get(p, chromedp.Evaluate[int](js))
}

func text(p *browsertest.Page, sel string) string {
	return browsertest.Get(p, chromedp.Text(chromedp.CSS(sel)))
}

func location(p *browsertest.Page) string { return browsertest.Get(p, chromedp.Location()) }

// TestBrowserInviteSignInImportAndLeads: a manager opens their invite
// link, sets a password, lands on the leads, opens a lead whose fields
// hold HTML (shown as text), imports a CSV file and watches its report,
// invites a member, signs out (the back button shows nothing), signs in
// again with the form, and changes the password.
func TestBrowserInviteSignInImportAndLeads(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	for _, n := range []string{"Ada Lovelace", "Grace Hopper", "Katherine Johnson"} {
		e.lead("acme", "Globex", leads.LeadInput{Name: str(n), Company: str("Globex"), Headline: str("Engineer"),
			EmailWork: str(strings.ToLower(strings.Fields(n)[0]) + "@globex.test")})
	}
	eve := e.lead("acme", "Globex", leads.LeadInput{Name: str(`<b>Eve</b><script>alert(1)</script>`), Company: str(`<img src=x>`),
		EmailWork: str("eve@globex.test"), Custom: map[string]any{"note": `<a href="//evil.example">click</a>`}})
	token := e.invite("acme", "boss@acme.test", apikit.RoleManager)
	base := e.srv.URL + "/app"
	p := browsertest.Open(t)

	// The invite link: set a password, and be signed in.
	p.Do(chromedp.Navigate(base+"/invite/"+token), chromedp.WaitVisible(chromedp.ID("password")))
	p.Screenshot("invite")
	p.Do(chromedp.SendKeys(chromedp.ID("password"), testPassword), chromedp.SendKeys(chromedp.ID("confirm"), testPassword),
		chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`table`)))
	is.Equal(location(p), base+"/leads")
	is.True(strings.Contains(text(p, ".who"), "boss@acme.test"))
	is.Equal(evalInt(p, `document.querySelectorAll('main tbody tr').length`), 4)
	p.Screenshot("leads")

	// A lead with HTML in its fields: shown as text, nothing runs.
	p.Do(chromedp.Navigate(base+"/leads/"+eve), chromedp.WaitVisible(chromedp.ID("h-timeline")))
	is.True(strings.Contains(text(p, "h1"), "<b>Eve</b><script>alert(1)</script>"))
	is.Equal(evalInt(p, `document.querySelectorAll('main b, main img, main script, main a[href*="evil"]').length`), 0)
	is.True(strings.Contains(text(p, "main"), `<a href="//evil.example">click</a>`))
	// Set its stage with the page's form: the flash says so.
	p.Do(chromedp.Evaluate[chromedp.Void](`document.getElementById("l-stage").selectedIndex = 1`),
		chromedp.Click(chromedp.CSS(`form[action$="/stage"] button`)), chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	is.Equal(text(p, ".flash"), "Stage saved.")
	is.True(strings.Contains(text(p, "dl.fields"), "Contacted"))
	p.Screenshot("lead")

	// A CSV import: the progress, then the row report.
	csv := filepath.Join(t.TempDir(), "leads.csv")
	is.NoErr(os.WriteFile(csv, []byte(importCSV), 0o600))
	p.Do(chromedp.Navigate(base+"/leads/import"), chromedp.WaitVisible(chromedp.ID("i-file")))
	p.Screenshot("import-form")
	p.Do(chromedp.SetUploadFiles(chromedp.ID("i-file"), []string{csv}),
		chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)), chromedp.WaitVisible(chromedp.ID("import-status")))
	is.True(strings.HasPrefix(location(p), base+"/imports/"))
	// Rejected rows are written batch by batch: wait for the end of the
	// import (its section stops polling), not for the first of them.
	p.Do(chromedp.Steps(chromedp.WaitNotPresent(chromedp.CSS(`#import-progress[hx-get]`)), chromedp.WaitVisible(chromedp.ID("row-report"))))
	is.Equal(text(p, "#import-status"), "succeeded")
	is.True(strings.Contains(text(p, "#row-report"), "E_PAYLOAD_INVALID"))
	p.Screenshot("import")

	// Invite a member from the Members page.
	p.Do(chromedp.Navigate(base+"/members"), chromedp.WaitVisible(chromedp.ID("invite-email")),
		chromedp.SendKeys(chromedp.ID("invite-email"), "new@acme.test"),
		chromedp.Click(chromedp.CSS(`form[action$="/members/invite"] button`)), chromedp.WaitVisible(chromedp.ID("invite-link")))
	is.True(strings.HasPrefix(text(p, "#invite-link"), base+"/invite/"))
	p.Screenshot("members")

	// Sign out; the back button shows no page of the session: the page
	// was not stored, and asking for it again leads to the sign-in.
	p.Do(chromedp.Navigate(base+"/leads"), chromedp.WaitVisible(chromedp.CSS(`table`)))
	p.Do(chromedp.Click(chromedp.CSS(`.who button`)), chromedp.WaitVisible(chromedp.ID("email")))
	is.Equal(location(p), base+"/signin?out")
	p.Do(chromedp.NavigateBack(), chromedp.WaitVisible(chromedp.ID("email")))
	is.Equal(location(p), base+"/signin?next=%2Fapp%2Fleads")
	is.True(!strings.Contains(text(p, "body"), "Ada Lovelace"))

	// Sign in with the form.
	p.Do(chromedp.Navigate(base+"/signin"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), "boss@acme.test"), chromedp.SendKeys(chromedp.ID("password"), testPassword))
	p.Screenshot("signin")
	p.Do(chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`table`)))
	is.Equal(location(p), base+"/leads")

	// Change the password from the account page, linked in the header.
	const next = "a new long passphrase"
	p.Do(chromedp.Click(chromedp.CSS(`.who a[href$="/account"]`)), chromedp.WaitVisible(chromedp.ID("current")),
		chromedp.SendKeys(chromedp.ID("current"), testPassword), chromedp.SendKeys(chromedp.ID("password"), next),
		chromedp.SendKeys(chromedp.ID("confirm"), next))
	p.Screenshot("account")
	p.Do(chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	is.Equal(location(p), base+"/account")
	is.True(strings.Contains(text(p, ".flash"), "Your password is changed."))
}

// TestBrowserClientViewer: a client viewer sees their client's leads only,
// no write controls, and another client's lead is not found; the list
// works at phone width.
func TestBrowserClientViewer(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	e.lead("acme", "Globex", leads.LeadInput{Name: str("Gina Globex"), Company: str("Globex"), EmailWork: str("gina@globex.test")})
	initech := e.lead("acme", "Initech", leads.LeadInput{Name: str("Ian Initech"), Company: str("Initech"), EmailWork: str("ian@initech.test")})
	token := e.invite("acme", "vera@globex.test", apikit.RoleClientViewer, "Globex")
	base := e.srv.URL + "/app"
	p := browsertest.Open(t)
	p.Do(chromedp.Navigate(base+"/invite/"+token), chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("password"), testPassword), chromedp.SendKeys(chromedp.ID("confirm"), testPassword),
		chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`table`)))
	body := text(p, "main")
	is.True(strings.Contains(body, "Gina Globex"))
	is.True(!strings.Contains(body, "Ian Initech"))
	// No write control: no import link, no form but the filters and sign-out.
	is.Equal(evalInt(p, `document.querySelectorAll('a[href$="/leads/import"], form[method="post"]:not([action$="/signout"])').length`), 0)
	is.Equal(evalInt(p, `document.querySelectorAll('nav a[href$="/members"]').length`), 0)
	p.Do(chromedp.EmulateViewport(390, 844))
	p.Do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`table`)))
	is.True(evalInt(p, `document.documentElement.scrollWidth`) <= 390)
	p.Screenshot("leads-phone")
	p.Do(chromedp.EmulateViewport(1280, 900))

	p.Allow("status of 404")
	p.Do(chromedp.Navigate(base+"/leads/"+initech), chromedp.WaitVisible(chromedp.CSS(`.error`)))
	is.Equal(text(p, "h1"), "Not found")
	is.True(!strings.Contains(text(p, "main"), "Ian"))
}
