package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/console"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/platform"
)

// TestMembersInvite prints an invite link on the public URL, limited to a
// client as keys create --client is, whose page the console serves.
func TestMembersInvite(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "l.db")
	setup := filepath.Join(dir, "setup.yaml")
	is.NoErr(os.WriteFile(setup, []byte(setupYAML), 0o600))
	_, err := runCmd("apply", "--db", dbPath, "-f", setup)
	is.NoErr(err)

	_, err = runCmd("members", "invite", "--db", dbPath, "--workspace", "acme", "--email", "vera@globex.test", "--role", "client_viewer", "--client", "Nope")
	is.True(err != nil && strings.Contains(describe(err), `Client "Nope" of workspace "acme" was not found.`))
	_, err = runCmd("members", "invite", "--db", dbPath, "--workspace", "acme", "--email", "vera@globex.test")
	is.True(err != nil && strings.Contains(err.Error(), "--role are required"))
	_, err = runCmd("members", "invite", "--db", dbPath, "--workspace", "acme", "--email", "v@globex.test", "--role", "member", "--public-url", "ftp://x")
	is.True(err != nil && strings.Contains(err.Error(), "--public-url"))

	out, err := runCmd("members", "invite", "--db", dbPath, "--workspace", "acme", "--email", "vera@globex.test", "--role", "client_viewer",
		"--client", "Globex", "--public-url", "https://leadline.example.com/")
	is.NoErr(err)
	is.True(strings.Contains(out, "vera@globex.test (client_viewer of acme, limited to [Globex])"))
	m := regexp.MustCompile(`https://leadline\.example\.com(/app/invite/[A-Za-z0-9_-]{43})\n`).FindStringSubmatch(out)
	is.True(m != nil)

	ctx := context.Background()
	d, err := db.Open(ctx, dbPath)
	is.NoErr(err)
	defer d.Close()
	api := http.NotFoundHandler()
	h := withConsole(api, console.New(platform.New(platform.Config{DB: d}), console.Options{}))
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}
	page := get(m[1])
	is.Equal(page.Code, http.StatusOK)
	is.True(strings.Contains(page.Body.String(), "vera@globex.test"))
	is.True(strings.Contains(page.Body.String(), "Globex"))
	is.Equal(get("/app").Code, http.StatusMovedPermanently)
	is.Equal(get("/app/leads").Code, http.StatusSeeOther) // to sign in
	is.Equal(get("/v1/me").Code, http.StatusNotFound)     // the API's
}
