// Package apitest starts leadline's HTTP API in the test's process, on a
// loopback port, with a workspace, senders on the sandbox network and a
// sequence, for the client's and the examples' tests.
package apitest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

// T0 is when every test's clock starts: a Monday morning in Berlin.
var T0 = time.Date(2026, 11, 2, 9, 15, 0, 0, time.UTC)

// Setup is the workspace every test starts from.
const Setup = `
workspaces:
  - name: acme
    timezone: Europe/Berlin
    plan: pro
    members:
      - {email: owner@acme.test, role: owner}
      - {email: sdr@acme.test, role: member}
    clients: [Globex, Initech]
    stages: [New, Contacted]
    tags: [vip, cold]
    lists: [Berlin CTOs]
    senders:
      - {name: anna, channel: linkedin, client: Globex, caps: {invite: 25, profile_view: 60, message: 60}}
      - {name: globex-mail, channel: email, client: Globex, address: hello@globex.test}
    sequences:
      - name: Globex CTOs
        client: Globex
        senders: [anna, globex-mail]
        steps:
          - {id: visit, type: profile_view}
          - {id: invite, type: invite, note_fallback: without_note, note: "Hi {{first_name}}!"}
`

// Env is a running API.
type Env struct {
	URL      string
	Key      string // a manager's key of acme
	Clock    *apikit.FakeClock
	Platform *platform.Platform
	Server   *server.Server
	HTTP     *httptest.Server
}

// Start serves the API on d with limits (the zero value: the defaults)
// until the test ends.
func Start(t testing.TB, d *db.DB, limits server.RateLimits) *Env {
	t.Helper()
	ctx := context.Background()
	clock := apikit.NewFakeClock(T0)
	logger := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	f, err := setup.Decode(strings.NewReader(Setup))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Apply(ctx, d, clock, secret.TestKey(), f); err != nil {
		t.Fatal(err)
	}
	pl := platform.New(platform.Config{DB: d, Clock: clock, Logger: logger, SecretKey: secret.TestKey(),
		Webhooks: webhooks.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
	pl.UseTransports(pl.Transports(platform.Outside{Seed: 1}))
	srv := server.New(server.Config{Platform: pl, Logger: logger, Limits: limits})
	_, key, err := pl.Workspaces.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "owner@acme.test", Role: apikit.RoleManager})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &Env{URL: hs.URL, Key: key, Clock: clock, Platform: pl, Server: srv, HTTP: hs}
}

// testLog shows the server's warnings in the test's output.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
