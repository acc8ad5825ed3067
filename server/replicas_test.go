package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/workspace"
)

// TestReplicasShareLimitsAndIdempotency runs two servers, each with its own
// connection pool, on one database: budgets and Idempotency-Keys hold
// across them as they do within one.
func TestReplicasShareLimitsAndIdempotency(t *testing.T) {
	t.Parallel()
	for _, eng := range dbtest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			is := is.New(t)
			dsn := dbtest.NewDSN(t, eng)
			open := func() *db.DB {
				d, err := db.Open(context.Background(), dsn)
				is.NoErr(err)
				t.Cleanup(func() { d.Close() })
				_, err = d.Migrate(context.Background())
				is.NoErr(err)
				return d
			}
			limits := RateLimits{Read: 30, Write: 8, Spend: 5}
			e := newEnv(t, open(), limits)
			replica := New(Config{DB: open(), Clock: e.clock, Limits: limits, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				SecretKey: secret.TestKey()}).Handler()
			handlers := []http.Handler{e.handler, replica}

			send := func(i int, method, path, body string, headers ...string) *httptest.ResponseRecorder {
				req := httptest.NewRequest(method, path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+e.keys["member"])
				req.Header.Set("Content-Type", "application/json")
				for j := 0; j+1 < len(headers); j += 2 {
					req.Header.Set(headers[j], headers[j+1])
				}
				rec := httptest.NewRecorder()
				handlers[i%2].ServeHTTP(rec, req)
				return rec
			}
			var mu sync.Mutex
			codes := map[int]int{}
			var wg sync.WaitGroup
			for i := 0; i < 40; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rec := send(i, "GET", "/v1/me", "")
					mu.Lock()
					codes[rec.Code]++
					mu.Unlock()
				}()
			}
			wg.Wait()
			is.Equal(codes[200], 30) // one budget across both replicas
			is.Equal(codes[429], 10)

			created := 0
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rec := send(i, "POST", "/v1/leads", `{"linkedin_id":"replica-1"}`, "Idempotency-Key", "rep")
					mu.Lock()
					if rec.Code == 201 && rec.Header().Get("Idempotent-Replayed") == "" {
						created++
					}
					mu.Unlock()
				}()
			}
			wg.Wait()
			is.Equal(created, 1) // one effect across both replicas
		})
	}
}

// TestReplicasSeeKeyChangesAtOnce changes keys, members and the workspace
// through another connection pool (another replica, or a command) after a
// server has authenticated reads with them: the server's next read sees
// each change, and a read refused for it counts against no budget.
// Postgres servers remember the keys of reads; SQLite ones read every time.
func TestReplicasSeeKeyChangesAtOnce(t *testing.T) {
	t.Parallel()
	for _, eng := range dbtest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			dsn := dbtest.NewDSN(t, eng)
			open := func() *db.DB {
				d, err := db.Open(ctx, dsn)
				is.NoErr(err)
				t.Cleanup(func() { d.Close() })
				_, err = d.Migrate(ctx)
				is.NoErr(err)
				return d
			}
			e := newEnv(t, open(), DefaultRateLimits)
			other := workspace.NewService(open(), e.clock)
			key := func(email string, role apikit.Role) (string, string) {
				k, secret, err := e.ws.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: email, Role: role})
				is.NoErr(err)
				return k.ID, secret
			}
			get := func(secret, path string) int {
				req := httptest.NewRequest("GET", path, nil)
				req.Header.Set("Authorization", "Bearer "+secret)
				rec := httptest.NewRecorder()
				e.handler.ServeHTTP(rec, req)
				return rec.Code
			}
			counted := func(keyID string) int {
				is.NoErr(e.srv.limiter.flush(ctx))
				var n int
				err := e.db.NewRaw("SELECT coalesce(sum(count), 0) FROM rate_windows WHERE key_id = ?", keyID).Scan(ctx, &n)
				is.NoErr(err)
				return n
			}
			apply := func(change func(s *workspace.WorkspaceSpec)) {
				s := acmeSetup()
				change(&s.Workspaces[0])
				_, err := other.Apply(ctx, s)
				is.NoErr(err)
			}

			// A revoked key.
			revokedID, revoked := key("owner@acme.test", apikit.RoleMember)
			is.Equal(get(revoked, "/v1/leads"), 200)
			_, err := other.RevokeKey(ctx, "acme", revokedID)
			is.NoErr(err)
			is.Equal(get(revoked, "/v1/leads"), 401)
			is.Equal(counted(revokedID), 1) // the refused read counted nothing

			// A lowered role, then a raised one.
			bossID, boss := key("boss@acme.test", apikit.RoleManager)
			is.Equal(get(boss, "/v1/webhooks"), 200)
			apply(func(w *workspace.WorkspaceSpec) { w.Members[1].Role = apikit.RoleMember })
			is.Equal(get(boss, "/v1/webhooks"), 403)
			is.Equal(counted(bossID), 2) // a valid key's refused call counts
			apply(func(w *workspace.WorkspaceSpec) {})
			is.Equal(get(boss, "/v1/webhooks"), 200)
			is.Equal(counted(bossID), 3)

			// A member who leaves.
			apply(func(w *workspace.WorkspaceSpec) { w.Members[1].Active = ptr(false) })
			is.Equal(get(boss, "/v1/leads"), 401)
			is.Equal(counted(bossID), 3) // a key no longer valid counts nothing

			// A suspended workspace.
			ownerID, owner := key("owner@acme.test", apikit.RoleManager)
			is.Equal(get(owner, "/v1/leads"), 200)
			apply(func(w *workspace.WorkspaceSpec) {
				w.Members[1].Active = ptr(false)
				w.Suspended = ptr(true)
			})
			is.Equal(get(owner, "/v1/leads"), 402)
			is.Equal(counted(ownerID), 1)
		})
	}
}
