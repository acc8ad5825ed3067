package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

var t0 = time.Date(2026, 11, 2, 9, 15, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// acmeSetup is the workspace every server test starts from.
func acmeSetup() workspace.Setup {
	return workspace.Setup{Workspaces: []workspace.WorkspaceSpec{
		{
			Name: "acme", Timezone: "Europe/Berlin", Plan: "pro",
			Members: []workspace.MemberSpec{
				{Email: "owner@acme.test", Role: apikit.RoleOwner},
				{Email: "boss@acme.test", Role: apikit.RoleManager},
				{Email: "max@acme.test", Role: apikit.RoleMember},
			},
			Clients: []string{"Globex", "Initech", "Hooli"}, Stages: []string{"New", "Contacted", "Qualified"},
			Tags: []string{"vip", "event-2026", "cold"}, Lists: []string{"Berlin CTOs", "Paris CFOs"},
			Blacklist: workspace.BlacklistSpec{Companies: []string{"Umbrella"}, Domains: []string{"umbrella.test"}, LinkedIn: []string{"evil-corp-ceo"}},
		},
		{
			Name: "other", Timezone: "UTC",
			Members: []workspace.MemberSpec{{Email: "owner@other.test", Role: apikit.RoleOwner}},
			Clients: []string{"Globex"}, Tags: []string{"vip"},
		},
	}}
}

// env is a running API on one engine with a key per role.
type env struct {
	t       testing.TB
	db      *db.DB
	srv     *Server
	pl      *platform.Platform
	handler http.Handler
	clock   *apikit.FakeClock
	ws      *workspace.Service
	keys    map[string]string // manager, member, viewer, globex (member scoped to Globex), globexViewer, twoClients, other
	ids     map[string]string // names of clients, stages, tags, lists -> ids
}

func newEnv(t testing.TB, d *db.DB, limits RateLimits) *env {
	t.Helper()
	clock := apikit.NewFakeClock(t0)
	logger := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pl := platform.New(platform.Config{DB: d, Clock: clock, Logger: logger,
		Webhooks: webhooks.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, SecretKey: secret.TestKey()})
	srv := New(Config{Platform: pl, Logger: logger, Limits: limits})
	e := &env{t: t, db: d, srv: srv, pl: pl, handler: srv.Handler(), clock: clock, ws: srv.workspaces, keys: map[string]string{}, ids: map[string]string{}}
	ctx := context.Background()
	if _, err := e.ws.Apply(ctx, acmeSetup()); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]workspace.KeyInput{
		"manager":      {Workspace: "acme", MemberEmail: "boss@acme.test", Role: apikit.RoleManager},
		"member":       {Workspace: "acme", MemberEmail: "owner@acme.test", Role: apikit.RoleMember},
		"viewer":       {Workspace: "acme", MemberEmail: "owner@acme.test", Role: apikit.RoleClientViewer},
		"globex":       {Workspace: "acme", MemberEmail: "owner@acme.test", Role: apikit.RoleMember, Clients: []string{"Globex"}},
		"globexViewer": {Workspace: "acme", MemberEmail: "owner@acme.test", Role: apikit.RoleClientViewer, Clients: []string{"Globex"}},
		"twoClients":   {Workspace: "acme", MemberEmail: "owner@acme.test", Role: apikit.RoleMember, Clients: []string{"Globex", "Initech"}},
		"other":        {Workspace: "other", MemberEmail: "owner@other.test", Role: apikit.RoleManager},
	} {
		_, secret, err := e.ws.CreateKey(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		e.keys[name] = secret
	}
	p, err := e.ws.Authenticate(ctx, e.keys["manager"])
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.ws.Catalog(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range [][]workspace.Named{c.Clients, c.Stages, c.Tags, c.Lists} {
		for _, n := range group {
			e.ids[n.Name] = n.ID
		}
	}
	return e
}

// eachEnv runs fn on every engine with a fresh env.
func eachEnv(t *testing.T, limits RateLimits, fn func(t *testing.T, e *env)) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		fn(t, newEnv(t, d, limits))
	})
}

type resp struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// data returns the body's data object.
func (r *resp) data() map[string]any {
	m, _ := r.Body["data"].(map[string]any)
	return m
}

// code returns the error code of an error answer.
func (r *resp) code() string {
	e, _ := r.Body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// call sends a request as key (a name in e.keys, or a raw secret when it is
// not one). body may be nil, a string (sent as is) or anything JSON.
func (e *env) call(method, path, key string, body any, headers ...string) *resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		secret := key
		if s, ok := e.keys[key]; ok {
			secret = s
		}
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	checkContract(e.t, e.handler, req, rec)
	r := &resp{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
	_ = json.Unmarshal(r.Raw, &r.Body)
	return r
}

// assertEnvelope checks that r is an error answer in the spec's envelope
// with the given status and code.
func assertEnvelope(t *testing.T, r *resp, status int, code string) {
	t.Helper()
	if r.Status != status || r.code() != code {
		raw := r.Raw
		if len(raw) > 600 {
			raw = append(raw[:600:600], "…"...)
		}
		t.Fatalf("want %d %s, got %d %s", status, code, r.Status, raw)
	}
	e := r.Body["error"].(map[string]any)
	if len(r.Body) != 1 || len(e) != 4 || e["message"] == "" || e["remedy"] == "" {
		t.Fatalf("not the error envelope: %s", r.Raw)
	}
	if id := r.Header.Get("X-Request-Id"); e["request_id"] != id {
		t.Fatalf("the envelope's request_id %v is not the answer's X-Request-Id %q", e["request_id"], id)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("content type %q", r.Header.Get("Content-Type"))
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Fatal("no X-Request-Id")
	}
}

// testLog shows the server's warnings and errors in the test's output.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// runner returns a runner that sends through ts, the transports members'
// replies go through too.
func (e *env) runner(ts map[string]senders.Transport) *engine.Runner {
	e.pl.UseTransports(ts)
	return e.pl.Runner()
}
