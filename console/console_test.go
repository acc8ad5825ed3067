package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

func TestEveryAnswerCarriesTheSecurityHeaders(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		anon := e.browser()
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		for _, c := range []struct {
			b    *browser
			path string
			code int
		}{
			{anon, "/app/signin", 200},
			{anon, "/app/leads", 303},
			{anon, "/app/nowhere", 404},
			{anon, "/app/assets/" + assetVersion + "/app.css", 200},
			{sdr, "/app/", 303},
			{sdr, "/app/leads", 200},
			{sdr, "/app/members", 403},
			{sdr, "/app/sequences", 200},
			{sdr, "/app/nowhere", 404},
		} {
			r := c.b.get(c.path)
			is.Equal(r.code, c.code) // status of c.path
			is.Equal(r.header.Get("Content-Security-Policy"), CSP)
			is.Equal(r.header.Get("X-Content-Type-Options"), "nosniff")
			is.Equal(r.header.Get("Referrer-Policy"), "no-referrer")
			if !strings.Contains(c.path, "/assets/") {
				is.Equal(r.header.Get("Cache-Control"), "no-store") // c.path
			}
		}
		is.True(strings.Contains(CSP, "default-src 'self'") && !strings.Contains(CSP, "unsafe"))
	})
}

func TestAssetsAreServedFromTheBinary(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	b := e.browser()
	for path, kind := range map[string]string{
		"app.css":                         "text/css",
		"app.js":                          "text/javascript",
		"vendor/htmx/htmx.min.js":         "text/javascript",
		"vendor/chartjs/chart.umd.min.js": "text/javascript",
	} {
		r := b.get("/app/assets/" + assetVersion + "/" + path)
		is.Equal(r.code, http.StatusOK)
		is.True(strings.HasPrefix(r.header.Get("Content-Type"), kind))
		is.Equal(r.header.Get("Cache-Control"), "public, max-age=31536000, immutable")
	}
	is.Equal(b.get("/app/assets/"+assetVersion+"/vendor/").code, http.StatusNotFound)
	is.Equal(b.get("/app/assets/"+assetVersion+"/nothing.js").code, http.StatusNotFound)
	// The page names the assets of this build, and the licences ship beside them.
	page := b.get("/app/signin")
	is.True(strings.Contains(page.body, "/app/assets/"+assetVersion+"/vendor/htmx/htmx.min.js"))
	is.True(strings.Contains(page.body, `"includeIndicatorStyles":false`))
	for _, f := range []string{"vendor/htmx/LICENSE", "vendor/chartjs/LICENSE.md"} {
		_, err := assetFS.ReadFile("assets/" + f)
		is.NoErr(err)
	}
}

// TestFlashShowsOnceOnTheNextPage: a handler's Flash shows on the page
// the redirect leads to, once, and only to the session that set it.
func TestFlashShowsOnceOnTheNextPage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	e.c.handle("POST /test/flash", apikit.RoleMember, func(rq *Request) error {
		rq.Flash(`Saved <"it">.`)
		rq.Redirect("/sequences")
		return nil
	})
	b := e.member("sdr@acme.test", apikit.RoleMember)
	r := b.post("/app/leads", "/app/test/flash", nil)
	is.Equal(r.code, http.StatusSeeOther)
	is.Equal(r.header.Get("Location"), "/app/sequences")
	forged := b.cookie(flashCookie)
	page := b.get("/app/sequences")
	is.True(strings.Contains(page.body, `<p class="flash" role="status">Saved &lt;&#34;it&#34;&gt;.</p>`))
	is.True(!strings.Contains(b.get("/app/sequences").body, "Saved")) // once
	// Another session does not show it.
	other := e.member("boss@acme.test", apikit.RoleManager)
	u, _ := url.Parse(e.srv.URL + "/app/")
	other.http.Jar.SetCookies(u, []*http.Cookie{{Name: flashCookie, Value: forged, Path: "/app/"}})
	is.True(!strings.Contains(other.get("/app/sequences").body, "Saved"))
}
