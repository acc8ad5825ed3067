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
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sequences"
)

// TestLeadPicker: beside the builder, a member types a lead's work email
// or id and sees each text step as that lead gets it (branches and spin
// chosen for it, what it misses); a viewer has no picker.
func TestLeadPicker(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEnv(t, d)
		e.sandboxSenders()
		p := e.owner()
		_, err := e.pl.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: p.WorkspaceID}, []sequences.Spec{{Name: "Copy", Senders: []string{"mail"},
			Steps: []sequences.Step{{ID: "hi", Type: "email", Subject: "{{#if company}}{{company}} and us{{else}}A quick idea{{/if}}",
				Body: `{{spin "Hi" "Hey"}} {{first_name}}, {{#if company}}how is {{company}}?{{else}}how are you?{{/if}}`}}}})
		is.NoErr(err)
		q, err := e.pl.Sequences.ByName(ctx, p.WorkspaceID, "Copy")
		is.NoErr(err)
		text := func(v string) *string { return &v }
		upsert := func(in leads.LeadInput) string {
			r, err := e.pl.Leads.Upsert(ctx, p, in)
			is.NoErr(err)
			return r.Lead.ID
		}
		upsert(leads.LeadInput{Name: text("Ann Lee"), Company: text("Acme"), EmailWork: text("ann@acme.test")})
		nobody := upsert(leads.LeadInput{EmailWork: text("who@acme.test")})

		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		page := sdr.get("/app/sequences/" + q.ID)
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(page.body, `id="lead-picker"`))
		is.True(!strings.Contains(page.body, "<article class=\"rendered\">"))

		page = sdr.get("/app/sequences/" + q.ID + "?lead=" + url.QueryEscape("ann@acme.test"))
		is.Equal(page.code, http.StatusOK)
		body := html.UnescapeString(page.body)
		is.True(strings.Contains(body, "What Ann Lee gets"))
		is.True(strings.Contains(body, "<strong>Subject:</strong> Acme and us"))
		is.True(strings.Contains(body, " Ann, how is Acme?</pre>"))
		is.True(strings.Contains(body, `value="ann@acme.test"`)) // the picker keeps what was typed

		page = sdr.get("/app/sequences/" + q.ID + "?lead=" + nobody)
		body = html.UnescapeString(page.body)
		is.True(strings.Contains(body, "<strong>Subject:</strong> A quick idea"))
		is.True(strings.Contains(body, " , how are you?</pre>"))
		is.True(strings.Contains(body, "Not sent to this lead: Step \"hi\", body: the lead has no value for {{[first_name]}}"))

		page = sdr.get("/app/sequences/" + q.ID + "?lead=" + url.QueryEscape("ghost@acme.test"))
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(html.UnescapeString(page.body), `No lead of yours has the id or work email "ghost@acme.test"`))

		viewer := e.member("viewer@acme.test", apikit.RoleClientViewer)
		page = viewer.get("/app/sequences/" + q.ID + "?lead=" + nobody)
		is.Equal(page.code, http.StatusOK)
		is.True(!strings.Contains(page.body, `id="lead-picker"`))
		is.True(!strings.Contains(page.body, `class="rendered"`)) // nor the rendering
	})
}
