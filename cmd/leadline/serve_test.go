package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestServeAndShutDown starts the server on a free port, calls it, and
// stops it the way a SIGTERM does.
func TestServeAndShutDown(t *testing.T) {
	t.Parallel()
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
	// The console, at /app/: a visitor is sent to sign in.
	res, err = http.Get(base + "/app/")
	is.NoErr(err)
	is.Equal(res.StatusCode, 200)
	is.Equal(res.Request.URL.Path, "/app/signin")
	is.True(strings.HasPrefix(res.Header.Get("Content-Security-Policy"), "default-src 'self'"))
	res.Body.Close()

	cancel()
	select {
	case err := <-done:
		is.NoErr(err) // a clean shutdown
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// TestServeOnABusyPort: a port another program holds is refused with how
// to pick another address.
func TestServeOnABusyPort(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	defer ln.Close()
	err = cmdServe(context.Background(), []string{"--addr", ln.Addr().String(), "--runner=false", "--db", filepath.Join(t.TempDir(), "s.db")}, io.Discard, io.Discard)
	is.True(err != nil)
	msg := describe(err)
	is.True(strings.Contains(msg, "cannot listen on "+ln.Addr().String()))
	is.True(strings.Contains(msg, "another program already uses the port"))
	is.True(strings.Contains(msg, "--addr"))
}

// TestFlagHelpNamesNoFalseArgument: in every command's --help, a flag is
// followed by the kind of value it takes, or by nothing for a switch;
// usage text in backquotes would be printed as the flag's argument.
func TestFlagHelpNamesNoFalseArgument(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	flagLine := regexp.MustCompile(`^  -(\S+)(?: (.*))?$`)
	kinds := map[string]bool{"": true, "string": true, "int": true, "int64": true, "uint": true, "uint64": true, "float": true, "duration": true, "value": true}
	for _, args := range [][]string{{"serve"}, {"work"}, {"migrate"}, {"apply"}, {"demo"}, {"simulate"}, {"events", "export"},
		{"reports", "rebuild"}, {"keys", "create"}, {"keys", "list"}, {"keys", "revoke"}, {"members", "invite"}} {
		out, err := runCmd(append(args, "--help")...)
		is.NoErr(err)
		for _, line := range strings.Split(out, "\n") {
			if m := flagLine.FindStringSubmatch(line); m != nil && !kinds[m[2]] {
				t.Errorf("%s --help: flag -%s reads as if it took %q", strings.Join(args, " "), m[1], m[2])
			}
		}
	}
	out, err := runCmd("serve", "--help")
	is.NoErr(err)
	is.True(strings.Contains(out, "\n  -runner\n"))
}
