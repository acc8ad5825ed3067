package console

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/browsertest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// TestBrowserBlacklist: a manager opens Settings › Blacklist from the
// settings' tabs, adds domains (one a line, one typed with an @ and in
// capitals), sees a bad line refused with its remedy and nothing added,
// adds a company whose name is HTML (shown as text), searches, and
// removes an entry with its button; the list is the one `leadline
// blacklist list` reads.
func TestBrowserBlacklist(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	base := e.srv.URL + "/app"
	p := browsertest.Open(t)
	signIn(p, e, "boss@acme.test", apikit.RoleManager)

	p.Do(chromedp.Navigate(base+"/settings/keys"), chromedp.WaitVisible(chromedp.ID("key-name")),
		chromedp.Click(chromedp.CSS(`.tabs a[href$="/settings/blacklist"]`)), chromedp.WaitVisible(chromedp.ID("bl-values")))
	is.Equal(location(p), base+"/settings/blacklist")
	is.True(strings.Contains(text(p, "#blacklist tbody"), "The blacklist is empty."))

	add := func(kind, values string) {
		p.Do(chromedp.SetValue(chromedp.ID("bl-add-kind"), kind), chromedp.SendKeys(chromedp.ID("bl-values"), values),
			chromedp.Click(chromedp.ID("bl-add")))
	}
	// A bad line: refused with the remedy, the text kept, nothing added.
	p.Allow("status of 422")
	add("domain", "hooli.example\nhttps://initech.example/")
	p.Do(chromedp.WaitVisible(chromedp.CSS(`.error[role="alert"]`)))
	is.True(strings.Contains(text(p, `.error[role="alert"]`), "such as example.com"))
	is.Equal(browsertest.Get(p, chromedp.Evaluate[string](`document.getElementById("bl-values").value`)), "hooli.example\nhttps://initech.example/")
	is.Equal(e.blacklistOf("acme"), []string{})

	p.Do(chromedp.Navigate(base+"/settings/blacklist"), chromedp.WaitVisible(chromedp.ID("bl-values")))
	add("domain", "hooli.example\n@Initech.EXAMPLE\nglobex.example")
	waitFlash(p, "3 added to the blacklist.")
	add("company", `Hooli, Inc.`+"\n"+`<img src=x onerror="alert(1)">`)
	waitFlash(p, "2 added to the blacklist.")
	p.Do(chromedp.Navigate(base+"/settings/blacklist"), chromedp.WaitVisible(chromedp.ID("bl-values")))
	rows := text(p, "#blacklist tbody")
	for _, v := range []string{"hooli.example", "initech.example", "globex.example", "hooli, inc.", `<img src=x onerror="alert(1)">`, "boss@acme.test"} {
		is.True(strings.Contains(rows, v))
	}
	is.Equal(evalInt(p, `document.querySelectorAll('main img').length`), 0)
	is.Equal(evalInt(p, `document.querySelectorAll('#blacklist tbody tr').length`), 5)
	is.Equal(e.blacklistOf("acme"), []string{`company:<img src=x onerror="alert(1)">`, "company:hooli, inc.", "domain:globex.example", "domain:hooli.example", "domain:initech.example"})

	// Search: the domains with "hooli".
	p.Do(chromedp.SetValue(chromedp.ID("bl-kind"), "domain"), chromedp.SendKeys(chromedp.ID("bl-q"), "HOOLI"),
		chromedp.Click(chromedp.CSS(`form[role="search"] button`)),
		chromedp.WaitNotPresent(chromedp.Search(`//table[@id="blacklist"]//td[.="globex.example"]`)), chromedp.WaitVisible(chromedp.ID("blacklist")))
	is.True(strings.Contains(location(p), "q=HOOLI"))
	is.Equal(evalInt(p, `document.querySelectorAll('#blacklist tbody tr').length`), 1)
	is.True(strings.Contains(text(p, "#blacklist tbody"), "hooli.example"))

	// Remove one with its button: back to the whole list, without it.
	p.Do(chromedp.Navigate(base+"/settings/blacklist"), chromedp.WaitVisible(chromedp.ID("blacklist")),
		chromedp.Click(chromedp.CSS(`button[aria-label="Remove domain initech.example"]`)))
	waitFlash(p, "Removed domain initech.example from the blacklist.")
	is.True(!strings.Contains(text(p, "#blacklist tbody"), "initech.example"))
	is.Equal(evalInt(p, `document.querySelectorAll('#blacklist tbody tr').length`), 4)
	is.Equal(len(e.blacklistOf("acme")), 4)
	p.Screenshot("settings-blacklist")
}
