package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/browsertest"
)

func TestMain(m *testing.M) { os.Exit(browsertest.Run(m)) }

// TestBrowserDemo: what a new user does first. `leadline demo` prints an
// invite link; with `leadline serve` running, the Globex client viewer
// opens it in Chromium, chooses a password and lands on the demo's leads,
// Globex's alone. It takes the README's first screenshot.
func TestBrowserDemo(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dbPath, _, second := sharedDemo(t)
	link := regexp.MustCompile(`sign in as viewer@globex\.test \(client_viewer\) by choosing a password at:\n +http://127\.0\.0\.1:8080(/app/invite/\S{43})\n`).FindStringSubmatch(second)
	is.True(link != nil)

	base, _ := serving(t, "--runner=false", "--db", dbPath)

	const password = "a long demo passphrase"
	p := browsertest.Open(t)
	p.Do(chromedp.Navigate(base+link[1]), chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("password"), password), chromedp.SendKeys(chromedp.ID("confirm"), password),
		chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`table`)))
	is.Equal(browsertest.Get(p, chromedp.Location()), base+"/app/leads")
	is.True(strings.Contains(browsertest.Get(p, chromedp.Text(chromedp.CSS(".who"))), "viewer@globex.test · demo · client_viewer"))
	rows := browsertest.Get(p, chromedp.Evaluate[int](`document.querySelectorAll('main tbody tr').length`))
	is.True(rows > 0)
	clients := browsertest.Get(p, chromedp.Evaluate[[]string](`[...document.querySelectorAll('main tbody tr td:nth-child(6)')].map(td => td.textContent.trim())`))
	is.Equal(len(clients), rows)
	for _, c := range clients {
		is.Equal(c, "Globex") // the viewer's client alone
	}
	p.ScreenshotTop("demo-leads")
}
