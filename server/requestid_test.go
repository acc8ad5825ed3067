package server

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// TestRequestIDs: every answer carries X-Request-Id, the caller's when it
// is 1 to 200 printable ASCII characters and a generated one otherwise;
// error envelopes repeat it as request_id, and the request log has it.
func TestRequestIDs(t *testing.T) {
	e := newEnv(t, dbtest.Open(t, db.SQLite), DefaultRateLimits)
	is := is.New(t)

	mine := "client-42 retry/1"
	r := e.call("GET", "/v1/me", "member", nil, "X-Request-Id", mine)
	is.Equal(r.Status, 200)
	is.Equal(r.Header.Get("X-Request-Id"), mine)

	r = e.call("GET", "/v1/leads/not-an-id", "member", nil, "X-Request-Id", mine)
	assertEnvelope(t, r, 422, "E_PAYLOAD_INVALID")
	is.Equal(r.Body["error"].(map[string]any)["request_id"], mine)

	for name, bad := range map[string]string{
		"too long":  strings.Repeat("a", maxRequestID+1),
		"non-ASCII": "café",
		"control":   "a\tb",
	} {
		r = e.call("GET", "/v1/me", "", nil, "X-Request-Id", bad)
		assertEnvelope(t, r, 401, "E_UNAUTHORIZED")
		if got := r.Header.Get("X-Request-Id"); got == bad || got == "" {
			t.Errorf("%s: X-Request-Id %q kept", name, got)
		}
	}
	is.Equal(e.call("GET", "/v1/me", "member", nil, "X-Request-Id", strings.Repeat("b", maxRequestID)).Header.Get("X-Request-Id"),
		strings.Repeat("b", maxRequestID))

	// Outside huma too: an unknown route, and the log line.
	var logs bytes.Buffer
	e.srv.logger = slog.New(slog.NewJSONHandler(&logs, nil))
	req := httptest.NewRequest("GET", "/v1/nowhere", nil)
	req.Header.Set("X-Request-Id", "trace-7")
	rec := httptest.NewRecorder()
	e.srv.Handler().ServeHTTP(rec, req)
	is.Equal(rec.Code, 404)
	is.Equal(rec.Header().Get("X-Request-Id"), "trace-7")
	is.True(strings.Contains(rec.Body.String(), `"request_id":"trace-7"`))
	is.True(strings.Contains(logs.String(), `"request_id":"trace-7"`))
}
