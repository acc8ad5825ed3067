package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/tasks"
)

// tasksEnv is a console on d whose runner opened Dee Fox's (Globex) and
// Eve Gray's (Initech) tasks (world.callTasks), with a member and a Globex
// viewer signed in.
func tasksEnv(t *testing.T, d *db.DB) (e *env, w *world, ids map[string]string, sdr, viewer *browser) {
	e = newEnv(t, d)
	w = e.work()
	ids = w.callTasks()
	return e, w, ids, e.member("sdr@acme.test", apikit.RoleMember), e.member("viewer@acme.test", apikit.RoleClientViewer, "Globex")
}

func TestTasks(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e, w, ids, sdr, viewer := tasksEnv(t, d)
		other := e.member("other:owner@other.test", apikit.RoleOwner)

		// A member starts on My tasks: nobody enrolled Dee and Eve as a
		// member, so theirs are nobody's, under All tasks.
		r := sdr.get("/app/tasks")
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, "No task matches."))
		// Open tasks, for everyone; the viewer starts on All tasks, sees
		// Globex's alone and no buttons; another workspace none.
		r = sdr.get("/app/tasks?assignee_id=")
		is.True(strings.Contains(r.body, "Call Dee") && strings.Contains(r.body, "Call Eve"))
		is.True(strings.Contains(r.body, ">Done</button>"))
		is.True(strings.Contains(r.body, ">Assign</button>"))
		r = viewer.get("/app/tasks")
		is.True(strings.Contains(r.body, "Call Dee") && !strings.Contains(r.body, "Call Eve"))
		is.True(!strings.Contains(r.body, ">Done</button>"))
		is.True(!strings.Contains(r.body, ">Assign</button>"))
		is.True(!strings.Contains(other.get("/app/tasks?assignee_id=").body, "Call Dee"))
		// Overdue once the due time passed; filters.
		is.True(strings.Contains(sdr.get("/app/tasks?assignee_id=&overdue=true").body, "No task matches."))
		e.clock.Advance(3 * 24 * time.Hour)
		// (Sessions end after 12 idle hours: sign in again.)
		sdr = e.member("sdr2@acme.test", apikit.RoleMember)
		viewer = e.member("viewer2@acme.test", apikit.RoleClientViewer, "Globex")
		other = e.member("other:owner2@other.test", apikit.RoleOwner)
		r = sdr.get("/app/tasks?assignee_id=&overdue=true")
		is.True(strings.Contains(r.body, "Call Dee") && strings.Contains(r.body, "overdue"))
		is.True(!strings.Contains(sdr.get("/app/tasks?assignee_id=&sequence_id="+w.seqs["Call Initech"]).body, "Call Dee"))
		is.True(strings.Contains(sdr.get("/app/tasks?assignee_id=&status=done").body, "No task matches."))

		// Writes: the viewer is refused; no CSRF token is refused; a
		// Globex member cannot complete Initech's task.
		path := "/app/tasks/" + ids["Dee Fox"] + "/complete"
		is.Equal(viewer.post("/app/tasks", path, url.Values{"outcome": {"done"}}).code, http.StatusForbidden)
		is.Equal(sdr.postForm(path, url.Values{"outcome": {"done"}}, "").code, http.StatusForbidden)
		gm := e.member("globex@acme.test", apikit.RoleMember, "Globex")
		is.Equal(gm.post("/app/tasks", "/app/tasks/"+ids["Eve Gray"]+"/complete", url.Values{"outcome": {"done"}}).code, http.StatusNotFound)
		is.Equal(other.post("/app/tasks", path, url.Values{"outcome": {"done"}}).code, http.StatusNotFound)

		// Complete with a click: the tasks service, as the API.
		r = sdr.post("/app/tasks", path, url.Values{"outcome": {"done"}, "note": {"Called, call back Monday"}, "back": {"assignee_id=&status=open"}})
		is.Equal(r.code, http.StatusSeeOther)
		is.Equal(r.header.Get("Location"), "/app/tasks?assignee_id=&status=open")
		tk, err := e.pl.Tasks.Visible(context.Background(), w.owner, ids["Dee Fox"])
		is.NoErr(err)
		is.Equal(tk.Status, tasks.Done)
		is.Equal(*tk.Note, "Called, call back Monday")
		r = sdr.get("/app/tasks?assignee_id=&status=open")
		is.True(strings.Contains(r.body, "Task marked done."))
		is.True(!strings.Contains(r.body, "Call Dee"))
		// Twice: the API's conflict, with its remedy, the note kept.
		r = sdr.post("/app/tasks", path, url.Values{"outcome": {"skipped"}, "note": {"again"}})
		is.Equal(r.code, http.StatusConflict)
		is.True(strings.Contains(r.body, `class="error"`))
		// A bad outcome.
		r = sdr.post("/app/tasks", "/app/tasks/"+ids["Eve Gray"]+"/complete", url.Values{"outcome": {"maybe"}, "note": {"typed"}, "back": {"assignee_id="}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, `value="typed"`))
		is.Equal(sdr.post("/app/tasks", "/app/tasks/"+ids["Eve Gray"]+"/complete", url.Values{"outcome": {"skipped"}}).code, http.StatusSeeOther)
		is.True(strings.Contains(sdr.get("/app/tasks?assignee_id=&status=skipped").body, "Call Eve"))
	})
}

// TestAssignTasks: a member assigns a task to themself ("me"), to another
// member and to nobody, as PUT /v1/tasks/{id}/assignee does, and sees it
// under My tasks; the viewer is refused, a form without the CSRF token is
// refused, another client's task is not found, and an id that is no
// member is the API's 422.
func TestAssignTasks(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e, w, ids, sdr, viewer := tasksEnv(t, d)
		gm := e.member("globex@acme.test", apikit.RoleMember, "Globex")
		ctx := context.Background()
		ms, err := e.pl.Workspaces.MemberList(ctx, w.owner)
		is.NoErr(err)
		member := map[string]string{}
		for _, m := range ms {
			member[m.Email] = m.ID
		}
		dee := "/app/tasks/" + ids["Dee Fox"] + "/assignee"
		assignee := func(id string) string {
			t.Helper()
			tk, err := e.pl.Tasks.Visible(ctx, w.owner, id)
			is.NoErr(err)
			return apikit.Deref(tk.AssigneeID)
		}

		is.Equal(viewer.post("/app/tasks", dee, url.Values{"assignee_id": {"me"}}).code, http.StatusForbidden)
		is.Equal(sdr.postForm(dee, url.Values{"assignee_id": {"me"}}, "").code, http.StatusForbidden)
		is.Equal(gm.post("/app/tasks", "/app/tasks/"+ids["Eve Gray"]+"/assignee", url.Values{"assignee_id": {"me"}}).code, http.StatusNotFound)
		is.Equal(assignee(ids["Dee Fox"]), "")
		r := sdr.post("/app/tasks", dee, url.Values{"assignee_id": {apikit.NewID()}, "back": {"assignee_id="}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "not an active member"))

		r = sdr.post("/app/tasks", dee, url.Values{"assignee_id": {"me"}, "back": {"assignee_id="}})
		is.Equal(r.code, http.StatusSeeOther)
		is.Equal(r.header.Get("Location"), "/app/tasks?assignee_id=")
		is.Equal(assignee(ids["Dee Fox"]), member["sdr@acme.test"])
		r = sdr.get("/app/tasks")
		is.True(strings.Contains(r.body, "Call Dee") && !strings.Contains(r.body, "Call Eve"))
		is.True(strings.Contains(sdr.get("/app/tasks?assignee_id=none").body, "Call Eve"))
		is.True(!strings.Contains(gm.get("/app/tasks").body, "Call Dee")) // not Globex member's

		is.Equal(sdr.post("/app/tasks", dee, url.Values{"assignee_id": {member["globex@acme.test"]}}).code, http.StatusSeeOther)
		is.Equal(assignee(ids["Dee Fox"]), member["globex@acme.test"])
		is.True(strings.Contains(gm.get("/app/tasks").body, "Call Dee"))
		r = sdr.post("/app/tasks", dee, url.Values{"assignee_id": {""}})
		is.Equal(r.code, http.StatusSeeOther)
		is.True(strings.Contains(sdr.get("/app/tasks?assignee_id=").body, "Task unassigned."))
		is.Equal(assignee(ids["Dee Fox"]), "")
	})
}
