package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/console"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/oauthtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/platform"
)

// TestOAuthSetAndSendersConnect registers the workspace's Google app from
// the command line (the secret on stdin, stored sealed, never printed),
// then connects a mailbox: the command prints the link, the browser
// comes back to the server's callback, and the command finishes.
func TestOAuthSetAndSendersConnect(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dir := t.TempDir()
	dsn := filepath.Join(dir, "oauth.db")
	file := filepath.Join(dir, "setup.yaml")
	is.NoErr(os.WriteFile(file, []byte(`workspaces:
  - name: acme
    members: [{email: owner@acme.test, role: owner}]
    senders:
      - name: box
        channel: email
        address: box@acme.test
        transport: smtp
        smtp: {host: 127.0.0.1, port: 1, security: none, username: box@acme.test, auth: oauth, oauth: {provider: google}}
        imap: {host: 127.0.0.1, port: 1, security: none, username: box@acme.test, auth: oauth, oauth: {provider: google}}
`), 0o600))
	var out, errOut bytes.Buffer
	is.NoErr(run(ctx, []string{"apply", "--db", dsn, "-f", file}, &out, &errOut))
	as := oauthtest.Start(t, apikit.SystemClock{})
	as.Approve("box@acme.test")

	old := stdin
	t.Cleanup(func() { stdin = old })
	stdin = strings.NewReader(as.ClientSecret + "\n")
	out.Reset()
	err := run(ctx, []string{"oauth", "set", "--db", dsn, "--workspace", "acme", "--provider", "google", "--client-id", as.ClientID, "--secret-stdin",
		"--token-url", "http://example.com/token"}, &out, &errOut)
	is.True(err != nil && strings.Contains(err.Error(), "not an https URL")) // refused
	stdin = strings.NewReader(as.ClientSecret + "\n")
	is.NoErr(run(ctx, []string{"oauth", "set", "--db", dsn, "--workspace", "acme", "--provider", "google", "--client-id", as.ClientID, "--secret-stdin",
		"--auth-url", as.URL + "/authorize", "--token-url", as.URL + "/token", "--public-url", "https://leadline.example.com"}, &out, &errOut))
	is.True(strings.Contains(out.String(), "client secret stored sealed"))
	is.True(strings.Contains(out.String(), "https://leadline.example.com/app/oauth/callback"))
	raw, err := os.ReadFile(dsn)
	is.NoErr(err)
	is.True(!bytes.Contains(raw, []byte(as.ClientSecret)))

	// The server's console serves the callback.
	d, err := db.Open(ctx, dsn)
	is.NoErr(err)
	t.Cleanup(func() { d.Close() })
	key, err := secretKey(ctx, d, dsn, cliLogger(io.Discard))
	is.NoErr(err)
	is.True(!key.Equal(secret.Key{}))
	pl := platform.New(platform.Config{DB: d, SecretKey: key, Logger: cliLogger(io.Discard)})
	srv := httptest.NewServer(console.New(pl, console.Options{}))
	t.Cleanup(srv.Close)

	was := connectPoll
	connectPoll = 10 * time.Millisecond
	t.Cleanup(func() { connectPoll = was })
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"senders", "connect", "--db", dsn, "--workspace", "acme", "--sender", "box", "--provider", "google",
			"--public-url", srv.URL}, pw, io.Discard)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var link string
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), as.URL) {
			link = lines.Text()
			break
		}
	}
	is.True(link != "")
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(link)
	is.NoErr(err)
	res.Body.Close()
	back := res.Header.Get("Location")
	is.True(strings.HasPrefix(back, srv.URL+"/app/oauth/callback?"))
	res, err = http.Get(back) // a browser without a console session
	is.NoErr(err)
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusOK)
	is.True(strings.Contains(string(page), "the command line that printed the link has finished"))
	rest, _ := io.ReadAll(pr)
	is.NoErr(<-done)
	is.True(strings.Contains(string(rest), "Google account connected"))
}
