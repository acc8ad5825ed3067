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

func TestTasks(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		w := e.work()
		ids := w.callTasks()
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		viewer := e.member("viewer@acme.test", apikit.RoleClientViewer, "Globex")
		other := e.member("other:owner@other.test", apikit.RoleOwner)

		// Open tasks, for everyone; the viewer sees Globex's alone and
		// no buttons; another workspace none.
		r := sdr.get("/app/tasks")
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, "Call Dee") && strings.Contains(r.body, "Call Eve"))
		is.True(strings.Contains(r.body, ">Done</button>"))
		r = viewer.get("/app/tasks")
		is.True(strings.Contains(r.body, "Call Dee") && !strings.Contains(r.body, "Call Eve"))
		is.True(!strings.Contains(r.body, ">Done</button>"))
		is.True(!strings.Contains(other.get("/app/tasks").body, "Call Dee"))
		// Overdue once the due time passed; filters.
		is.True(strings.Contains(sdr.get("/app/tasks?overdue=true").body, "No task matches."))
		e.clock.Advance(3 * 24 * time.Hour)
		// (Sessions end after 12 idle hours: sign in again.)
		sdr = e.member("sdr2@acme.test", apikit.RoleMember)
		viewer = e.member("viewer2@acme.test", apikit.RoleClientViewer, "Globex")
		other = e.member("other:owner2@other.test", apikit.RoleOwner)
		r = sdr.get("/app/tasks?overdue=true")
		is.True(strings.Contains(r.body, "Call Dee") && strings.Contains(r.body, "overdue"))
		is.True(!strings.Contains(sdr.get("/app/tasks?sequence_id="+w.seqs["Call Initech"]).body, "Call Dee"))
		is.True(strings.Contains(sdr.get("/app/tasks?status=done").body, "No task matches."))

		// Writes: the viewer is refused; no CSRF token is refused; a
		// Globex member cannot complete Initech's task.
		path := "/app/tasks/" + ids["Dee Fox"] + "/complete"
		is.Equal(viewer.post("/app/tasks", path, url.Values{"outcome": {"done"}}).code, http.StatusForbidden)
		is.Equal(sdr.postForm(path, url.Values{"outcome": {"done"}}, "").code, http.StatusForbidden)
		gm := e.member("globex@acme.test", apikit.RoleMember, "Globex")
		is.Equal(gm.post("/app/tasks", "/app/tasks/"+ids["Eve Gray"]+"/complete", url.Values{"outcome": {"done"}}).code, http.StatusNotFound)
		is.Equal(other.post("/app/tasks", path, url.Values{"outcome": {"done"}}).code, http.StatusNotFound)

		// Complete with a click: the tasks service, as the API.
		r = sdr.post("/app/tasks", path, url.Values{"outcome": {"done"}, "note": {"Called, call back Monday"}, "back": {"status=open"}})
		is.Equal(r.code, http.StatusSeeOther)
		is.Equal(r.header.Get("Location"), "/app/tasks?status=open")
		tk, err := e.pl.Tasks.Visible(context.Background(), w.owner, ids["Dee Fox"])
		is.NoErr(err)
		is.Equal(tk.Status, tasks.Done)
		is.Equal(*tk.Note, "Called, call back Monday")
		r = sdr.get("/app/tasks?status=open")
		is.True(strings.Contains(r.body, "Task marked done."))
		is.True(!strings.Contains(r.body, "Call Dee"))
		// Twice: the API's conflict, with its remedy, the note kept.
		r = sdr.post("/app/tasks", path, url.Values{"outcome": {"skipped"}, "note": {"again"}})
		is.Equal(r.code, http.StatusConflict)
		is.True(strings.Contains(r.body, `class="error"`))
		// A bad outcome.
		r = sdr.post("/app/tasks", "/app/tasks/"+ids["Eve Gray"]+"/complete", url.Values{"outcome": {"maybe"}, "note": {"typed"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, `value="typed"`))
		is.Equal(sdr.post("/app/tasks", "/app/tasks/"+ids["Eve Gray"]+"/complete", url.Values{"outcome": {"skipped"}}).code, http.StatusSeeOther)
		is.True(strings.Contains(sdr.get("/app/tasks?status=skipped").body, "Call Eve"))
	})
}
