package console

import (
	"bytes"
	"cmp"
	"context"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/net/html"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/webhooks"
)

// badValues are what no field can hold, and values longer than any field
// takes: each must be refused with a 4xx, never answered with a 5xx.
var badValues = map[string]string{
	"NUL":           "a\x00b",
	"invalid UTF-8": "\xff\xfe",
	"control":       "a\x01\r\nb",
	"over-long":     strings.Repeat("x", 3000),  // past Postgres's index entries, short of the console's limit
	"far too long":  strings.Repeat("é", 60000), // past every limit
}

// sweepForm is a form found on a page: its method, action, encoding, the
// values it would send as rendered, and every field name it has.
type sweepForm struct {
	page, method, action string
	multipart            bool
	values               url.Values
	names                []string
}

// formsOf finds the forms of an HTML page.
func formsOf(t *testing.T, page, body string) []sweepForm {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	attr := func(n *html.Node, key string) (string, bool) {
		for _, a := range n.Attr {
			if a.Key == key {
				return a.Val, true
			}
		}
		return "", false
	}
	var forms []sweepForm
	var cur *sweepForm
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			name, named := attr(n, "name")
			switch n.Data {
			case "form":
				method, _ := attr(n, "method")
				action, _ := attr(n, "action")
				enc, _ := attr(n, "enctype")
				f := sweepForm{page: page, method: strings.ToUpper(cmp.Or(method, "get")), action: html.UnescapeString(action),
					multipart: enc == "multipart/form-data", values: url.Values{}}
				cur = &f
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
				forms = append(forms, f)
				cur = nil
				return
			case "input", "select", "textarea", "button":
				if cur == nil || !named {
					break
				}
				if !slices.Contains(cur.names, name) {
					cur.names = append(cur.names, name)
				}
				typ, _ := attr(n, "type")
				value, _ := attr(n, "value")
				_, checked := attr(n, "checked")
				switch {
				case n.Data == "button" || typ == "submit" || typ == "file":
				case n.Data == "textarea":
					if n.FirstChild != nil {
						cur.values.Add(name, n.FirstChild.Data)
					} else {
						cur.values.Add(name, "")
					}
				case n.Data == "select":
					var first, selected string
					var found bool
					var opts func(*html.Node)
					opts = func(o *html.Node) {
						for c := o.FirstChild; c != nil; c = c.NextSibling {
							if c.Type == html.ElementNode && c.Data == "option" {
								v, _ := attr(c, "value")
								if _, sel := attr(c, "selected"); sel && !found {
									selected, found = v, true
								}
								if first == "" {
									first = v
								}
							}
							opts(c)
						}
					}
					opts(n)
					if found {
						first = selected
					}
					cur.values.Add(name, first)
				case typ == "checkbox" || typ == "radio":
					if checked {
						cur.values.Add(name, cmp.Or(value, "on"))
					}
				default:
					cur.values.Add(name, value)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return forms
}

// send submits values to the form's action as the form would.
func (b *browser) send(f sweepForm, values url.Values) response {
	b.e.t.Helper()
	target := b.e.srv.URL + f.action
	if f.method == http.MethodGet {
		req, _ := http.NewRequest(http.MethodGet, target+"?"+values.Encode(), nil)
		return b.do(req)
	}
	var body bytes.Buffer
	ctype := "application/x-www-form-urlencoded"
	if f.multipart {
		mw := multipart.NewWriter(&body)
		for k, vs := range values {
			for _, v := range vs {
				_ = mw.WriteField(k, v)
			}
		}
		fw, _ := mw.CreateFormFile("file", "leads.csv")
		_, _ = fw.Write([]byte("name,email\nZed Roe,zed@example.test\n"))
		_ = mw.Close()
		ctype = mw.FormDataContentType()
	} else {
		body.WriteString(values.Encode())
	}
	req, _ := http.NewRequest(http.MethodPost, target, &body)
	req.Header.Set("Content-Type", ctype)
	return b.do(req)
}

// routeOf is the registered pattern a console path answers to, "" for none.
func (e *env) routeOf(method, path string) string {
	req, _ := http.NewRequest(method, e.srv.URL+path, nil)
	_, pattern := e.c.mux.Handler(req)
	if pattern == "" {
		return ""
	}
	m, p, ok := strings.Cut(pattern, " ")
	if !ok {
		m, p = "", pattern
	}
	p = strings.TrimPrefix(p, e.c.prefix)
	if m == "" {
		return p
	}
	return m + " " + p
}

var idSegment = regexp.MustCompile(`\{[a-z]+\}`)

// consoleLink is a link to a console page.
var consoleLink = regexp.MustCompile(`href="(/app/[^"#]*)"`)

// TestNoValueAnswers5xx sweeps every page the console registers, as an
// owner: every field of every form on the pages (each page's GET filters
// and the forms that write, with a valid CSRF token) and every query
// parameter and {id} of every page, one at a time, with a NUL, invalid
// UTF-8, control characters and over-long values. None may answer 5xx;
// the console refuses them as the API does (4xx, the refusal on the
// page). Every route that writes must be reached by a form, so that a
// route added later is swept with it.
func TestNoValueAnswers5xx(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEnv(t, d)
		e.loopbackWebhooks(d)
		vw := e.viewerWorld()
		owner := e.member("boss2@acme.test", apikit.RoleOwner)
		// Something for every form that writes: a tag to remove, a
		// lead to clear, webhooks (one switched off) with deliveries, a
		// key, a draft sequence, a preview to enrol from.
		cat, err := e.pl.Workspaces.Catalog(ctx, vw.owner)
		is.NoErr(err)
		_, err = e.pl.Leads.AddTags(ctx, vw.owner, vw.ann, []string{cat.Tags[0].ID})
		is.NoErr(err)
		_, err = e.pl.Leads.Suppress(ctx, vw.owner, vw.cy)
		is.NoErr(err)
		for range 2 {
			_, err = e.pl.Webhooks.Create(ctx, vw.owner, webhooks.CreateInput{URL: "https://127.0.0.1:9/hook", Events: []string{"*"}})
			is.NoErr(err)
		}
		_, err = d.NewRaw("UPDATE webhooks SET enabled = ? WHERE id IN (SELECT id FROM webhooks LIMIT 1)", false).Exec(ctx)
		is.NoErr(err)
		// A guard's stop, whose Resume button posts.
		_, err = d.NewRaw(`UPDATE senders SET health = 'warning', health_reasons = ?`,
			`[{"code":"high_bounce_rate","message":"Too many hard bounces.","remedy":"Clean the list, then resume."}]`).Exec(ctx)
		is.NoErr(err)
		_, err = e.pl.Inbox.SetIntent(ctx, vw.owner, vw.annThread, inbox.NotNow)
		is.NoErr(err)
		_, err = e.pl.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: vw.owner.WorkspaceID, Clients: vw.clients},
			[]sequences.Spec{{Name: "Draft", Client: "Globex", Senders: []string{"mail"}, Steps: []sequences.Step{
				{ID: "hi", Type: "email", Subject: "Hi", Body: "Hi"},
				{ID: "ab", Type: "email", Variants: []sequences.Variant{{ID: "a", Body: "A"}, {ID: "b", Body: "B"}}}}}})
		is.NoErr(err)
		draft, err := e.pl.Sequences.ByName(ctx, vw.owner.WorkspaceID, "Draft")
		is.NoErr(err)
		// A step's test with a pick, whose Undo button posts.
		_, err = e.pl.Sequences.Pick(ctx, vw.owner, draft.ID, "ab", sequences.PickInput{VariantID: "b"})
		is.NoErr(err)
		r := owner.post("/app/settings/keys", "/app/settings/keys", url.Values{"name": {"sweep"}, "role": {"member"}})
		is.True(r.code < 400)
		invite := e.invite("acme", "new@acme.test", apikit.RoleMember)
		ids := map[string]string{"/invite/{token}": invite}
		for p, v := range vw.ids {
			ids[p] = v[0]
		}

		fail := func(what string, r response) {
			t.Helper()
			if r.code >= 500 {
				t.Errorf("%s: %d %.300s", what, r.code, r.body)
			}
		}
		// The pages: every GET route (its {id} one of viewerWorld's),
		// then every console link on them (other ids, filters), a few
		// of each route.
		var pages []string
		for _, rt := range e.c.registered {
			method, path, _ := strings.Cut(rt.Pattern, " ")
			if method != http.MethodGet {
				continue
			}
			path = strings.TrimSuffix(path, "{$}")
			if !strings.Contains(path, "{") {
				pages = append(pages, "/app"+path)
				continue
			}
			id, ok := ids[path]
			if !ok {
				t.Errorf("%s: the sweep does not know what {id} to open; add it to viewerWorld", path)
				continue
			}
			if id == "" {
				id = apikit.NewID() // none of the owner's: the page's 404
			}
			pages = append(pages, "/app"+idSegment.ReplaceAllString(path, id))
		}
		pages = append(pages, "/app/sequences/"+draft.ID)
		var forms []sweepForm
		opened, perRoute := map[string]bool{}, map[string]int{}
		for i := 0; i < len(pages); i++ {
			open := pages[i]
			if opened[open] {
				continue
			}
			opened[open] = true
			u, _ := url.Parse(open)
			route := e.routeOf(http.MethodGet, u.Path)
			if perRoute[route] >= 4 {
				continue
			}
			perRoute[route]++
			page := owner.get(open)
			fail(open, page)
			if !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") {
				continue
			}
			forms = append(forms, formsOf(t, open, page.body)...)
			for _, m := range consoleLink.FindAllStringSubmatch(page.body, -1) {
				pages = append(pages, html.UnescapeString(m[1]))
			}
		}
		// The public pages, signed out; and the commit form a preview
		// shows.
		anon := e.browser()
		for _, p := range []string{"/app/signin", "/app/invite/" + invite} {
			forms = append(forms, formsOf(t, p, anon.get(p).body)...)
		}
		preview := "/app/sequences/" + draft.ID + "/enroll"
		r = owner.post(preview, "/app/sequences/"+draft.ID+"/preview", url.Values{"ids": {vw.ann}})
		is.Equal(r.code, http.StatusOK)
		forms = append(forms, formsOf(t, preview, r.body)...)

		// Every query parameter of every page opened, and one it does
		// not know, and a name no parameter can have: once per route.
		sweptParam := map[string]bool{}
		for open := range opened {
			u, _ := url.Parse(open)
			route := e.routeOf(http.MethodGet, u.Path)
			q := u.Query()
			for _, k := range append(slices.Sorted(maps.Keys(q)), "") {
				if sweptParam[route+" "+k] {
					continue
				}
				sweptParam[route+" "+k] = true
				for name, bad := range badValues {
					if k == "" {
						fail(open+" with "+name+" in an unknown parameter", owner.get(u.Path+"?zz="+url.QueryEscape(bad)))
						fail(open+" with "+name+" as a parameter's name", owner.get(u.Path+"?"+url.QueryEscape(bad)+"=1"))
						continue
					}
					v := url.Values{}
					for k2, vs := range q {
						v[k2] = vs
					}
					v.Set(k, bad)
					fail(open+" with "+name+" in "+k, owner.get(u.Path+"?"+v.Encode()))
				}
			}
		}
		// Every {id} of every route, as each route's first page has it.
		swept := map[string]bool{}
		reached := map[string]bool{}
		for _, f := range forms {
			action := f.action
			if action == "" {
				action = f.page
			}
			f.action = action
			route := e.routeOf(f.method, strings.SplitN(action, "?", 2)[0])
			reached[route] = true
			if !swept[route] && strings.Contains(route, "{") && !strings.HasSuffix(route, "/signout") {
				swept[route] = true
				_, pattern, _ := strings.Cut(route, " ")
				segs, real := strings.Split(pattern, "/"), strings.Split(strings.TrimPrefix(action, "/app"), "/")
				for i, seg := range segs {
					if !strings.HasPrefix(seg, "{") || i >= len(real) {
						continue
					}
					for what, bad := range badValues {
						p := slices.Clone(real)
						p[i] = url.PathEscape(bad)
						g := f
						g.action = "/app" + strings.Join(p, "/")
						fail(route+" with "+what+" as "+seg, owner.send(g, f.values))
					}
				}
			}
		}
		// Every field of every form, one at a time, and one the form
		// does not have.
		seen := map[string]bool{}
		for _, f := range forms {
			key := e.routeOf(f.method, strings.SplitN(f.action, "?", 2)[0]) + " " + strings.Join(slices.Sorted(slices.Values(f.names)), " ")
			if seen[key] || strings.HasSuffix(f.action, "/signout") {
				continue // signing out holds no field but the token, and would end the sweep's session
			}
			seen[key] = true
			b := owner
			if strings.HasPrefix(f.page, "/app/signin") || strings.HasPrefix(f.page, "/app/invite/") {
				b = anon
			}
			for _, name := range append(slices.Clone(f.names), "zz") {
				if name == csrfField {
					continue
				}
				for what, bad := range badValues {
					v := url.Values{}
					for k, vs := range f.values {
						v[k] = slices.Clone(vs)
					}
					v.Set(name, bad)
					fail(f.method+" "+f.action+" ("+f.page+") with "+what+" in "+name, b.send(f, v))
				}
			}
		}
		for _, rt := range e.c.registered {
			method, _, _ := strings.Cut(rt.Pattern, " ")
			if method == http.MethodPost && !reached[rt.Pattern] && rt.Pattern != "POST /test/flash" {
				t.Errorf("%s: no form on the console's pages posts to it; the sweep cannot reach it", rt.Pattern)
			}
		}
	})
}

// TestRefusedInputIsShownOnItsPage: a query parameter no field can hold
// leaves the page unfiltered, with the refusal above it (422); a download
// is refused rather than answered unfiltered; a form holding such a value
// writes nothing and its page shows the refusal (422), before sign-in as
// after.
func TestRefusedInputIsShownOnItsPage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEnv(t, d)
		w := e.work()
		boss := e.member("boss@acme.test", apikit.RoleManager)

		for _, q := range []string{"q", "email", "source"} {
			r := boss.get("/app/leads?stage_id=&" + q + "=a%00b")
			is.Equal(r.code, http.StatusUnprocessableEntity)
			is.True(strings.Contains(r.body, q+" holds text that cannot be stored"))
			is.True(strings.Contains(r.body, "the page is shown without it."))
			is.True(strings.Contains(r.body, "Ann Lee") && strings.Contains(r.body, "Cy Park")) // unfiltered
		}
		r := boss.get("/app/leads?q=" + strings.Repeat("x", maxQueryValue+1))
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "q holds text longer than 2000 characters"))
		r = boss.get("/app/leads?q=%FF")
		is.Equal(r.code, http.StatusUnprocessableEntity)
		r = boss.get("/app/leads/a%00b")
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "the address holds"))

		// A download cannot show the refusal: it is refused, not sent
		// unfiltered.
		r = boss.get("/app/reports/export?table=series&client_id=%00")
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.HasPrefix(r.header.Get("Content-Type"), "text/html"))
		is.Equal(r.header.Get("Content-Disposition"), "")
		is.True(strings.Contains(r.body, "client_id holds text that cannot be stored"))
		is.Equal(boss.get("/app/reports/export?table=series").code, http.StatusOK)

		// Forms: the page the form is on, with the refusal; nothing
		// written.
		r = boss.post("/app/sequences", "/app/sequences", url.Values{"name": {"Bad\x00name"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "name holds text that cannot be stored"))
		is.True(strings.Contains(r.body, `<h1>Sequences</h1>`))
		r = boss.post("/app/senders/new", "/app/senders", url.Values{"name": {"mail\x00"}, "channel": {"email"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "name holds text that cannot be stored"))
		r = boss.post("/app/leads/"+w.ann, "/app/leads/"+w.ann+"/tags", url.Values{"tag_id": {strings.Repeat("é", maxFormLine+1)}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "tag_id holds a line longer than 20000 characters"))
		is.True(strings.Contains(r.body, "Ann Lee")) // the lead's page
		seqs, err := e.pl.Sequences.List(ctx, w.owner, sequences.Filter{Limit: 100})
		is.NoErr(err)
		is.Equal(seqs.Total, 2)

		anon := e.browser()
		r = anon.post("/app/signin", "/app/signin", url.Values{"email": {"boss@acme.test\x00"}, "password": {testPassword}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "email holds text that cannot be stored"))
		is.True(strings.Contains(r.body, `id="password"`)) // the sign-in form
		is.Equal(anon.cookie(sessionCookie), "")
	})
}
