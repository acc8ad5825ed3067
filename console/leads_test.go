package console

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
)

// principal is a workspace-wide manager of ws, for making test data
// through the services.
func (e *env) principal(ws string) (context.Context, apikit.Principal) {
	e.t.Helper()
	ctx := context.Background()
	w, err := e.pl.Workspaces.ByName(ctx, ws)
	if err != nil {
		e.t.Fatal(err)
	}
	p := apikit.Principal{WorkspaceID: w.ID, WorkspaceName: w.Name, Timezone: w.Timezone, Plan: w.Plan, Role: apikit.RoleManager}
	return apikit.WithPrincipal(ctx, p), p
}

// client is the id of ws's client name.
func (e *env) client(ws, name string) string {
	e.t.Helper()
	ctx, p := e.principal(ws)
	cat, err := e.pl.Workspaces.Catalog(ctx, p)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range cat.Clients {
		if c.Name == name {
			return c.ID
		}
	}
	e.t.Fatalf("no client %s", name)
	return ""
}

// lead creates a lead in ws (of client, when not "") and returns its id.
func (e *env) lead(ws, client string, in leads.LeadInput) string {
	e.t.Helper()
	ctx, p := e.principal(ws)
	if client != "" {
		id := e.client(ws, client)
		in.ClientID = &id
	}
	res, err := e.pl.Leads.Upsert(ctx, p, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Lead.ID
}

func str(s string) *string { return &s }

func TestLeadsListFiltersAndPages(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		for i := range 55 {
			client := "Globex"
			if i%5 == 0 {
				client = "Initech"
			}
			e.lead("acme", client, leads.LeadInput{Name: str(fmt.Sprintf("Person %02d", i)), Company: str("Company " + client),
				EmailWork: str(fmt.Sprintf("p%02d@%s.test", i, strings.ToLower(client)))})
		}
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		rows := regexp.MustCompile(`<a href="/app/leads/[0-9a-f-]{36}">`)

		page := sdr.get("/app/leads")
		is.Equal(page.code, http.StatusOK)
		is.Equal(len(rows.FindAllString(page.body, -1)), 50)
		is.True(strings.Contains(page.body, "1–50 of 55"))
		is.True(strings.Contains(page.body, `href="/app/leads/import"`)) // a member imports
		next := regexp.MustCompile(`<a href="([^"]+)" rel="next">`).FindStringSubmatch(page.body)
		is.True(next != nil)
		is.Equal(next[1], "/app/leads?offset=50")
		page = sdr.get(next[1])
		is.Equal(len(rows.FindAllString(page.body, -1)), 5)
		is.True(strings.Contains(page.body, "51–55 of 55"))
		is.True(strings.Contains(page.body, `rel="prev"`))

		// The API's filters: client, search, email; the pager keeps them.
		page = sdr.get("/app/leads?client_id=" + e.client("acme", "Initech"))
		is.True(strings.Contains(page.body, "1–11 of 11"))
		page = sdr.get("/app/leads?q=person+0")
		is.True(strings.Contains(page.body, "1–10 of 10"))
		is.True(strings.Contains(page.body, `value="person 0"`))
		page = sdr.get("/app/leads?email=P07@GLOBEX.test")
		is.True(strings.Contains(page.body, "1–1 of 1"))
		is.True(strings.Contains(page.body, "Person 07"))
		page = sdr.get("/app/leads?replied=true")
		is.True(strings.Contains(page.body, "No lead matches."))
		page = sdr.get("/app/leads?q=Company&offset=50")
		is.True(strings.Contains(page.body, `href="/app/leads?q=Company" rel="prev"`))
		// A mangled id lists nothing rather than failing.
		page = sdr.get("/app/leads?stage_id=nope")
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(page.body, "No lead matches."))
	})
}

func TestLeadPage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		id := e.lead("acme", "Globex", leads.LeadInput{Name: str(`<script>alert("x")</script><b>Eve</b>`), Company: str(`Acme & "Sons"`),
			Headline: str(`<img src=x onerror=alert(1)>`), EmailWork: str("eve@globex.test"), Custom: map[string]any{"note": "<i>hi</i>", "size": 42}})
		ctx, p := e.principal("acme")
		cat, err := e.pl.Workspaces.Catalog(ctx, p)
		is.NoErr(err)
		_, err = e.pl.Leads.AddTags(ctx, p, id, []string{cat.Tags[0].ID})
		is.NoErr(err)
		_, err = e.pl.Leads.SetStage(ctx, p, id, &cat.Stages[0].ID)
		is.NoErr(err)

		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		page := sdr.get("/app/leads/" + id)
		is.Equal(page.code, http.StatusOK)
		// Every user text is escaped.
		is.True(!strings.Contains(page.body, "<script>alert"))
		is.True(!strings.Contains(page.body, "<img src=x"))
		is.True(!strings.Contains(page.body, "<i>hi</i>"))
		is.True(strings.Contains(page.body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;b&gt;Eve&lt;/b&gt;"))
		is.True(strings.Contains(page.body, "Acme &amp; &#34;Sons&#34;"))
		is.True(strings.Contains(page.body, "&lt;i&gt;hi&lt;/i&gt;"))
		// Fields, tags, stage, client and the timeline.
		is.True(strings.Contains(page.body, "eve@globex.test"))
		is.True(strings.Contains(page.body, "<li>"+cat.Tags[0].Name+" <form"))
		is.True(strings.Contains(page.body, "<dd>"+cat.Stages[0].Name+"</dd>"))
		is.True(strings.Contains(page.body, "<dd>Globex</dd>"))
		is.True(strings.Contains(page.body, "lead.created"))
		is.True(strings.Contains(page.body, "lead.tagged"))
		is.True(strings.Contains(page.body, "2026-11-02 10:15")) // Berlin time
		is.True(strings.Contains(page.body, "Not enrolled in any sequence."))

		// Unknown, malformed and other workspaces' leads are not found.
		other := e.lead("other", "Hooli", leads.LeadInput{Name: str("Hidden"), EmailWork: str("h@hooli.test")})
		for _, path := range []string{"/app/leads/" + other, "/app/leads/" + apikit.NewID(), "/app/leads/not-an-id"} {
			r := sdr.get(path)
			is.Equal(r.code, http.StatusNotFound)
			is.True(!strings.Contains(r.body, "Hidden"))
			is.True(strings.Contains(r.body, "was not found."))
		}
	})
}

func TestAClientViewerSeesOnlyTheirClients(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		globex := e.lead("acme", "Globex", leads.LeadInput{Name: str("Gina Globex"), EmailWork: str("gina@globex.test")})
		initech := e.lead("acme", "Initech", leads.LeadInput{Name: str("Ian Initech"), EmailWork: str("ian@initech.test")})
		v := e.member("vera@globex.test", apikit.RoleClientViewer, "Globex")

		page := v.get("/app/leads")
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(page.body, "Gina Globex"))
		is.True(!strings.Contains(page.body, "Ian Initech"))
		is.True(!strings.Contains(page.body, "Initech")) // not even in the client filter
		is.Equal(v.get("/app/leads/"+globex).code, http.StatusOK)
		is.Equal(v.get("/app/leads/"+initech).code, http.StatusNotFound)
		r := v.get("/app/leads?client_id=" + e.client("acme", "Initech"))
		is.Equal(r.code, http.StatusForbidden)

		// No write controls, and the writes are refused.
		for _, path := range []string{"/app/leads", "/app/leads/" + globex} {
			body := v.get(path).body
			is.True(!strings.Contains(body, "Import"))
			is.True(!strings.Contains(body, `method="post" action="/app/leads`))
			is.True(!strings.Contains(body, `href="/app/members"`))
		}
		is.Equal(v.get("/app/leads/import").code, http.StatusForbidden)
		r = v.post("/app/leads", "/app/leads/import", url.Values{})
		is.Equal(r.code, http.StatusForbidden)
		is.True(strings.Contains(r.body, "This needs the member role; you are a client_viewer."))
	})
}

// upload posts a CSV file to the import form, with the page's token.
func (b *browser) upload(csv string, fields map[string]string) response {
	b.e.t.Helper()
	token := b.get("/app/leads/import").csrf()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("csrf", token)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if csv != "" {
		f, _ := w.CreateFormFile("file", "leads.csv")
		_, _ = f.Write([]byte(csv))
	}
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, b.e.srv.URL+"/app/leads/import", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return b.do(req)
}

// waitImport reads the import's page until the import has ended.
func (b *browser) waitImport(path string) response {
	b.e.t.Helper()
	for range 500 {
		r := b.get(path)
		if r.code != http.StatusOK {
			b.e.t.Fatalf("import page: %d %s", r.code, r.body)
		}
		if !strings.Contains(r.body, `<strong id="import-status">running</strong>`) {
			return r
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.e.t.Fatal("the import did not end")
	return response{}
}

const importCSV = "First Name,Last Name,Email,Company,Mobile\n" +
	"Ada,Lovelace,ada@globex.test,Globex,+44 1\n" +
	"Bad,Row,not-an-email,Globex,\n" +
	"Alan,Turing,alan@globex.test,Globex,\n"

func TestImportThroughTheConsole(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		form := sdr.get("/app/leads/import")
		is.Equal(form.code, http.StatusOK)
		is.True(strings.Contains(form.body, `enctype="multipart/form-data"`))

		// Refusals show the import's own error and keep the choices.
		r := sdr.upload("", nil)
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "No file was chosen."))
		r = sdr.upload("Notes\nhello\n", map[string]string{"client_id": e.client("acme", "Globex")})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, `selected>Globex</option>`))

		r = sdr.upload(importCSV, map[string]string{"client_id": e.client("acme", "Globex")})
		is.Equal(r.code, http.StatusSeeOther)
		loc := r.header.Get("Location")
		is.True(regexp.MustCompile(`^/app/imports/[0-9a-f-]{36}$`).MatchString(loc))
		page := sdr.waitImport(loc)
		is.True(strings.Contains(page.body, `<strong id="import-status">succeeded</strong>`))
		is.True(strings.Contains(page.body, `<th scope="row">Created</th><td>2</td>`))
		is.True(strings.Contains(page.body, `<th scope="row">Rejected</th><td>1</td>`))
		is.True(regexp.MustCompile(`<tr><td>3</td><td>E_PAYLOAD_INVALID</td><td>[^<]*email`).MatchString(page.body))
		is.True(strings.Contains(page.body, "<td>Mobile</td><td>custom.phone</td>"))
		// Every rejected row, as a CSV download.
		is.True(strings.Contains(page.body, `href="`+loc+`/rejected.csv" download>`))
		dl := sdr.get(loc + "/rejected.csv")
		is.Equal(dl.code, http.StatusOK)
		is.True(strings.HasPrefix(dl.header.Get("Content-Type"), "text/csv"))
		is.True(strings.HasPrefix(dl.body, "line,code,reason\n3,E_PAYLOAD_INVALID,"))

		// htmx asks for the progress block alone.
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+loc, nil)
		req.Header.Set("HX-Request", "true")
		part := sdr.do(req)
		is.True(strings.HasPrefix(strings.TrimSpace(part.body), `<section id="import-progress"`))
		is.True(!strings.Contains(part.body, "<html"))

		// The leads are the API's: made by the same import, of the client.
		ctx, p := e.principal("acme")
		list, err := e.pl.Leads.List(ctx, p, leads.Filter{Email: "ada@globex.test"})
		is.NoErr(err)
		is.Equal(list.Total, 1)
		is.Equal(*list.Data[0].ClientID, e.client("acme", "Globex"))
		is.Equal(list.Data[0].Custom["phone"], "+44 1")

		// A viewer of another client, or another workspace, cannot see the job.
		is.Equal(e.member("vera@initech.test", apikit.RoleClientViewer, "Initech").get(loc).code, http.StatusNotFound)
		is.Equal(e.member("vera@initech.test", apikit.RoleClientViewer, "Initech").get(loc+"/rejected.csv").code, http.StatusNotFound)
		is.Equal(e.member("other:owner@other.test", apikit.RoleOwner).get(loc).code, http.StatusNotFound)
		is.Equal(e.member("vera@globex.test", apikit.RoleClientViewer, "Globex").get(loc).code, http.StatusOK)
	})
}

// TestLeadPageForms: a member sets the stage, adds and removes a tag and
// marks the lead do-not-contact through the lead page, with the API's
// services; a client viewer has no such forms and is refused.
func TestLeadPageForms(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		id := e.lead("acme", "Globex", leads.LeadInput{Name: str("Gina"), EmailWork: str("gina@globex.test")})
		other := e.lead("other", "Hooli", leads.LeadInput{Name: str("Hidden"), EmailWork: str("h@hooli.test")})
		ctx, p := e.principal("acme")
		cat, err := e.pl.Workspaces.Catalog(ctx, p)
		is.NoErr(err)
		stage, tag := cat.Stages[1], cat.Tags[0]
		path := "/app/leads/" + id
		sdr := e.member("sdr@acme.test", apikit.RoleMember)

		r := sdr.post(path, path+"/stage", url.Values{"stage_id": {stage.ID}})
		is.Equal(r.code, http.StatusSeeOther)
		page := sdr.get(path)
		is.True(strings.Contains(page.body, "Stage saved."))
		is.True(strings.Contains(page.body, `<option value="`+stage.ID+`" selected>`))
		is.Equal(sdr.post(path, path+"/tags", url.Values{"tag_id": {tag.ID}}).code, http.StatusSeeOther)
		is.Equal(sdr.post(path, path+"/suppress", nil).code, http.StatusSeeOther)
		l, err := e.pl.Leads.Get(ctx, p, id)
		is.NoErr(err)
		is.Equal(*l.StageID, stage.ID)
		is.Equal(len(l.Tags), 1)
		is.True(l.DoNotContact)
		page = sdr.get(path)
		is.True(strings.Contains(page.body, "do not contact"))
		is.True(strings.Contains(page.body, "Clear do-not-contact"))
		is.Equal(sdr.post(path, path+"/tags/"+tag.ID+"/remove", nil).code, http.StatusSeeOther)
		is.Equal(sdr.post(path, path+"/unsuppress", nil).code, http.StatusSeeOther)
		is.Equal(sdr.post(path, path+"/stage", url.Values{"stage_id": {""}}).code, http.StatusSeeOther)
		l, err = e.pl.Leads.Get(ctx, p, id)
		is.NoErr(err)
		is.True(l.StageID == nil && len(l.Tags) == 0 && !l.DoNotContact)
		// The timeline has the API's events, naming the member.
		page = sdr.get(path)
		for _, kind := range []string{"lead.stage_changed", "lead.tagged", "lead.untagged", "lead.suppressed", "lead.unsuppressed"} {
			is.True(strings.Contains(page.body, kind))
		}

		// Errors are the services': another workspace's lead, an unknown tag.
		r = sdr.post(path, "/app/leads/"+other+"/stage", url.Values{"stage_id": {stage.ID}})
		is.Equal(r.code, http.StatusNotFound)
		r = sdr.post(path, path+"/tags", url.Values{"tag_id": {apikit.NewID()}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, `class="error"`))

		// A client viewer: no forms, and refused.
		v := e.member("vera@globex.test", apikit.RoleClientViewer, "Globex")
		page = v.get(path)
		is.Equal(page.code, http.StatusOK)
		is.True(!strings.Contains(page.body, `method="post" action="/app/leads/`))
		is.Equal(v.post(path, path+"/suppress", nil).code, http.StatusForbidden)
		l, err = e.pl.Leads.Get(ctx, p, id)
		is.NoErr(err)
		is.True(!l.DoNotContact)
	})
}
