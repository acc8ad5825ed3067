package workspace_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/workspace"
)

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func acme() workspace.Setup {
	return workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{
		Name: "acme", Timezone: "Europe/Berlin", Plan: "pro", Suspended: ptr(false),
		Members: []workspace.MemberSpec{
			{Email: "owner@acme.test", Role: apikit.RoleOwner},
			{Email: "boss@acme.test", Role: apikit.RoleManager},
			{Email: "max@acme.test", Role: apikit.RoleMember, Active: ptr(true)},
		},
		Clients: []string{"Globex", "Initech"}, Stages: []string{"New", "Contacted"},
		Tags: []string{"vip"}, Lists: []string{"Berlin CTOs"},
		Blacklist: workspace.BlacklistSpec{Companies: []string{"Umbrella"}, Domains: []string{"umbrella.test"}},
	}}}
}

type bundle struct {
	svc   *workspace.Service
	clock *apikit.FakeClock
	d     *db.DB
}

func setup(t *testing.T, d *db.DB) bundle {
	t.Helper()
	clock := apikit.NewFakeClock(t0)
	svc := workspace.NewService(d, clock)
	if _, err := svc.Apply(context.Background(), acme()); err != nil {
		t.Fatal(err)
	}
	return bundle{svc: svc, clock: clock, d: d}
}

func TestApplyIsIdempotent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		changes, err := b.svc.Apply(ctx, acme())
		is.NoErr(err)
		is.Equal(len(changes), 0) // applying again changes nothing

		s := acme()
		s.Workspaces[0].Members[2].Active = ptr(false)
		s.Workspaces[0].Members[1].Role = apikit.RoleMember
		s.Workspaces[0].Plan = "starter"
		changes, err = b.svc.Apply(ctx, s)
		is.NoErr(err)
		is.Equal(changes, []string{
			"workspace acme: plan pro -> starter",
			"workspace acme: member boss@acme.test role manager -> member",
			"workspace acme: member max@acme.test left",
		})
	})
}

func TestApplyRejectsBadInputAndChangesNothing(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		svc := workspace.NewService(d, apikit.NewFakeClock(t0))
		s := acme()
		s.Workspaces = append(s.Workspaces, workspace.WorkspaceSpec{Name: "b", Timezone: "Mars/Olympus"})
		_, err := svc.Apply(context.Background(), s)
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		_, err = svc.ByName(context.Background(), "acme")
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound) // nothing was created
	})
}

func TestKeyRules(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		create := func(email string, role apikit.Role, clients ...string) error {
			_, _, err := b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: email, Role: role, Clients: clients})
			return err
		}
		is.Equal(apikit.ErrorCode(create("max@acme.test", apikit.RoleMember)), apikit.EForbidden)          // members create no keys
		is.Equal(apikit.ErrorCode(create("owner@acme.test", apikit.RoleOwner)), apikit.EPayloadInvalid)    // never owner
		is.Equal(apikit.ErrorCode(create("owner@acme.test", "admin")), apikit.EPayloadInvalid)             // unknown role
		is.Equal(apikit.ErrorCode(create("owner@acme.test", apikit.RoleMember, "Nope")), apikit.ENotFound) // unknown client
		is.Equal(apikit.ErrorCode(create("ghost@acme.test", apikit.RoleMember)), apikit.ENotFound)
		_, _, err := b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "boss@acme.test", Role: apikit.RoleMember, ExpiresAt: ptr(t0.Add(-time.Hour))})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid) // past expiry

		k, secret, err := b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "boss@acme.test", Role: apikit.RoleManager, Clients: []string{"Globex"}, Name: "zapier"})
		is.NoErr(err)
		is.True(len(secret) > 40)
		keys, err := b.svc.Keys(ctx, "acme")
		is.NoErr(err)
		is.Equal(len(keys), 1)
		is.Equal(keys[0].ID, k.ID)
		is.Equal(keys[0].ClientNames, []string{"Globex"})
		is.True(keys[0].Hash != secret) // only the hash is stored

		for i := 1; i < workspace.MaxActiveKeys; i++ {
			is.NoErr(create("owner@acme.test", apikit.RoleMember))
		}
		is.Equal(apikit.ErrorCode(create("owner@acme.test", apikit.RoleMember)), apikit.ETooMany)
		_, err = b.svc.RevokeKey(ctx, "acme", k.ID)
		is.NoErr(err)
		is.NoErr(create("owner@acme.test", apikit.RoleMember)) // a revoked key frees a place
	})
}

// TestAuthenticationUsesIndexes explains what authenticating a request
// reads, on both engines: every request runs it.
func TestAuthenticationUsesIndexes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		b := setup(t, d)
		_, secret, err := b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "boss@acme.test", Role: apikit.RoleMember, Clients: []string{"Globex"}})
		if err != nil {
			t.Fatal(err)
		}
		queries := dbtest.Record(d).During(func() {
			if _, err := b.svc.Authenticate(ctx, secret); err != nil {
				t.Fatal(err)
			}
		})
		for _, table := range []string{"api_keys", "members", "workspaces", "api_key_clients", "member_clients"} {
			dbtest.AssertNoScan(t, d, table, "", queries)
		}
	})
}

// TestAuthenticateReadRemembers: on Postgres a read's key is remembered
// with the workspace's authentication version, which a change raises; a
// remembered key still expires on time and still records its last use
// once a minute. SQLite reads the key every time.
func TestAuthenticateReadRemembers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		pg := d.Engine == db.Postgres
		k, secret, err := b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "boss@acme.test", Role: apikit.RoleMember,
			ExpiresAt: ptr(t0.Add(150 * time.Second))})
		is.NoErr(err)

		_, v1, cached, err := b.svc.AuthenticateRead(ctx, secret)
		is.NoErr(err)
		is.True(!cached)
		_, v2, cached, err := b.svc.AuthenticateRead(ctx, secret)
		is.NoErr(err)
		is.Equal(cached, pg) // remembered on Postgres only
		is.Equal(v1, v2)

		// A change raises the version the credential is read at.
		s := acme()
		s.Workspaces[0].Members[1].Role = apikit.RoleMember
		_, err = b.svc.Apply(ctx, s)
		is.NoErr(err)
		b.svc.Forget(secret)
		_, v3, _, err := b.svc.AuthenticateRead(ctx, secret)
		is.NoErr(err)
		is.True(!pg || v3 > v2)

		// The last use is recorded once a minute, remembered or not.
		b.clock.Advance(2 * time.Minute)
		_, _, cached, err = b.svc.AuthenticateRead(ctx, secret)
		is.NoErr(err)
		is.True(!cached)
		keys, err := b.svc.Keys(ctx, "acme")
		is.NoErr(err)
		for _, key := range keys {
			if key.ID == k.ID {
				is.True(key.LastUsedAt != nil && key.LastUsedAt.Equal(b.clock.Now()))
			}
		}

		// A remembered key expires on time, within the minute it was read.
		_, _, cached, err = b.svc.AuthenticateRead(ctx, secret)
		is.NoErr(err)
		is.Equal(cached, pg)
		b.clock.Advance(40 * time.Second)
		_, _, _, err = b.svc.AuthenticateRead(ctx, secret)
		is.Equal(apikit.ErrorCode(err), apikit.EUnauthorized)
	})
}

func TestAuthenticate(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		b := setup(t, d)
		key := func(email string, role apikit.Role, expires *time.Time, clients ...string) (string, string) {
			k, secret, err := b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: email, Role: role, ExpiresAt: expires, Clients: clients})
			if err != nil {
				t.Fatal(err)
			}
			return k.ID, secret
		}
		_, manager := key("boss@acme.test", apikit.RoleManager, nil, "Globex")
		revokedID, revoked := key("boss@acme.test", apikit.RoleMember, nil)
		_, expiring := key("owner@acme.test", apikit.RoleMember, ptr(t0.Add(time.Hour)))
		_, byOwner := key("owner@acme.test", apikit.RoleManager, nil)
		_, err := b.svc.RevokeKey(ctx, "acme", revokedID)
		if err != nil {
			t.Fatal(err)
		}

		t.Run("valid key carries role and scope", func(t *testing.T) {
			is := is.New(t)
			p, err := b.svc.Authenticate(ctx, manager)
			is.NoErr(err)
			is.Equal(p.Role, apikit.RoleManager)
			is.Equal(len(p.ClientIDs), 1)
			is.Equal(p.MemberEmail, "boss@acme.test")
			keys, err := b.svc.Keys(ctx, "acme")
			is.NoErr(err)
			is.True(keys[0].LastUsedAt != nil && keys[0].LastUsedAt.Equal(b.clock.Now())) // last used is recorded
		})
		for name, secret := range map[string]string{"missing": "", "unknown": "ll_nope", "revoked": revoked} {
			t.Run(name, func(t *testing.T) {
				_, err := b.svc.Authenticate(ctx, secret)
				is.New(t).Equal(apikit.ErrorCode(err), apikit.EUnauthorized)
			})
		}
		t.Run("expired", func(t *testing.T) {
			is := is.New(t)
			_, err := b.svc.Authenticate(ctx, expiring)
			is.NoErr(err)
			b.clock.Advance(time.Hour)
			_, err = b.svc.Authenticate(ctx, expiring)
			is.Equal(apikit.ErrorCode(err), apikit.EUnauthorized)
		})
		t.Run("lowered creator lowers the key at once", func(t *testing.T) {
			is := is.New(t)
			s := acme()
			s.Workspaces[0].Members[0].Role = apikit.RoleMember // owner demoted
			s.Workspaces[0].Members[1].Role = apikit.RoleOwner  // so the workspace keeps an owner
			_, err := b.svc.Apply(ctx, s)
			is.NoErr(err)
			p, err := b.svc.Authenticate(ctx, byOwner)
			is.NoErr(err)
			is.Equal(p.Role, apikit.RoleMember)
		})
		t.Run("creator left", func(t *testing.T) {
			is := is.New(t)
			s := acme()
			s.Workspaces[0].Members[1].Active = ptr(false)
			_, err := b.svc.Apply(ctx, s)
			is.NoErr(err)
			_, err = b.svc.Authenticate(ctx, manager)
			is.Equal(apikit.ErrorCode(err), apikit.EUnauthorized)
		})
		t.Run("suspended workspace", func(t *testing.T) {
			is := is.New(t)
			s := acme()
			s.Workspaces[0].Suspended = ptr(true)
			_, err := b.svc.Apply(ctx, s)
			is.NoErr(err)
			_, err = b.svc.Authenticate(ctx, byOwner)
			is.Equal(apikit.ErrorCode(err), apikit.EPlanSuspended)
		})
	})
}

func TestBlacklistHit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		w, err := b.svc.ByName(ctx, "acme")
		is.NoErr(err)
		for _, c := range []struct {
			company string
			emails  []string
			want    string
		}{
			{"umbrella", nil, "company:umbrella"},
			{"Globex", []string{"ann@Umbrella.TEST"}, "domain:umbrella.test"},
			{"Globex", []string{"ann@globex.test"}, ""},
		} {
			hit, err := b.svc.BlacklistHit(ctx, w.ID, c.company, c.emails, nil)
			is.NoErr(err)
			is.Equal(hit, c.want)
		}
	})
}

// TestMemberWhoLeavesLosesKeysForGood: keys of a member who leaves are
// revoked and recorded; rejoining does not revive them.
func TestMemberWhoLeavesLosesKeysForGood(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		k, secret, err := b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "boss@acme.test", Role: apikit.RoleMember})
		is.NoErr(err)
		_, err = b.svc.Authenticate(ctx, secret)
		is.NoErr(err)

		s := acme()
		s.Workspaces[0].Members[1].Active = ptr(false)
		changes, err := b.svc.Apply(ctx, s)
		is.NoErr(err)
		is.Equal(changes, []string{"workspace acme: member boss@acme.test left", "workspace acme: member boss@acme.test: 1 key(s) revoked"})
		_, err = b.svc.Authenticate(ctx, secret)
		is.Equal(apikit.ErrorCode(err), apikit.EUnauthorized)

		s.Workspaces[0].Members[1].Active = ptr(true)
		changes, err = b.svc.Apply(ctx, s)
		is.NoErr(err)
		is.Equal(changes, []string{"workspace acme: member boss@acme.test rejoined"})
		_, err = b.svc.Authenticate(ctx, secret)
		is.Equal(apikit.ErrorCode(err), apikit.EUnauthorized) // still revoked

		keys, err := b.svc.Keys(ctx, "acme")
		is.NoErr(err)
		is.Equal(len(keys), 1)
		is.True(keys[0].RevokedAt != nil)
		var evs []struct {
			Kind string         `bun:"kind"`
			Data map[string]any `bun:"data,type:jsonb"`
		}
		is.NoErr(d.NewSelect().Table("events").Column("kind", "data").Where("kind = ?", workspace.EventKeyRevoked).Scan(ctx, &evs))
		is.Equal(len(evs), 1)
		is.Equal(evs[0].Data["key_id"], k.ID)
		is.Equal(evs[0].Data["reason"], workspace.RevokedMemberLeft)
	})
}

// TestLastOwnerStays: a setup file cannot demote or deactivate the last
// active owner; with a second owner it can.
func TestLastOwnerStays(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		for name, change := range map[string]func(m *workspace.MemberSpec){
			"demoted":     func(m *workspace.MemberSpec) { m.Role = apikit.RoleManager },
			"deactivated": func(m *workspace.MemberSpec) { m.Active = ptr(false) },
		} {
			t.Run(name, func(t *testing.T) {
				is := is.New(t)
				s := acme()
				change(&s.Workspaces[0].Members[0])
				s.Workspaces[0].Tags = append(s.Workspaces[0].Tags, "new-tag")
				_, err := b.svc.Apply(ctx, s)
				is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
				is.True(strings.Contains(err.Error(), "no active owner"))
				changes, err := b.svc.Apply(ctx, acme())
				is.NoErr(err)
				is.Equal(len(changes), 0) // nothing of the refused file was applied
			})
		}
		s := acme()
		s.Workspaces[0].Members[1].Role = apikit.RoleOwner
		s.Workspaces[0].Members[0].Active = ptr(false)
		_, err := b.svc.Apply(ctx, s)
		is.NoErr(err) // another owner remains
	})
}

// TestAuthVersionTriggers: on Postgres every change to what
// authentication reads raises the workspace's authentication version, the
// key's clients and its expiry included, and a write authentication does
// not read (a key's last use) leaves it alone. The changes are made in
// SQL, as any future code path or an operator would make them.
func TestAuthVersionTriggers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		if d.Engine != db.Postgres {
			return // SQLite reads the key every time (DECISIONS.md)
		}
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		k, _, err := b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "boss@acme.test", Role: apikit.RoleMember, Clients: []string{"Globex"}})
		is.NoErr(err)
		var wsID, initech string
		is.NoErr(d.NewRaw("SELECT workspace_id FROM api_keys WHERE id = ?", k.ID).Scan(ctx, &wsID))
		is.NoErr(d.NewRaw("SELECT id FROM clients WHERE workspace_id = ? AND name = 'Initech'", wsID).Scan(ctx, &initech))
		version := func() int64 {
			var v int64
			is.NoErr(d.NewRaw("SELECT coalesce((SELECT version FROM auth_versions WHERE workspace_id = ?), 0)", wsID).Scan(ctx, &v))
			return v
		}
		exec := func(query string, args ...any) {
			t.Helper()
			_, err := d.ExecContext(ctx, query, args...)
			is.NoErr(err)
		}
		for _, change := range []struct {
			name, query string
			args        []any
		}{
			{"a key's expiry", "UPDATE api_keys SET expires_at = ? WHERE id = ?", []any{t0.Add(time.Hour), k.ID}},
			{"a key's role", "UPDATE api_keys SET role = 'client_viewer' WHERE id = ?", []any{k.ID}},
			{"a client added to a key", "INSERT INTO api_key_clients (key_id, client_id) VALUES (?, ?)", []any{k.ID, initech}},
			{"a client taken from a key", "DELETE FROM api_key_clients WHERE key_id = ? AND client_id = ?", []any{k.ID, initech}},
			{"a member's email", "UPDATE members SET email = 'chief@acme.test' WHERE workspace_id = ? AND email = 'boss@acme.test'", []any{wsID}},
			{"the workspace's plan", "UPDATE workspaces SET plan = 'starter' WHERE id = ?", []any{wsID}},
			{"a key's revocation", "UPDATE api_keys SET revoked_at = ? WHERE id = ?", []any{t0, k.ID}},
		} {
			before := version()
			exec(change.query, change.args...)
			if version() <= before {
				t.Errorf("%s left the authentication version at %d", change.name, before)
			}
		}
		before := version()
		exec("UPDATE api_keys SET last_used_at = ? WHERE id = ?", t0, k.ID)
		is.Equal(version(), before) // not read by authentication's checks
	})
}
