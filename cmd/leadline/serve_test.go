package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/db"
)

// TestServeAndShutDown starts the server on a free port, calls it, and
// stops it the way a SIGTERM does.
func TestServeAndShutDown(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	dir := t.TempDir()
	go func() {
		done <- cmdServe(ctx, []string{"--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "s.db")}, pw, io.Discard)
		pw.Close()
	}()
	base := servingAt(t, pr)

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
	stopsLeavingNothing(t, done, dir) // a clean shutdown
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

// TestServeStopsEverythingBeforeReturning: once serve returns after a
// shutdown, nothing it started runs or writes any more: none of its
// goroutines is left, and the directory of its database can be removed
// and stays removed. Serve is stopped again and again, right after it
// starts (while the runner, the webhook worker and the mail reader run
// their first tick) and after a call. Not parallel: no other test's serve
// runs meanwhile, so any such goroutine left is this one's.
func TestServeStopsEverythingBeforeReturning(t *testing.T) {
	for i := range 6 {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- cmdServe(ctx, []string{"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--tick", "1ms",
				"--db", filepath.Join(dir, "s.db")}, pw, io.Discard)
			pw.Close()
		}()
		base := servingAt(t, pr)
		if i%2 == 1 {
			res, err := http.Get(base + "/v1/me")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		}
		cancel()
		stopsLeavingNothing(t, done, dir)
		noneLeft(t)
	}
}

// TestWorkStopsEverythingBeforeReturning: the same for work.
func TestWorkStopsEverythingBeforeReturning(t *testing.T) {
	for range 4 {
		dir := t.TempDir()
		dsn := filepath.Join(dir, "w.db")
		if _, err := runCmd("migrate", "--db", dsn); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- cmdWork(ctx, []string{"--metrics-addr", "127.0.0.1:0", "--tick", "1ms", "--db", dsn}, pw, io.Discard)
			pw.Close()
		}()
		outputLine(t, pr, "leadline runner and webhook worker working")
		cancel()
		stopsLeavingNothing(t, done, dir)
		noneLeft(t)
	}
}

// servingAt reads serve's output up to the line that says where it
// serves, and returns that base URL; the rest of the output is dropped.
func servingAt(t *testing.T, out io.Reader) string {
	t.Helper()
	return strings.TrimSuffix(strings.Fields(outputLine(t, out, "leadline serving "))[0], "/v1")
}

// outputLine reads a command's output up to the first line that starts
// with prefix, and returns the rest of that line; the rest of the output
// is dropped.
func outputLine(t *testing.T, out io.Reader, prefix string) string {
	t.Helper()
	rd := bufio.NewReader(out)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			go io.Copy(io.Discard, rd) //nolint:errcheck
			return rest
		}
	}
}

// stopsLeavingNothing waits for a command stopped by its context to
// return cleanly, then checks that nothing writes into dir any more: dir
// can be removed, and nothing brings it back.
func stopsLeavingNothing(t *testing.T, done <-chan error, dir string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the command did not stop")
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatalf("something still writes in the database's directory: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the database's directory came back after it was removed: %v", err)
	}
}

// noneLeft fails if a goroutine that serve or work starts still runs.
func noneLeft(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for _, f := range []string{"webhooks.(*Worker).Run", "engine.(*Runner).Run", "email.(*Reader).Run", "main.runReaders", "platform.(*Platform).RunReaders",
		"main.sweep", "main.serveMetrics", "net/http.(*Server).Serve", "net/http.(*Server).Shutdown", "leads.(*Service).StartImport"} {
		if strings.Contains(stacks, f) {
			t.Fatalf("%s still runs after the command returned:\n%s", f, stacks)
		}
	}
}

// TestServeWaitsForImports: a CSV import taken just before a shutdown
// ends before serve returns, every row written and the job recorded as
// succeeded, instead of running on into a closed database. Not parallel,
// for noneLeft.
func TestServeWaitsForImports(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "i.db")
	setup := filepath.Join(dir, "setup.yaml")
	is.NoErr(os.WriteFile(setup, []byte(setupYAML), 0o600))
	_, err := runCmd("apply", "--db", dsn, "-f", setup)
	is.NoErr(err)
	out, err := runCmd("keys", "create", "--db", dsn, "--workspace", "acme", "--member", "owner@acme.test", "--role", "manager", "--json")
	is.NoErr(err)
	var k struct{ Key string }
	is.NoErr(json.Unmarshal([]byte(out), &k))

	base, stop := serving(t, "--runner=false", "--db", dsn)
	const rows = 3000
	var csv strings.Builder
	csv.WriteString("email,name\n")
	for i := range rows {
		fmt.Fprintf(&csv, "lead%d@import.test,Lead %d\n", i, i)
	}
	req, err := http.NewRequest(http.MethodPost, base+"/v1/leads/import", strings.NewReader(csv.String()))
	is.NoErr(err)
	req.Header.Set("Authorization", "Bearer "+k.Key)
	req.Header.Set("Content-Type", "text/csv")
	res, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	var job struct {
		Data struct{ ID, Status string } `json:"data"`
	}
	is.NoErr(json.NewDecoder(res.Body).Decode(&job))
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusAccepted)
	is.NoErr(stop()) // the shutdown, while the import runs
	noneLeft(t)

	d, err := db.Open(context.Background(), dsn)
	is.NoErr(err)
	defer d.Close()
	var status string
	var created int
	is.NoErr(d.NewRaw("SELECT status, created FROM imports WHERE id = ?", job.Data.ID).Scan(context.Background(), &status, &created))
	is.Equal(status, "succeeded")
	is.Equal(created, rows)
	var n int
	is.NoErr(d.NewRaw("SELECT count(*) FROM leads WHERE email_work LIKE '%@import.test'").Scan(context.Background(), &n))
	is.Equal(n, rows)
}

// serving runs serve with args on a free loopback port until the test
// ends, and returns its base URL and a function that shuts it down and
// returns serve's error (called again, it returns nil).
func serving(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- cmdServe(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), pw, io.Discard)
		pw.Close()
	}()
	base := servingAt(t, pr)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	var once sync.Once
	stop := func() (err error) {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				err = errors.New("serve did not stop")
			}
		})
		return err
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	return base, stop
}
