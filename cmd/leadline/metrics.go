package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/leadline/leadline/platform"
)

// metricsFlag adds --metrics-addr to fs.
func metricsFlag(fs *flag.FlagSet) *string {
	return fs.String("metrics-addr", envOr("LEADLINE_METRICS_ADDR", ""),
		"serve Prometheus metrics at http://ADDR/metrics, apart from the API and with no key (e.g. 127.0.0.1:9090; empty: none)")
}

// serveMetrics serves pl's metrics on addr ("": nothing) until ctx ends;
// the returned function waits until the server and its requests have
// ended.
func serveMetrics(ctx context.Context, addr string, pl *platform.Platform, stdout io.Writer, logger *slog.Logger) (func(), error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := listen(addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", pl.Metrics.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics: serve", "error", err)
		}
	})
	// Serve returns as soon as Shutdown begins; Shutdown returns once the
	// requests under way have ended.
	wg.Go(func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	})
	fmt.Fprintf(stdout, "leadline metrics at http://%s/metrics\n", ln.Addr())
	return wg.Wait, nil
}
