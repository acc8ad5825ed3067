package server

import (
	"os"
	"testing"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// TestWriteOpenAPI writes the OpenAPI document to the file that
// LEADLINE_OPENAPI_OUT names, for the CI step that lints it and builds
// clients from it (.ci/openapi). Without the variable it does nothing.
func TestWriteOpenAPI(t *testing.T) {
	out := os.Getenv("LEADLINE_OPENAPI_OUT")
	if out == "" {
		t.Skip("LEADLINE_OPENAPI_OUT is not set")
	}
	e := newEnv(t, dbtest.Open(t, db.SQLite), DefaultRateLimits)
	r := e.call("GET", "/v1/openapi.json", "", nil)
	if r.Status != 200 {
		t.Fatalf("GET /v1/openapi.json: %d", r.Status)
	}
	if err := os.WriteFile(out, r.Raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
