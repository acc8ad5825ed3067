package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/workspace"
)

// blacklistOf is the workspace's blacklist as the service (and `leadline
// blacklist list`) reads it, as kind:value.
func (e *env) blacklistOf(ws string) []string {
	e.t.Helper()
	ctx := context.Background()
	w, err := e.pl.Workspaces.ByName(ctx, ws)
	e.must(err)
	page, err := e.pl.Workspaces.ListBlacklist(ctx, apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}, workspace.BlacklistFilter{Limit: apikit.MaxLimit})
	e.must(err)
	out := []string{}
	for _, b := range page.Data {
		out = append(out, b.Kind+":"+b.Value)
	}
	return out
}

func TestSettingsBlacklist(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		boss := e.member("boss@acme.test", apikit.RoleManager)
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		viewer := e.member("v@acme.test", apikit.RoleClientViewer, "Globex")
		scoped := e.member("gm@acme.test", apikit.RoleManager, "Globex")
		other := e.member("other:owner@other.test", apikit.RoleOwner)
		const page = "/app/settings/blacklist"

		// Members, viewers and managers limited to some clients are
		// refused, reading and writing.
		for _, b := range []*browser{sdr, viewer, scoped} {
			is.Equal(b.get(page).code, http.StatusForbidden)
			is.Equal(b.post("/app/leads", page, url.Values{"kind": {"company"}, "values": {"Hooli"}}).code, http.StatusForbidden)
		}
		r := boss.get(page)
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, "The blacklist is empty."))
		is.True(strings.Contains(r.body, `aria-current="page">Blacklist</a>`))

		// Without the CSRF token: refused, nothing added.
		is.Equal(boss.postForm(page, url.Values{"kind": {"company"}, "values": {"Hooli"}}, "").code, http.StatusForbidden)
		// Bad input: the message and its remedy, what was typed kept,
		// nothing added (the good line neither).
		r = boss.post(page, page, url.Values{"kind": {"domain"}, "values": {"hooli.example\nhttps://initech.example/"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "is not a domain.") && strings.Contains(r.body, "such as example.com"))
		is.True(strings.Contains(r.body, "hooli.example\nhttps://initech.example/</textarea>"))
		r = boss.post(page, page, url.Values{"kind": {"phone"}, "values": {"1"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "Use company, domain or linkedin."))
		r = boss.post(page, page, url.Values{"kind": {"company"}, "values": {"\n \n"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "Give one value or more, one a line."))
		is.Equal(e.blacklistOf("acme"), []string{})

		// Added: one value a line (commas belong to the name), lower-case;
		// HTML in a value is shown as text.
		r = boss.post(page, page, url.Values{"kind": {"company"}, "values": {"Hooli, Inc.\r\n<b>Evil</b> & Co\n"}})
		is.Equal(r.code, http.StatusSeeOther)
		r = boss.get(page + "?kind=company")
		is.True(strings.Contains(r.body, "2 added to the blacklist."))
		is.True(strings.Contains(r.body, "<td>hooli, inc.</td>"))
		is.True(strings.Contains(r.body, "&lt;b&gt;evil&lt;/b&gt; &amp; co") && !strings.Contains(r.body, "<b>evil</b>"))
		is.True(strings.Contains(r.body, "boss@acme.test"))
		// A repeat is a no-op that says so.
		boss.post(page, page, url.Values{"kind": {"domain"}, "values": {"@Hooli.example\nhooli.example"}})
		boss.post(page, page, url.Values{"kind": {"domain"}, "values": {"hooli.example\ninitech.example"}})
		r = boss.get(page)
		is.True(strings.Contains(r.body, "1 added to the blacklist; 1 already listed, unchanged: hooli.example."))
		// The same list as `leadline blacklist list`; another workspace's
		// is its own.
		is.Equal(e.blacklistOf("acme"), []string{"company:<b>evil</b> & co", "company:hooli, inc.", "domain:hooli.example", "domain:initech.example"})
		is.Equal(e.blacklistOf("other"), []string{})
		is.True(strings.Contains(other.get(page).body, "The blacklist is empty."))

		// Search and paging.
		r = boss.get(page + "?q=HOOLI")
		is.True(strings.Contains(r.body, "hooli, inc.") && strings.Contains(r.body, "hooli.example") && !strings.Contains(r.body, "initech.example</td>"))
		r = boss.get(page + "?kind=domain&q=zzz")
		is.True(strings.Contains(r.body, "No entry matches."))
		values := make([]string, 60)
		for i := range values {
			values[i] = fmt.Sprintf("lead-%02d", i)
		}
		is.Equal(boss.post(page, page, url.Values{"kind": {"linkedin"}, "values": {strings.Join(values, "\n")}}).code, http.StatusSeeOther)
		r = boss.get(page + "?kind=linkedin")
		is.True(strings.Contains(r.body, "1–50 of 60") && strings.Contains(r.body, `href="/app/settings/blacklist?kind=linkedin&amp;offset=50"`))
		r = boss.get(page + "?kind=linkedin&offset=50")
		is.True(strings.Contains(r.body, "51–60 of 60") && strings.Contains(r.body, "lead-59") && !strings.Contains(r.body, "lead-49"))

		// Remove: refused without the token, to a member, a scoped
		// manager and another workspace; then gone, back to the list it
		// was clicked in.
		w, err := e.pl.Workspaces.ByName(context.Background(), "acme")
		is.NoErr(err)
		list, err := e.pl.Workspaces.ListBlacklist(context.Background(), apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}, workspace.BlacklistFilter{Kind: "domain"})
		is.NoErr(err)
		hooli := list.Data[0]
		is.Equal(hooli.Value, "hooli.example")
		remove := page + "/" + hooli.ID + "/remove"
		is.Equal(boss.postForm(remove, nil, "").code, http.StatusForbidden)
		is.Equal(sdr.post("/app/leads", remove, nil).code, http.StatusForbidden)
		is.Equal(scoped.post("/app/leads", remove, nil).code, http.StatusForbidden)
		is.Equal(other.post(page, remove, nil).code, http.StatusNotFound)
		is.Equal(len(e.blacklistOf("acme")), 64)
		r = boss.post(page, remove, url.Values{"back": {"kind=domain"}})
		is.Equal(r.code, http.StatusSeeOther)
		is.Equal(r.header.Get("Location"), "/app/settings/blacklist?kind=domain")
		r = boss.get(page + "?kind=domain")
		is.True(strings.Contains(r.body, "Removed domain hooli.example from the blacklist."))
		is.True(!strings.Contains(r.body, "<td>hooli.example</td>"))
		is.Equal(len(e.blacklistOf("acme")), 63)
		is.Equal(boss.post(page, remove, nil).code, http.StatusNotFound) // gone already
		is.Equal(boss.post(page, page+"/nope/remove", nil).code, http.StatusNotFound)
	})
}

// TestBlacklistRemovalResurrectsNothing: an entry added in the console
// stops a live enrollment at the runner's next check; removing it lets
// nothing restart.
func TestBlacklistRemovalResurrectsNothing(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEnv(t, d)
		w := e.work()
		boss := e.member("boss@acme.test", apikit.RoleManager)
		const page = "/app/settings/blacklist"

		name, email, client := "Fay Moss", "fay@blocked.example", w.clients["Globex"]
		r, err := e.pl.Leads.Upsert(ctx, w.owner, leads.LeadInput{Name: &name, EmailWork: &email, ClientID: &client})
		is.NoErr(err)
		fay := r.Lead.ID
		_, err = e.pl.Enrollments.Commit(ctx, w.owner, enrollments.EnrollInput{SequenceID: w.seqs["Globex"], LeadIDs: []string{fay}, Confirm: true})
		is.NoErr(err)
		is.Equal(boss.post(page, page, url.Values{"kind": {"domain"}, "values": {"blocked.example"}}).code, http.StatusSeeOther)
		w.tick()
		status := func() enrollments.Status {
			es, err := e.pl.Enrollments.ForLead(ctx, w.owner.WorkspaceID, fay)
			is.NoErr(err)
			is.Equal(len(es), 1)
			return es[0].Status
		}
		is.Equal(status(), enrollments.Stopped)
		sent := len(w.net.Performed())

		list, err := e.pl.Workspaces.ListBlacklist(ctx, w.owner, workspace.BlacklistFilter{})
		is.NoErr(err)
		is.Equal(boss.post(page, page+"/"+list.Data[0].ID+"/remove", nil).code, http.StatusSeeOther)
		w.tick()
		is.Equal(status(), enrollments.Stopped)
		is.Equal(len(w.net.Performed()), sent)
	})
}
