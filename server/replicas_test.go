package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// TestReplicasShareLimitsAndIdempotency runs two servers, each with its own
// connection pool, on one database: budgets and Idempotency-Keys hold
// across them as they do within one.
func TestReplicasShareLimitsAndIdempotency(t *testing.T) {
	for _, eng := range dbtest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			is := is.New(t)
			dsn := dbtest.NewDSN(t, eng)
			open := func() *db.DB {
				d, err := db.Open(context.Background(), dsn)
				is.NoErr(err)
				t.Cleanup(func() { d.Close() })
				_, err = d.Migrate(context.Background())
				is.NoErr(err)
				return d
			}
			limits := RateLimits{Read: 30, Write: 8, Spend: 5}
			e := newEnv(t, open(), limits)
			replica := New(Config{DB: open(), Clock: e.clock, Limits: limits, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Handler()
			handlers := []http.Handler{e.handler, replica}

			send := func(i int, method, path, body string, headers ...string) *httptest.ResponseRecorder {
				req := httptest.NewRequest(method, path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+e.keys["member"])
				req.Header.Set("Content-Type", "application/json")
				for j := 0; j+1 < len(headers); j += 2 {
					req.Header.Set(headers[j], headers[j+1])
				}
				rec := httptest.NewRecorder()
				handlers[i%2].ServeHTTP(rec, req)
				return rec
			}
			var mu sync.Mutex
			codes := map[int]int{}
			var wg sync.WaitGroup
			for i := 0; i < 40; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rec := send(i, "GET", "/v1/me", "")
					mu.Lock()
					codes[rec.Code]++
					mu.Unlock()
				}()
			}
			wg.Wait()
			is.Equal(codes[200], 30) // one budget across both replicas
			is.Equal(codes[429], 10)

			created := 0
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rec := send(i, "POST", "/v1/leads", `{"linkedin_id":"replica-1"}`, "Idempotency-Key", "rep")
					mu.Lock()
					if rec.Code == 201 && rec.Header().Get("Idempotent-Replayed") == "" {
						created++
					}
					mu.Unlock()
				}()
			}
			wg.Wait()
			is.Equal(created, 1) // one effect across both replicas
		})
	}
}
