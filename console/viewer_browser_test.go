package console

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/browsertest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// TestBrowserViewerSeesOneClient: a client viewer of Globex, signed in in
// the browser, goes through the console as a visitor would, by its
// navigation and links: the inbox (Ann's thread, not Cy's), Ann's thread,
// Cy's thread by its address (not found), the tasks, the reports over
// time and per client, the sequences and a sequence, the senders and a
// sender. No page shows anything of Initech, another workspace or the
// workspace's blacklist, and none has a form that writes, a write link or
// the managers' navigation. TestViewerSeesOneClientOnEveryPage sweeps
// every page the console registers, on both engines.
func TestBrowserViewerSeesOneClient(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	vw := e.viewerWorld()
	base := e.srv.URL + "/app"
	p := browsertest.Open(t)
	signIn(p, e, "vera@globex.test", apikit.RoleClientViewer, "Globex")

	// check: the page shows nothing of Initech and nothing that writes.
	check := func(what string) {
		t.Helper()
		body := text(p, "body")
		for _, b := range clientBText {
			if strings.Contains(body, b) {
				t.Errorf("%s shows %q to Globex's viewer", what, b)
			}
		}
		if n := evalInt(p, `document.querySelectorAll('form[method="post"]:not([action$="/signout"]), a[href$="/leads/import"], a[href$="/enroll"], a[href$="/senders/new"], nav a[href$="/members"], nav a[href*="/settings"]').length`); n != 0 {
			t.Errorf("%s shows the viewer %d write controls", what, n)
		}
	}

	// The inbox, from the navigation: Ann's thread only.
	follow(p, `nav a[href$="/inbox"]`, chromedp.WaitVisible(chromedp.ID("threads")))
	is.True(strings.Contains(text(p, "#threads"), "Ann Lee"))
	check("the inbox")
	p.Screenshot("viewer-inbox")
	follow(p, `#threads a[href$="/inbox/`+vw.annThread+`"]`, chromedp.WaitVisible(chromedp.ID("messages")))
	is.True(strings.Contains(text(p, "#messages"), "Thursday afternoon?"))
	is.Equal(evalInt(p, `document.querySelectorAll('#reply-body').length`), 0) // no reply form
	check("Ann's thread")
	// Cy's thread, by its address: not found, nothing of it shown.
	p.Allow("status of 404")
	p.Do(chromedp.Navigate(base+"/inbox/"+vw.cyThread), chromedp.WaitVisible(chromedp.CSS(`.error`)))
	is.Equal(text(p, "h1"), "Not found")
	check("Cy's thread")

	// Tasks: Dee's call, not Eve's; no Done or Skip.
	follow(p, `nav a[href$="/tasks"]`, chromedp.WaitVisible(chromedp.CSS(`main table`)))
	is.True(strings.Contains(text(p, "main table"), "Call Dee"))
	check("the tasks")

	// Reports: over time, then per client (Globex alone).
	follow(p, `nav a[href$="/reports"]`, chromedp.WaitVisible(chromedp.ID("chart-series")))
	check("the reports")
	p.Do(chromedp.Navigate(base+"/reports/clients"), chromedp.WaitVisible(chromedp.ID("table-clients")))
	is.True(strings.Contains(text(p, "#table-clients"), "Globex"))
	is.Equal(evalInt(p, `document.querySelectorAll('#table-clients tbody tr').length`), 1)
	check("the reports per client")

	// Sequences: Globex's two; one opened, Initech's not found.
	follow(p, `nav a[href$="/sequences"]`, chromedp.WaitVisible(chromedp.Search(`//h1[contains(., "Sequences")]`)))
	is.True(strings.Contains(text(p, "main table"), "Mail Globex") && strings.Contains(text(p, "main table"), "Call Globex"))
	check("the sequences")
	follow(p, `main table a[href$="/sequences/`+vw.seqs["Globex"]+`"]`, chromedp.WaitVisible(chromedp.Search(`//h1[contains(., "Mail Globex")]`)))
	check("Globex's sequence")
	p.Do(chromedp.Navigate(base+"/sequences/"+vw.seqs["Initech"]), chromedp.WaitVisible(chromedp.CSS(`.error`)))
	check("Initech's sequence")

	// Senders: Globex's; Initech's not found.
	p.Do(chromedp.Navigate(base+"/senders"), chromedp.WaitVisible(chromedp.CSS(`main table`)))
	is.True(strings.Contains(text(p, "main table"), "globex-mail"))
	check("the senders")
	p.Do(chromedp.Navigate(base+"/senders/"+vw.ids["/senders/{id}"][0]), chromedp.WaitVisible(chromedp.ID("h-capacity")))
	check("Globex's sender")
	p.Do(chromedp.Navigate(base+"/senders/"+vw.ids["/senders/{id}"][1]), chromedp.WaitVisible(chromedp.CSS(`.error`)))
	check("Initech's sender")

	// The settings are not the viewer's.
	p.Allow("status of 403")
	p.Do(chromedp.Navigate(base+"/settings/blacklist"), chromedp.WaitVisible(chromedp.CSS(`.error`)))
	check("the blacklist")
}

// follow opens the link sel finds on the page, as a click on it would, and
// waits for the new page to load and for wait: chromedp.Navigate waits for
// the new document's load, where a click returns at once and a query that
// follows it may read the old document while it is replaced.
func follow(p *browsertest.Page, sel string, wait chromedp.Action[chromedp.Void]) {
	href := browsertest.Get(p, chromedp.Evaluate[string](`document.querySelector(`+strconv.Quote(sel)+`).href`))
	p.Do(chromedp.Navigate(href), wait)
}
