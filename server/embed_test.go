package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// A program that serves its own huma API beside leadline's keeps its own
// error format, and leadline keeps its envelope.
func TestEmbeddingKeepsTheHostsErrors(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite), DefaultRateLimits)

	mux := http.NewServeMux()
	host := humago.New(mux, huma.DefaultConfig("host", "1.0.0"))
	type in struct {
		N int `query:"n" minimum:"1"`
	}
	huma.Register(host, huma.Operation{OperationID: "host-op", Method: http.MethodGet, Path: "/host"},
		func(ctx context.Context, _ *in) (*struct{}, error) { return nil, huma.Error404NotFound("nothing here") })
	mux.Handle("/v1/", e.handler)

	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+e.keys["manager"])
		mux.ServeHTTP(rec, req)
		return rec
	}
	// huma's own validation error, in huma's format.
	r := get("/host?n=0")
	is.Equal(r.Code, http.StatusUnprocessableEntity)
	is.True(strings.HasPrefix(r.Header().Get("Content-Type"), "application/problem+json"))
	is.True(strings.Contains(r.Body.String(), `"title":"Unprocessable Entity"`))
	// An error the host's handler returns.
	r = get("/host?n=1")
	is.Equal(r.Code, http.StatusNotFound)
	is.True(strings.Contains(r.Body.String(), `"detail":"nothing here"`))

	// leadline's validation error, in leadline's envelope.
	r = get("/v1/leads?limit=0")
	is.Equal(r.Code, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.Body.String(), `"code":"E_PAYLOAD_INVALID"`))
	is.True(!strings.Contains(r.Body.String(), `"title"`))

	// The host's document describes huma's errors; leadline's its own.
	is.True(host.OpenAPI().Components.Schemas.Map()["ErrorModel"] != nil)
	is.True(e.srv.API().OpenAPI().Components.Schemas.Map()["ErrorModel"] == nil)
}
