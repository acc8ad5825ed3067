// Package benchkit holds what the load scripts in bench/ share: opening a
// database, timing GET routes through the HTTP stack, and percentiles.
package benchkit

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"time"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
)

// Check stops the script on an error.
func Check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// Open opens and migrates the database at dsn.
func Open(ctx context.Context, dsn string) *db.DB {
	d, err := db.Open(ctx, dsn)
	Check(err)
	_, err = d.Migrate(ctx)
	Check(err)
	return d
}

// Key returns a new random secret key: the scripts seal secrets and
// stored answers as a server does.
func Key() secret.Key {
	k, _, err := secret.Generate()
	Check(err)
	return k
}

// Timed sends warmup and then calls GET requests for path(i) with key
// through h, requires 200, and returns the timed calls' p50 and p95.
func Timed(h http.Handler, key string, warmup, calls int, path func(i int) string) string {
	var ds []time.Duration
	for i := range warmup + calls {
		req := httptest.NewRequest(http.MethodGet, path(i), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		t0 := time.Now()
		h.ServeHTTP(rec, req)
		el := time.Since(t0)
		if rec.Code != http.StatusOK {
			log.Fatalf("GET %s: %d %s", path(i), rec.Code, rec.Body.String())
		}
		if i >= warmup {
			ds = append(ds, el)
		}
	}
	return fmt.Sprintf("p50 %s, p95 %s", Pct(ds, 50), Pct(ds, 95))
}

// Pct is the p-th percentile of ds, rounded to 0.1 ms, or "n/a" when
// nothing was measured.
func Pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "n/a"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(0, len(s)*p/100-1)].Round(100 * time.Microsecond).String()
}
