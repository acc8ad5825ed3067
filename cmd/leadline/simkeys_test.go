package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/setup"
)

// TestSimulatePrintsAManagerKey: the database simulate makes can be read
// at once with the manager key it prints; running it again replaces the
// key, and a workspace without an owner or manager gets the command that
// makes one.
func TestSimulatePrintsAManagerKey(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "sim.db")
	d, err := openDB(ctx, dsn)
	is.NoErr(err)
	defer d.Close()
	f, err := setup.Decode(strings.NewReader(setupYAML + `  - name: solo
    members: [{email: sdr@solo.test, role: member}]
`))
	is.NoErr(err)
	_, err = setup.Apply(ctx, d, apikit.SystemClock{}, secret.TestKey(), f)
	is.NoErr(err)

	keyOf := func() (string, string) {
		t.Helper()
		var out bytes.Buffer
		is.NoErr(simulateKeys(ctx, d, f, dsn, &out))
		m := regexp.MustCompile(`Manager key of workspace acme \(acting as owner@acme.test[^)]*\): (ll_\S+)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no manager key in:\n%s", out.String())
		}
		return m[1], out.String()
	}
	status := func(key string) int {
		req := httptest.NewRequest(http.MethodGet, "/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		server.New(server.Config{DB: d, Logger: slog.New(slog.DiscardHandler)}).Handler().ServeHTTP(rec, req)
		return rec.Code
	}
	first, out := keyOf()
	is.Equal(status(first), 200)
	is.True(strings.Contains(out, "Workspace solo has no active owner or manager"))
	is.True(strings.Contains(out, "leadline keys create --db "+dsn+" --workspace solo --member EMAIL --role manager"))
	second, _ := keyOf()
	is.Equal(status(second), 200)
	is.Equal(status(first), 401) // replaced
	var n int
	is.NoErr(d.NewSelect().Table("api_keys").ColumnExpr("count(*)").Where("revoked_at IS NULL").Scan(ctx, &n))
	is.Equal(n, 1)
}
