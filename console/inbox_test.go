package console

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

func TestInbox(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		w := e.work()
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		viewer := e.member("viewer@acme.test", apikit.RoleClientViewer, "Globex")
		other := e.member("other:owner@other.test", apikit.RoleOwner)

		// The list: both threads for the member, Globex's alone for its
		// viewer, none for another workspace.
		r := sdr.get("/app/inbox")
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, "Ann Lee") && strings.Contains(r.body, "Cy Park"))
		is.True(strings.Contains(r.body, `hx-trigger="every 5s"`)) // polled
		r = viewer.get("/app/inbox")
		is.True(strings.Contains(r.body, "Ann Lee"))
		is.True(!strings.Contains(r.body, "Cy Park"))
		is.True(!strings.Contains(other.get("/app/inbox").body, "Ann Lee"))

		// The API's filters.
		has := func(q, name string) bool { return strings.Contains(sdr.get("/app/inbox?"+q).body, name) }
		is.True(has("intent=interested", "Ann Lee"))
		is.True(!has("intent=interested", "Cy Park"))
		is.True(has("unread=true", "Ann Lee") && !has("unread=true", "Cy Park"))
		is.True(has("unread=false", "Cy Park") && !has("unread=false", "Ann Lee"))
		is.True(has("assignee_id=none", "Cy Park"))
		is.True(!has("assignee_id=me", "Cy Park"))
		is.True(has("sequence_id="+w.seqs["Initech"], "Cy Park") && !has("sequence_id="+w.seqs["Initech"], "Ann Lee"))
		is.True(has("sender_id="+w.sender, "Ann Lee"))
		is.True(!has("needs_review=true", "Ann Lee"))
		is.True(has("sender_id=bogus", "No thread matches."))
		// The polled block alone.
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/app/inbox?unread=true", nil)
		req.Header.Set("HX-Request", "true")
		r = sdr.do(req)
		is.Equal(r.code, http.StatusOK)
		is.True(strings.HasPrefix(r.body, `<div id="threads" data-poll`))
		is.True(strings.Contains(r.body, "Ann Lee"))
		// A viewer filtering on another client is refused, as by the API.
		is.Equal(viewer.get("/app/inbox?client_id="+w.clients["Initech"]).code, http.StatusForbidden)

		// A thread: its messages, the reply escaped.
		r = sdr.get("/app/inbox/" + w.annThread)
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, html.EscapeString(w.annReply)))
		is.True(!strings.Contains(r.body, "<b>let's talk</b>"))
		is.True(strings.Contains(r.body, "Send reply"))
		// The viewer reads it, with no write control; another client's
		// thread, another workspace's, or no id are not found.
		r = viewer.get("/app/inbox/" + w.annThread)
		is.Equal(r.code, http.StatusOK)
		is.True(!strings.Contains(r.body, "Send reply") && !strings.Contains(r.body, "Set intent"))
		is.Equal(viewer.get("/app/inbox/"+w.cyThread).code, http.StatusNotFound)
		is.Equal(viewer.get("/app/inbox/"+w.cyThread+"/messages").code, http.StatusNotFound)
		is.Equal(other.get("/app/inbox/"+w.annThread).code, http.StatusNotFound)
		is.Equal(sdr.get("/app/inbox/nope").code, http.StatusNotFound)

		// A new reply shows in the polled messages block.
		w.reply(w.ann, "m-2", "Also: bring the pricing sheet.")
		r = sdr.get("/app/inbox/" + w.annThread + "/messages")
		is.Equal(r.code, http.StatusOK)
		is.True(strings.HasPrefix(r.body, `<section id="messages"`))
		is.True(strings.Contains(r.body, "bring the pricing sheet"))

		// Writes: the viewer is refused (role), a form without the CSRF
		// token is refused, another client's thread is not found.
		path := "/app/inbox/" + w.annThread
		is.Equal(viewer.post(path, path+"/intent", url.Values{"intent": {"not_now"}}).code, http.StatusForbidden)
		is.Equal(sdr.postForm(path+"/intent", url.Values{"intent": {"not_now"}}, "").code, http.StatusForbidden)
		gm := e.member("globex@acme.test", apikit.RoleMember, "Globex")
		is.Equal(gm.post("/app/inbox", "/app/inbox/"+w.cyThread+"/intent", url.Values{"intent": {"not_now"}}).code, http.StatusNotFound)
		is.Equal(other.post("/app/inbox", path+"/reply", url.Values{"body": {"hi"}}).code, http.StatusNotFound)

		// Set intent: the same service as PUT /v1/threads/{id}/intent.
		r = sdr.post(path, path+"/intent", url.Values{"intent": {"question"}})
		is.Equal(r.code, http.StatusSeeOther)
		th, err := e.pl.Inbox.Get(context.Background(), w.owner, w.annThread)
		is.NoErr(err)
		is.Equal(*th.Intent, inbox.Question)
		is.Equal(*th.IntentSource, inbox.SourceManual)
		r = sdr.get(path)
		is.True(strings.Contains(r.body, "Intent set to question."))
		// A bad intent: the API's message and remedy.
		r = sdr.post(path, path+"/intent", url.Values{"intent": {"happy"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "Send one of the seven intents."))

		// Assign to the member, then filter on "me"; a stranger's id is
		// refused with the API's remedy.
		members, err := e.pl.Workspaces.MemberList(context.Background(), w.owner)
		is.NoErr(err)
		var sdrID string
		for _, m := range members {
			if m.Email == "sdr@acme.test" {
				sdrID = m.ID
			}
		}
		is.Equal(sdr.post(path, path+"/assignee", url.Values{"assignee_id": {sdrID}}).code, http.StatusSeeOther)
		is.True(has("assignee_id=me", "Ann Lee"))
		r = sdr.post(path, path+"/assignee", url.Values{"assignee_id": {apikit.NewID()}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "Assign the thread to a member of the workspace"))
		is.Equal(sdr.post(path, path+"/assignee", url.Values{"assignee_id": {""}}).code, http.StatusSeeOther)
		is.True(has("assignee_id=none", "Ann Lee"))

		// Mark read.
		is.Equal(sdr.post(path, path+"/read", nil).code, http.StatusSeeOther)
		is.True(!has("unread=true", "Ann Lee"))

		// Reply: sent through the sender on the sandbox, recorded in the
		// thread, counted against the sender's email cap.
		sent := len(w.net.Performed())
		r = sdr.post(path, path+"/reply", url.Values{"body": {"Thursday 3pm works. <i>See you</i>"}})
		is.Equal(r.code, http.StatusSeeOther)
		is.Equal(len(w.net.Performed()), sent+1)
		r = sdr.get(path)
		is.True(strings.Contains(r.body, "Reply sent."))
		is.True(strings.Contains(r.body, html.EscapeString("Thursday 3pm works. <i>See you</i>")))
		// A refused reply keeps what was typed and shows the remedy: an
		// empty body, a subject with a line break.
		r = sdr.post(path, path+"/reply", url.Values{"body": {"   "}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "Send the text of the reply in body."))
		r = sdr.post(path, path+"/reply", url.Values{"body": {"Kept text"}, "subject": {"a\tb"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "Kept text"))
	})
}
