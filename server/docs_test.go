package server

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// TestDocsOffline: /v1/docs loads its script and styles from this server
// only, under a policy that allows nothing else, and they are served.
func TestDocsOffline(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite), DefaultRateLimits)
	r := e.call("GET", "/v1/docs", "", nil)
	is.Equal(r.Status, 200)
	page := string(r.Raw)
	is.True(!strings.Contains(page, "://"))
	csp := r.Header.Get("Content-Security-Policy")
	is.True(strings.HasPrefix(csp, "default-src 'self';"))
	is.True(!strings.Contains(csp, "http"))
	prefix := "/v1/docs/assets/elements-" + elementsVersion + "/"
	for file, ctype := range map[string]string{"web-components.min.js": "text/javascript", "styles.min.css": "text/css"} {
		is.True(strings.Contains(page, prefix+file))
		a := e.call("GET", prefix+file, "", nil)
		is.Equal(a.Status, 200)
		is.True(strings.HasPrefix(a.Header.Get("Content-Type"), ctype))
		is.True(len(a.Raw) > 100_000)
	}
	is.Equal(e.call("GET", prefix+"missing.js", "", nil).Status, 404)
	is.Equal(e.call("GET", "/v1/openapi.json", "", nil).Status, 200) // what the page reads
}
