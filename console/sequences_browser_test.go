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
	"github.com/leadline/leadline/leads"
)

// TestBrowserBuildActivateAndEnrol is the issue's §3 flow: a manager
// builds a sequence (an invite; if it is accepted within 14 days, a
// message), sees the problem that
// blocks activation, fixes it and activates; then previews the Berlin
// CTOs list's leads, each with its outcome, and enrols them. On the way it
// takes the screenshots of the sequences and senders pages.
func TestBrowserBuildActivateAndEnrol(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	e.sandboxSenders()
	ctx, p0 := e.principal("acme")
	cat, err := e.pl.Workspaces.Catalog(ctx, p0)
	is.NoErr(err)
	list := cat.Lists[0].ID
	for _, n := range []string{"Ada Lovelace", "Grace Hopper"} {
		e.lead("acme", "", leads.LeadInput{Name: str(n), ListID: &list, PublicIdentifier: str(strings.ToLower(strings.ReplaceAll(n, " ", "-")))})
	}
	e.lead("acme", "", leads.LeadInput{Name: str("Mail Only"), ListID: &list, EmailWork: str("mail@only.test")})
	token := e.invite("acme", "boss@acme.test", apikit.RoleManager)
	base := e.srv.URL + "/app"
	p := browsertest.Open(t)
	p.Do(chromedp.Navigate(base+"/invite/"+token), chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("password"), testPassword), chromedp.SendKeys(chromedp.ID("confirm"), testPassword),
		chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`table`)))

	// A new draft, then its steps: an invite with a note, a message
	// without a body.
	p.Do(chromedp.Navigate(base+"/sequences"), chromedp.WaitVisible(chromedp.ID("seq-name")),
		chromedp.SendKeys(chromedp.ID("seq-name"), "Berlin CTOs intro"),
		chromedp.Click(chromedp.CSS(`form[action$="/sequences"] button`)), chromedp.WaitVisible(chromedp.ID("builder")))
	p.Do(chromedp.Click(chromedp.CSS(`input[name="sender"][value="li"]`)), chromedp.SetValue(chromedp.ID("add-type"), "invite"),
		chromedp.Click(chromedp.ID("add-step")), chromedp.WaitVisible(chromedp.ID("s0-note")))
	p.Do(chromedp.SendKeys(chromedp.ID("s0-note"), "Hi {{first_name}}, shall we connect?"),
		chromedp.SetValue(chromedp.ID("add-type"), "condition"), chromedp.Click(chromedp.ID("add-step")), chromedp.WaitVisible(chromedp.ID("s1-if")),
		chromedp.SetValue(chromedp.ID("add-type"), "message"), chromedp.Click(chromedp.ID("add-step")), chromedp.WaitVisible(chromedp.ID("s2-body")))
	is.True(strings.Contains(text(p, "#h-problems + ul"), "body"))
	p.Allow("status of 422")
	p.Do(chromedp.Click(chromedp.ID("activate")), chromedp.WaitVisible(chromedp.CSS(`.error[role="alert"]`)))
	is.True(strings.Contains(text(p, `.error[role="alert"]`), "cannot run"))
	// Fixed: saved, activated.
	p.Do(chromedp.SetValue(chromedp.ID("s1-if"), "invite_accepted"), chromedp.SendKeys(chromedp.ID("s1-within_days"), "14"),
		chromedp.SetValue(chromedp.ID("s1-then"), "message-3"), chromedp.SetValue(chromedp.ID("s1-else"), "end"),
		chromedp.SendKeys(chromedp.ID("s2-body"), "Thanks for connecting, {{first_name}}."), chromedp.Click(chromedp.ID("save")),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	if evalInt(p, `document.querySelectorAll('#h-problems').length`) != 0 {
		t.Fatalf("problems left: %s", text(p, "#h-problems + ul"))
	}
	p.Screenshot("sequence")
	p.Do(chromedp.Click(chromedp.ID("activate")), chromedp.WaitVisible(chromedp.ID("pause")))
	is.True(strings.Contains(text(p, ".flash"), "Sequence activated"))

	// Enrol from a preview: the list's leads, each with its outcome.
	p.Do(chromedp.Click(chromedp.ID("enroll-link")), chromedp.WaitVisible(chromedp.ID("e-list")),
		chromedp.SetValue(chromedp.ID("e-list"), list), chromedp.Click(chromedp.ID("preview")), chromedp.WaitVisible(chromedp.ID("preview-table")))
	is.True(strings.Contains(text(p, "#h-preview"), "2 eligible, 1 excluded"))
	is.True(strings.Contains(text(p, "#preview-table"), "missing linkedin"))
	p.Screenshot("sequence-enroll")
	p.Do(chromedp.Click(chromedp.ID("enroll")), chromedp.WaitVisible(chromedp.ID("pause")))
	is.True(strings.Contains(text(p, ".flash"), "2 leads enrolled."))
	p.Do(chromedp.Navigate(base+"/sequences"), chromedp.WaitVisible(chromedp.CSS(`table`)))
	is.True(strings.Contains(text(p, "main tbody"), "Berlin CTOs intro"))
	p.Screenshot("sequences")

	// The senders pages.
	p.Do(chromedp.Navigate(base+"/senders"), chromedp.WaitVisible(chromedp.CSS(`table`)))
	p.Screenshot("senders")
	p.Do(chromedp.Click(chromedp.CSS(`main tbody a`)), chromedp.WaitVisible(chromedp.ID("h-capacity")))
	p.Screenshot("sender")
	p.Do(chromedp.Navigate(base+"/senders/new?channel=email"), chromedp.WaitVisible(chromedp.ID("sender-form")))
	p.Screenshot("sender-connect")
}
