package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestServeMetrics: serve with --metrics-addr answers /metrics on its own
// address without a key, and counts the API's calls there.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	dir := t.TempDir()
	go func() {
		done <- cmdServe(ctx, []string{"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--runner=false",
			"--db", filepath.Join(dir, "s.db")}, pw, io.Discard)
		pw.Close()
	}()
	rd := bufio.NewReader(pr)
	var api, metrics string
	for api == "" || metrics == "" {
		line, err := rd.ReadString('\n')
		is.NoErr(err)
		if rest, ok := strings.CutPrefix(line, "leadline metrics at "); ok {
			metrics = strings.TrimSpace(rest)
		}
		if rest, ok := strings.CutPrefix(line, "leadline serving "); ok {
			api = strings.TrimSuffix(strings.Fields(rest)[0], "/v1")
		}
	}
	go io.Copy(io.Discard, rd) //nolint:errcheck

	res, err := http.Get(api + "/v1/me")
	is.NoErr(err)
	is.Equal(res.StatusCode, 401)
	res.Body.Close()
	res, err = http.Get(api + "/metrics") // not on the API's address
	is.NoErr(err)
	is.Equal(res.StatusCode, 404)
	res.Body.Close()

	res, err = http.Get(metrics)
	is.NoErr(err)
	is.Equal(res.StatusCode, 200)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	is.NoErr(err)
	is.True(strings.Contains(string(body), `leadline_http_requests_total{operation="get-me",status="401"} 1`))
	is.True(strings.Contains(string(body), "leadline_runner_leases_held 0"))

	_, err = runCmd("healthcheck", "--url", api+"/healthz")
	is.NoErr(err)
	_, err = runCmd("healthcheck", "--url", api+"/nowhere")
	is.True(err != nil)

	cancel()
	stopsLeavingNothing(t, done, dir)
}
