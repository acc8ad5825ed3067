package console

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/browsertest"
	"github.com/leadline/leadline/tasks"
)

// TestBrowserMyTasks: a member starts on My tasks, empty while the tasks
// are nobody's; finds Dee's task under All tasks, assigns it to themself
// with the row's control, sees it under My tasks (and Eve's not), and
// completes it there.
func TestBrowserMyTasks(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e, w, p, base := browseWork(t, "sdr@acme.test", apikit.RoleMember)
	ids := w.callTasks()

	p.Do(chromedp.Navigate(base+"/tasks"), chromedp.WaitVisible(chromedp.CSS(`main table`)))
	is.True(strings.Contains(text(p, "main table"), "No task matches."))
	is.Equal(text(p, `.tabs a[aria-current="page"]`), "My tasks")

	// All tasks: Dee's and Eve's, nobody's.
	p.Do(chromedp.Click(chromedp.Search(`//ul[@class="tabs"]//a[.="All tasks"]`)),
		chromedp.WaitVisible(chromedp.ID("assignee-"+ids["Dee Fox"])))
	all := text(p, "main table")
	is.True(strings.Contains(all, "Call Dee") && strings.Contains(all, "Call Eve"))

	// Assign Dee's to me: back on All tasks, with the flash.
	p.Do(chromedp.SetValue(chromedp.ID("assignee-"+ids["Dee Fox"]), "me"),
		chromedp.Click(chromedp.CSS(`form[action$="/tasks/`+ids["Dee Fox"]+`/assignee"] button`)))
	waitFlash(p, "Task assigned.")
	is.True(strings.Contains(location(p), "assignee_id="))
	is.Equal(browsertest.Get(p, chromedp.Evaluate[string](`document.getElementById("assignee-`+ids["Dee Fox"]+`").value`)), "me")
	tk, err := e.pl.Tasks.Visible(ctx, w.owner, ids["Dee Fox"])
	is.NoErr(err)
	is.True(tk.AssigneeID != nil)

	// My tasks: Dee's alone.
	p.Do(chromedp.Click(chromedp.Search(`//ul[@class="tabs"]//a[.="My tasks"]`)),
		chromedp.WaitVisible(chromedp.ID("assignee-"+ids["Dee Fox"])))
	mine := text(p, "main table")
	is.True(strings.Contains(mine, "Call Dee") && !strings.Contains(mine, "Call Eve"))
	p.Screenshot("tasks")

	// Complete it from My tasks.
	p.Do(chromedp.SendKeys(chromedp.ID("note-"+ids["Dee Fox"]), "Called, she wants the deck."),
		chromedp.Click(chromedp.CSS(`form[action$="/tasks/`+ids["Dee Fox"]+`/complete"] button[value="done"]`)))
	waitFlash(p, "Task marked done.")
	is.True(strings.Contains(text(p, "main table"), "No task matches."))
	tk, err = e.pl.Tasks.Visible(ctx, w.owner, ids["Dee Fox"])
	is.NoErr(err)
	is.Equal(tk.Status, tasks.Done)
	is.Equal(*tk.Note, "Called, she wants the deck.")
}
