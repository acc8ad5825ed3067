package server

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// Metrics is what the server reports to: platform.Metrics, the platform's
// Prometheus registry (served apart from the API, by `--metrics-addr`).
type Metrics interface {
	// Request counts one answered request by operation, status and time.
	Request(operation string, status int, d time.Duration)
	// RateLimited counts one call refused because class's budget was spent.
	RateLimited(class string)
}

// opKey holds the request's operation name, which the huma middleware
// fills in for withMetrics.
type opKey struct{}

// withMetrics counts every request by operation and status: the OpenAPI
// operation id for API calls, the route's pattern otherwise ("unrouted"
// when nothing matched).
func (s *Server) withMetrics(next http.Handler) http.Handler {
	if s.metrics == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		op := new(string)
		r = r.WithContext(context.WithValue(r.Context(), opKey{}, op))
		mw := &statusWriter{ResponseWriter: w}
		defer func() {
			name := *op
			if name == "" {
				name = r.Pattern
			}
			if name == "" {
				name = "unrouted"
			}
			status := mw.status
			if status == 0 {
				status = http.StatusOK
			}
			s.metrics.Request(name, status, time.Since(start))
		}()
		next.ServeHTTP(mw, r)
	})
}

// nameOperation records the huma operation a request reached, for
// withMetrics.
func (s *Server) nameOperation(ctx huma.Context, next func(huma.Context)) {
	if op, ok := ctx.Context().Value(opKey{}).(*string); ok {
		if o := ctx.Operation(); o != nil {
			*op = o.OperationID
			if *op == "" {
				*op = o.Method + " " + o.Path
			}
		}
	}
	next(ctx)
}

// rateLimited counts a refusal of class's budget.
func (s *Server) rateLimited(class string) {
	if s.metrics != nil {
		s.metrics.RateLimited(class)
	}
}
