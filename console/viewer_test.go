package console

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/senders"
)

// viewerWorld is the world with something of each client on every page:
// Ann's and Cy's threads, Dee's and Eve's tasks, a sender of each client,
// the sequences, and a blacklist entry. ids maps a page's {id} pattern to
// the id of client A's (Globex's) thing and client B's (Initech's).
type viewerWorld struct {
	*world
	ids map[string][2]string
}

// clientBText is what names Initech's things, or another workspace's, or
// the workspace's own settings: none of it may reach Globex's viewer.
var clientBText = []string{"Initech", "Cy Park", "cy@example.test", "Eve Gray", "Call Eve", "initech-mail", "Hooli", "umbrella-blacklisted"}

func (e *env) viewerWorld() *viewerWorld {
	e.t.Helper()
	ctx := context.Background()
	w := e.work()
	w.callTasks()
	_, err := e.pl.Senders.Apply(ctx, senders.Owner{WorkspaceID: w.owner.WorkspaceID, Timezone: w.owner.Timezone, Clients: w.clients},
		[]senders.Spec{{Name: "globex-mail", Channel: senders.Email, Address: "globex@acme.test", Client: "Globex"},
			{Name: "initech-mail", Channel: senders.Email, Address: "initech@acme.test", Client: "Initech"}})
	e.must(err)
	ss, err := e.pl.Senders.All(ctx, w.owner.WorkspaceID)
	e.must(err)
	sender := map[string]string{}
	for _, s := range ss {
		sender[s.Name] = s.ID
	}
	_, err = e.pl.Workspaces.AddBlacklist(ctx, w.owner, "company", []string{"umbrella-blacklisted"})
	e.must(err)
	vw := &viewerWorld{world: w, ids: map[string][2]string{
		"/inbox/{id}":          {w.annThread, w.cyThread},
		"/inbox/{id}/messages": {w.annThread, w.cyThread},
		"/leads/{id}":          {w.ann, w.cy},
		"/senders/{id}":        {sender["globex-mail"], sender["initech-mail"]},
		// A provider the sweep fills in with the id: refused, 422.
		"/senders/{id}/connect/{provider}": {sender["globex-mail"], sender["initech-mail"]},
		"/sequences/{id}":                  {w.seqs["Globex"], w.seqs["Initech"]},
		"/sequences/{id}/enroll":           {w.seqs["Globex"], w.seqs["Initech"]},
		"/sequences/{id}/variants.csv":     {w.seqs["Globex"], w.seqs["Initech"]},
		// Imports: an unknown id here; leads_test.go opens another
		// client's import.
		"/imports/{id}":              {"", apikit.NewID()},
		"/imports/{id}/rejected.csv": {"", apikit.NewID()},
	}}
	return vw
}

// writeForm finds a form that writes (a POST form).
var writeForm = regexp.MustCompile(`<form[^>]+method="post"[^>]+action="[^"]*"`)

// writeForms are the page's forms that write, sign-out's and the
// member's own password's aside.
func writeForms(body string) []string {
	var out []string
	for _, f := range writeForm.FindAllString(body, -1) {
		// Signing out and the member's own password are the viewer's
		// too: they write nothing of the workspace.
		if !strings.Contains(f, `/signout"`) && !strings.Contains(f, `/account/password"`) {
			out = append(out, f)
		}
	}
	return out
}

// TestViewerSeesOneClientOnEveryPage sweeps every page the console
// registers, as a client viewer of Globex: the pages a viewer may read
// show Globex's things and nothing of Initech's (nor another workspace's,
// nor the workspace's settings), and no form that writes; Initech's
// thread, lead, sender and sequence are not found; the pages above a
// viewer are refused. A page added later must say here what its {id} is.
func TestViewerSeesOneClientOnEveryPage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		vw := e.viewerWorld()
		viewer := e.member("vera@globex.test", apikit.RoleClientViewer, "Globex")
		clean := func(path string, r response) {
			t.Helper()
			for _, b := range clientBText {
				if strings.Contains(r.body, b) {
					t.Errorf("%s shows %q to Globex's viewer", path, b)
				}
			}
			if fs := writeForms(r.body); len(fs) > 0 {
				t.Errorf("%s shows a viewer forms that write: %v", path, fs)
			}
		}
		seen := 0
		for _, rt := range e.c.registered {
			method, path, _ := strings.Cut(rt.Pattern, " ")
			if method != http.MethodGet || rt.Role == "" {
				continue // writes are refused by role (their own tests); sign-in pages show no data
			}
			path = strings.TrimSuffix(path, "{$}")
			if rt.Role != apikit.RoleClientViewer {
				r := viewer.get("/app" + strings.ReplaceAll(path, "{id}", apikit.NewID()))
				is.Equal(r.code, http.StatusForbidden) // above a viewer
				clean(path, r)
				continue
			}
			seen++
			if !strings.Contains(path, "{") {
				queries := []string{""}
				if path == "/reports/export" { // each table as CSV
					queries = []string{"?table=series", "?table=funnel", "?table=intents", "?table=totals", "?table=sequences", "?table=senders", "?table=clients"}
				}
				for _, q := range queries {
					r := viewer.get("/app" + path + q)
					if r.code != http.StatusOK && r.code != http.StatusSeeOther {
						t.Errorf("%s%s: %d for the viewer", path, q, r.code)
					}
					clean(path+q, r)
				}
				continue
			}
			ids, ok := vw.ids[path]
			if !ok {
				t.Errorf("%s: the sweep does not know what {id} to open; add it to viewerWorld", path)
				continue
			}
			if ids[0] != "" {
				r := viewer.get("/app" + strings.ReplaceAll(path, "{id}", ids[0]))
				is.Equal(r.code, http.StatusOK)
				clean(path, r)
			}
			r := viewer.get("/app" + strings.ReplaceAll(path, "{id}", ids[1]))
			if r.code != http.StatusNotFound {
				t.Errorf("%s of Initech: %d for Globex's viewer, want 404", path, r.code)
			}
			clean(path, r)
		}
		is.True(seen >= 12) // inbox, thread, leads, lead, reports…, sequences, senders, tasks

		// What the viewer does see: Globex's things.
		for path, want := range map[string]string{"/app/inbox": "Ann Lee", "/app/tasks": "Call Dee", "/app/senders": "globex-mail",
			"/app/sequences": "Mail Globex", "/app/reports/clients": "Globex", "/app/leads": "Ann Lee"} {
			is.True(strings.Contains(viewer.get(path).body, want))
		}
		// Filters naming Initech are refused, as by the API.
		is.Equal(viewer.get("/app/tasks?client_id="+vw.clients["Initech"]).code, http.StatusForbidden)
		is.Equal(viewer.get("/app/leads?client_id="+vw.clients["Initech"]).code, http.StatusForbidden)
	})
}
