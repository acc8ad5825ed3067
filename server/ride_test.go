package server

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/workspace"
)

// ridingProbe is a read whose rate count rides in its first statement (on
// Postgres, for a key this process remembers), as the leads list's does.
// Its handler reports what it saw: the principal it ran as, and whether its
// statement ran to the end. With ?early=1 it refuses the call before any
// statement; with ?quiet=1 it answers without one.
type ridingProbe struct {
	runs, stopped int
}

type probeInput struct {
	Early bool `query:"early"`
	Quiet bool `query:"quiet"`
}

type probeOutput struct {
	Body struct {
		Role string `json:"role"`
	}
}

func (e *env) addProbe() *ridingProbe {
	probe := &ridingProbe{}
	register(e.srv, huma.Operation{
		OperationID: "probe-ride", Method: http.MethodGet, Path: "/v1/probe-ride",
		Metadata: map[string]any{metaRides: true},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *probeInput) (*probeOutput, error) {
		probe.runs++
		out := &probeOutput{}
		out.Body.Role = string(p.Role)
		if in.Early {
			return nil, apikit.Invalid("Refused early.", "Do not send early.")
		}
		if in.Quiet {
			return out, nil
		}
		var one int
		if err := e.db.Carry(ctx, db.TakeRider(ctx), "1 AS one", nil, &one); err != nil {
			probe.stopped++
			return nil, err
		}
		return out, nil
	})
	return probe
}

// TestRidingCountIsTheCount: a read whose count rides in its first
// statement counts, refuses and re-authenticates exactly as a read counted
// before it runs, on both engines: one count per call, whether a statement
// carried it, the call was refused before any statement or answered
// without one; over the limit the call stops at its first statement and
// answers 429; a principal gone stale during the call is read afresh and
// the call runs again as the fresh one, counted once.
func TestRidingCountIsTheCount(t *testing.T) {
	t.Parallel()
	eachEnv(t, smallLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := context.Background()
		probe := e.addProbe()
		k, manager, err := e.ws.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "boss@acme.test", Role: apikit.RoleManager})
		is.NoErr(err)
		counted := func() int {
			is.NoErr(e.srv.limiter.flush(ctx))
			var n int
			is.NoErr(e.db.NewRaw("SELECT coalesce(sum(count), 0) FROM rate_windows WHERE key_id = ?", k.ID).Scan(ctx, &n))
			return n
		}
		remaining := func(r *resp, want int) {
			t.Helper()
			is.Equal(r.Header.Get("X-RateLimit-Remaining"), strconv.Itoa(want))
			is.Equal(r.Header.Get("X-RateLimit-Limit"), "5")
		}

		r := e.call("GET", "/v1/probe-ride", manager, nil) // read 1: the key is read from the database
		is.Equal(r.Status, 200)
		remaining(r, 4)
		r = e.call("GET", "/v1/probe-ride", manager, nil) // read 2: remembered, the count rides
		is.Equal(r.Status, 200)
		is.Equal(r.data(), map[string]any(nil))
		is.Equal(r.Body["role"], "manager")
		remaining(r, 3)
		assertEnvelope(t, e.call("GET", "/v1/probe-ride?early=1", manager, nil), 422, apikit.EPayloadInvalid) // read 3
		assertEnvelope(t, e.call("GET", "/v1/probe-ride?early=nope", manager, nil), 422, apikit.EPayloadInvalid)
		r = e.call("GET", "/v1/probe-ride?quiet=1", manager, nil) // read 5
		is.Equal(r.Status, 200)
		remaining(r, 0)
		is.Equal(counted(), 5)

		// Over the limit: refused at the first statement, or before the
		// answer of a call that made none.
		stopped := probe.stopped
		for _, q := range []string{"", "?early=1", "?quiet=1", "?early=nope"} {
			r = e.call("GET", "/v1/probe-ride"+q, manager, nil)
			assertEnvelope(t, r, 429, apikit.ERateLimited)
			remaining(r, 0)
			is.True(r.Header.Get("Retry-After") != "")
		}
		is.Equal(counted(), 5)
		if e.db.Engine == db.Postgres {
			is.Equal(probe.stopped, stopped+1) // the statement that carried the count stopped the call
		}

		// A principal gone stale: the member's role is lowered after the
		// key was remembered. The call runs again as the fresh principal,
		// and counts once.
		e.clock.Set(e.clock.Now().Truncate(time.Hour).Add(time.Hour)) // a new window
		r = e.call("GET", "/v1/probe-ride", manager, nil)
		is.Equal(r.Body["role"], "manager")
		s := acmeSetup()
		s.Workspaces[0].Members[1].Role = apikit.RoleMember
		_, err = e.ws.Apply(ctx, s)
		is.NoErr(err)
		runs := probe.runs
		r = e.call("GET", "/v1/probe-ride", manager, nil)
		is.Equal(r.Status, 200)
		is.Equal(r.Body["role"], "member")
		remaining(r, 3)
		if e.db.Engine == db.Postgres {
			is.Equal(probe.runs, runs+2) // once as the stale principal, once as the fresh one
		}
		is.Equal(counted(), 5+2)

		// A key revoked after it was remembered: refused, and counts nothing.
		_, err = e.ws.RevokeKey(ctx, "acme", k.ID)
		is.NoErr(err)
		assertEnvelope(t, e.call("GET", "/v1/probe-ride", manager, nil), 401, apikit.EUnauthorized)
		is.Equal(counted(), 5+2)
	})
}

// TestLeadListCountsEachCallOnce: every form of the leads list, whether
// its total carries the count or not, counts once and is refused over the
// limit.
func TestLeadListCountsEachCallOnce(t *testing.T) {
	t.Parallel()
	eachEnv(t, RateLimits{Read: 6, Write: 4, Spend: 2}, func(t *testing.T, e *env) {
		is := is.New(t)
		paths := []string{"/v1/leads", "/v1/leads?client_id=" + e.ids["Globex"], "/v1/leads?stage_id=" + e.ids["New"], "/v1/leads?q=ab", "/v1/leads?limit=0"}
		for _, key := range []string{"viewer", "globexViewer"} {
			is.Equal(e.call("GET", "/v1/me", key, nil).Status, 200) // the key is remembered from here on
			for i, path := range paths {
				r := e.call("GET", path, key, nil)
				is.Equal(r.Status == 200 || r.Status == 422, true)
				is.Equal(r.Header.Get("X-RateLimit-Remaining"), strconv.Itoa(6-2-i))
			}
			for _, path := range paths {
				assertEnvelope(t, e.call("GET", path, key, nil), 429, apikit.ERateLimited)
			}
		}
	})
}

// TestRidingStatementUsesIndexes explains the statements of the leads
// list's first page, on both engines: on Postgres the total carries the
// rate count and reads the authentication version. Every read runs it.
func TestRidingStatementUsesIndexes(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		is.Equal(e.call("GET", "/v1/leads", "viewer", nil).Status, 200) // remembered from here on
		// The call may have started a flush of the rate counts in the
		// background; it must end before the recorder joins the database.
		is.NoErr(e.srv.Flush(context.Background()))
		rec := dbtest.Record(e.db)
		queries := rec.During(func() {
			is.Equal(e.call("GET", "/v1/leads", "viewer", nil).Status, 200)
			is.Equal(e.call("GET", "/v1/leads?client_id="+e.ids["Globex"], "viewer", nil).Status, 200)
		})
		tables := []string{"lead_counts", "leads"}
		if e.db.Engine == db.Postgres {
			tables = append(tables, "rate_windows", "auth_versions")
		}
		for _, table := range tables {
			dbtest.AssertNoScan(t, e.db, table, "", queries)
		}
	})
}
