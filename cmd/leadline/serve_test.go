package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestServeAndShutDown starts the server on a free port, calls it, and
// stops it the way a SIGTERM does.
func TestServeAndShutDown(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- cmdServe(ctx, []string{"--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "s.db")}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	is.NoErr(err)
	go io.Copy(io.Discard, pr) //nolint:errcheck
	base := strings.Fields(strings.TrimPrefix(line, "leadline serving "))[0]
	base = strings.TrimSuffix(base, "/v1")

	res, err := http.Get(base + "/healthz")
	is.NoErr(err)
	is.Equal(res.StatusCode, 200)
	res.Body.Close()
	res, err = http.Get(base + "/v1/me")
	is.NoErr(err)
	is.Equal(res.StatusCode, 401)
	is.True(res.Header.Get("X-Request-Id") != "")
	res.Body.Close()

	cancel()
	select {
	case err := <-done:
		is.NoErr(err) // a clean shutdown
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}
