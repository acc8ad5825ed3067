package console

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

// owner is a workspace-wide manager of acme, for arranging a test's
// world through the services.
func (e *env) owner() apikit.Principal {
	_, p := e.principal("acme")
	return p
}

// sandboxSenders adds acme's sandbox senders: li (LinkedIn) and mail
// (email), as a setup file would.
func (e *env) sandboxSenders() {
	e.t.Helper()
	p := e.owner()
	_, err := e.pl.Senders.Apply(context.Background(), senders.Owner{WorkspaceID: p.WorkspaceID, Timezone: p.Timezone},
		[]senders.Spec{{Name: "li", Channel: senders.LinkedIn}, {Name: "mail", Channel: senders.Email, Address: "mail@acme.test"}})
	if err != nil {
		e.t.Fatal(err)
	}
}

var sequenceLink = regexp.MustCompile(`/app/sequences/([0-9a-f-]{36})`)

// newSequence adds a sequence through the console's form as b and
// returns its id.
func (e *env) newSequence(b *browser, name string) string {
	e.t.Helper()
	r := b.post("/app/sequences", "/app/sequences", url.Values{"name": {name}})
	if r.code != http.StatusSeeOther {
		e.t.Fatalf("new sequence: %d %s", r.code, r.body)
	}
	m := sequenceLink.FindStringSubmatch(r.header.Get("Location"))
	if m == nil {
		e.t.Fatalf("new sequence went to %q", r.header.Get("Location"))
	}
	return m[1]
}

// builder posts the builder's form of sequence id with op.
func builderPost(b *browser, id, op string, form url.Values) response {
	form.Set("op", op)
	return b.post("/app/sequences/"+id, "/app/sequences/"+id, form)
}

func TestSequenceBuilderSavesThroughApply(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		e.sandboxSenders()
		boss := e.member("boss@acme.test", apikit.RoleManager)
		id := e.newSequence(boss, "Berlin outreach")
		page := boss.get("/app/sequences/" + id)
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(page.body, "draft"))

		// Add an invite step and a message step: each button saves the form.
		r := builderPost(boss, id, "add", url.Values{"steps": {"0"}, "sender": {"li"}, "add_type": {"invite"}})
		is.Equal(r.code, http.StatusSeeOther)
		r = builderPost(boss, id, "add", url.Values{"steps": {"1"}, "sender": {"li"}, "add_type": {"message"},
			"s0.type": {"invite"}, "s0.id": {"invite-1"}, "s0.note": {"Hi {{first_name}}"}})
		is.Equal(r.code, http.StatusSeeOther)
		q, err := e.pl.Sequences.Visible(context.Background(), e.owner(), id)
		is.NoErr(err)
		is.Equal(len(q.Steps), 2)
		is.Equal(q.Steps[0].Note, "Hi {{first_name}}")
		is.Equal(q.Steps[1].Type, "message")
		// The message has no body: the same problem as activation names,
		// on the page; activating gives E_GRAPH_INVALID.
		page = boss.get("/app/sequences/" + id)
		is.True(strings.Contains(page.body, "Problems that block activation"))
		r = boss.post("/app/sequences/"+id, "/app/sequences/"+id+"/activate", nil)
		is.Equal(r.code, http.StatusUnprocessableEntity)
		_, want := e.pl.Sequences.Activate(context.Background(), e.owner(), id)
		is.True(strings.Contains(r.body, escaped(apikit.AsError(want).Message)))

		// Move the message up, then delete it; a word in a number field is
		// refused with what was typed kept.
		form := url.Values{"steps": {"2"}, "sender": {"li"}, "s0.type": {"invite"}, "s0.id": {"invite-1"}, "s0.note": {"Hi"},
			"s1.type": {"message"}, "s1.id": {"message-2"}, "s1.body": {"Thanks for connecting"}}
		is.Equal(builderPost(boss, id, "up:1", form).code, http.StatusSeeOther)
		q, _ = e.pl.Sequences.Visible(context.Background(), e.owner(), id)
		is.Equal(q.Steps[0].ID, "message-2")
		bad := url.Values{"steps": {"1"}, "s0.type": {"wait"}, "s0.id": {"w"}, "s0.days": {"three"}}
		r = builderPost(boss, id, "save", bad)
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, `days &#34;three&#34; is not a whole number`))
		is.True(strings.Contains(r.body, `value="three"`))
		form = url.Values{"steps": {"2"}, "sender": {"li"}, "s0.type": {"invite"}, "s0.id": {"invite-1"}, "s0.note": {"Hi"},
			"s1.type": {"message"}, "s1.id": {"message-2"}, "s1.body": {"Thanks"}}
		is.Equal(builderPost(boss, id, "delete:1", form).code, http.StatusSeeOther)
		q, _ = e.pl.Sequences.Visible(context.Background(), e.owner(), id)
		is.Equal(len(q.Steps), 1)

		// Valid now: activate, then the steps cannot change until paused.
		r = boss.post("/app/sequences/"+id, "/app/sequences/"+id+"/activate", nil)
		is.Equal(r.code, http.StatusSeeOther)
		q, _ = e.pl.Sequences.Visible(context.Background(), e.owner(), id)
		is.Equal(q.Status, sequences.Active)
		r = builderPost(boss, id, "save", url.Values{"steps": {"0"}, "sender": {"li"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "Pause it first"))
		is.Equal(boss.post("/app/sequences/"+id, "/app/sequences/"+id+"/pause", nil).code, http.StatusSeeOther)
		q, _ = e.pl.Sequences.Visible(context.Background(), e.owner(), id)
		is.Equal(q.Status, sequences.Paused)

		// A name taken is refused, with what was typed kept.
		r = boss.post("/app/sequences", "/app/sequences", url.Values{"name": {"Berlin outreach"}})
		is.Equal(r.code, http.StatusConflict)
		is.True(strings.Contains(r.body, `value="Berlin outreach"`))
		// The list shows it with its numbers.
		list := boss.get("/app/sequences")
		is.True(strings.Contains(list.body, "Berlin outreach"))
	})
}

// escaped is s as html/template escapes it in a page.
func escaped(s string) string {
	return strings.NewReplacer(`"`, "&#34;", "'", "&#39;", "&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func TestSequencesRefuseViewersAndOtherWorkspaces(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		boss := e.member("boss@acme.test", apikit.RoleManager)
		id := e.newSequence(boss, "Mine")
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		viewer := e.member("viewer@acme.test", apikit.RoleClientViewer, "Globex")
		stranger := e.member("other:owner@other.test", apikit.RoleOwner)

		// A member sees the sequence but no builder, and may not save or activate.
		page := sdr.get("/app/sequences/" + id)
		is.Equal(page.code, http.StatusOK)
		is.True(!strings.Contains(page.body, `id="builder"`))
		is.True(strings.Contains(page.body, "Enrol leads"))
		is.Equal(sdr.post("/app/sequences/"+id, "/app/sequences/"+id+"/activate", nil).code, http.StatusForbidden)
		is.Equal(sdr.post("/app/sequences", "/app/sequences", url.Values{"name": {"x"}}).code, http.StatusForbidden)
		// The Globex viewer does not see a workspace sequence: 404, as the API.
		is.Equal(viewer.get("/app/sequences/"+id).code, http.StatusNotFound)
		list := viewer.get("/app/sequences")
		is.Equal(list.code, http.StatusOK)
		is.True(!strings.Contains(list.body, "Mine"))
		is.True(!strings.Contains(list.body, "<form method=\"post\" action=\"/app/sequences\""))
		is.Equal(viewer.post("/app/sequences", "/app/sequences", url.Values{"name": {"x"}}).code, http.StatusForbidden)
		// Another workspace's owner: 404 everywhere.
		is.Equal(stranger.get("/app/sequences/"+id).code, http.StatusNotFound)
		is.Equal(stranger.post("/app/sequences", "/app/sequences/"+id+"/activate", nil).code, http.StatusNotFound)
		is.Equal(stranger.post("/app/sequences", "/app/sequences/"+id, url.Values{"steps": {"0"}}).code, http.StatusNotFound)
		// No CSRF token: refused.
		is.Equal(boss.postForm("/app/sequences/"+id+"/activate", nil, "").code, http.StatusForbidden)
	})
}

func TestEnrolFromAPreview(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		e.sandboxSenders()
		ada := e.lead("acme", "", leads.LeadInput{Name: str("Ada Lovelace"), PublicIdentifier: str("ada-lovelace")})
		bob := e.lead("acme", "", leads.LeadInput{Name: str("Bob Byte"), PublicIdentifier: str("bob-byte")})
		boss := e.member("boss@acme.test", apikit.RoleManager)
		id := e.newSequence(boss, "Intro")
		is.Equal(builderPost(boss, id, "save", url.Values{"steps": {"1"}, "sender": {"li"}, "s0.type": {"profile_view"}, "s0.id": {"view"}}).code, http.StatusSeeOther)
		is.Equal(boss.post("/app/sequences/"+id, "/app/sequences/"+id+"/activate", nil).code, http.StatusSeeOther)

		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		// Bob is already in the sequence: his row says why he is left out.
		_, err := e.pl.Enrollments.Commit(context.Background(), e.owner(), enrollInput(id, bob))
		is.NoErr(err)
		r := sdr.post("/app/sequences/"+id+"/enroll", "/app/sequences/"+id+"/preview", url.Values{"ids": {ada + "\n" + bob}})
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, "1 eligible, 1 excluded"))
		is.True(strings.Contains(r.body, "Ada Lovelace"))
		is.True(strings.Contains(r.body, "already in sequence"))
		is.True(strings.Contains(r.body, "Bob Byte")) // typed ids' leads are named too
		is.True(strings.Contains(r.body, `name="lead_id" value="`+ada+`"`))
		r = sdr.postForm("/app/sequences/"+id+"/enroll", url.Values{"lead_id": {ada}}, r.csrf())
		is.Equal(r.code, http.StatusSeeOther)
		page := sdr.get("/app/sequences/" + id)
		is.True(strings.Contains(page.body, "1 lead enrolled."))
		// Nothing chosen: the error, on the form.
		r = sdr.post("/app/sequences/"+id+"/enroll", "/app/sequences/"+id+"/preview", url.Values{})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "No lead is chosen."))
		// A viewer may not preview.
		viewer := e.member("viewer@acme.test", apikit.RoleClientViewer, "Globex")
		is.Equal(viewer.post("/app/sequences", "/app/sequences/"+id+"/preview", url.Values{"ids": {ada}}).code, http.StatusForbidden)
	})
}

func enrollInput(sequenceID string, leadIDs ...string) enrollments.EnrollInput {
	return enrollments.EnrollInput{SequenceID: sequenceID, LeadIDs: leadIDs, Confirm: true}
}
