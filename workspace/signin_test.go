package workspace_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/workspace"
)

const pw = "correct horse battery"

func code(err error) string { return apikit.ErrorCode(err) }

// inviteMember invites email to acme as a member and returns the
// invite's token.
func inviteMember(t *testing.T, b bundle, email string) string {
	t.Helper()
	_, token, err := b.svc.Invite(context.Background(), workspace.InviteInput{Workspace: "acme", Email: email, Role: apikit.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func signInSetup(t *testing.T, d *db.DB) bundle {
	b := setup(t, d)
	b.svc.SetPasswordParams(workspace.PasswordParams{Time: 1, Memory: 256, Threads: 1})
	return b
}

func TestInviteSignInAndSessions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)

		inv, token, err := b.svc.Invite(ctx, workspace.InviteInput{Workspace: "acme", Email: " Vera@Globex.test ", Role: apikit.RoleClientViewer, Clients: []string{"Globex"}})
		is.NoErr(err)
		is.Equal(inv.Email, "vera@globex.test")
		is.Equal(inv.ExpiresAt, t0.Add(24*time.Hour))
		is.True(len(token) >= 43)
		shown, err := b.svc.InviteByToken(ctx, token)
		is.NoErr(err)
		is.Equal(shown.WorkspaceName, "acme")
		is.Equal(shown.ClientNames, []string{"Globex"})

		_, err = b.svc.AcceptInvite(ctx, token, "short")
		is.Equal(code(err), apikit.EPayloadInvalid)
		session, err := b.svc.AcceptInvite(ctx, token, pw)
		is.NoErr(err)
		p, err := b.svc.SessionPrincipal(ctx, session)
		is.NoErr(err)
		is.Equal(p.Role, apikit.RoleClientViewer)
		is.Equal(p.MemberEmail, "vera@globex.test")
		is.Equal(p.KeyID, "")
		is.Equal(len(p.ClientIDs), 1)
		is.True(p.Scoped())

		// An invite works once.
		_, err = b.svc.AcceptInvite(ctx, token, pw)
		is.Equal(code(err), apikit.ENotFound)
		_, err = b.svc.InviteByToken(ctx, token)
		is.Equal(code(err), apikit.ENotFound)

		// Nothing secret is stored in the clear.
		var stored []string
		is.NoErr(d.NewRaw(`SELECT hash FROM member_passwords UNION ALL SELECT token_hash FROM member_sessions UNION ALL SELECT token_hash FROM member_invites`).Scan(ctx, &stored))
		for _, s := range stored {
			is.True(!strings.Contains(s, pw) && s != session && s != token)
		}
		is.True(strings.HasPrefix(stored[0], "$argon2id$v=19$"))

		// Signing in: the same answer for a wrong password and an unknown email.
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "vera@globex.test", Password: "wrong password!"})
		is.Equal(err, error(workspace.ErrSignIn()))
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "nobody@globex.test", Password: pw})
		is.Equal(err, error(workspace.ErrSignIn()))
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "owner@acme.test", Password: pw}) // a member with no password
		is.Equal(err, error(workspace.ErrSignIn()))
		second, err := b.svc.SignIn(ctx, workspace.SignInInput{Email: "VERA@globex.test", Password: pw})
		is.NoErr(err)
		is.True(second != session)
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "vera@globex.test", Password: pw, Workspace: "other"})
		is.Equal(code(err), apikit.EUnauthorized)

		// 12 hours idle end a session; a use in between keeps it.
		b.clock.Advance(11 * time.Hour)
		_, err = b.svc.SessionPrincipal(ctx, second)
		is.NoErr(err)
		b.clock.Advance(11 * time.Hour)
		_, err = b.svc.SessionPrincipal(ctx, second)
		is.NoErr(err)
		_, err = b.svc.SessionPrincipal(ctx, session) // idle for 22 hours
		is.Equal(code(err), apikit.EUnauthorized)

		// Signing out ends the session.
		is.NoErr(b.svc.SignOut(ctx, second))
		_, err = b.svc.SessionPrincipal(ctx, second)
		is.Equal(code(err), apikit.EUnauthorized)

		// The invite's 24 hours.
		_, late, err := b.svc.Invite(ctx, workspace.InviteInput{Workspace: "acme", Email: "late@acme.test", Role: apikit.RoleMember})
		is.NoErr(err)
		b.clock.Advance(24 * time.Hour)
		_, err = b.svc.AcceptInvite(ctx, late, pw)
		is.Equal(code(err), apikit.ENotFound)
	})
}

func TestAMemberWhoLeftIsSignedOut(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)
		_, token, err := b.svc.Invite(ctx, workspace.InviteInput{Workspace: "acme", Email: "max@acme.test", Role: apikit.RoleMember})
		is.NoErr(err)
		session, err := b.svc.AcceptInvite(ctx, token, pw)
		is.NoErr(err)
		s := acme()
		s.Workspaces[0].Members[2].Active = ptr(false)
		_, err = b.svc.Apply(ctx, s)
		is.NoErr(err)
		_, err = b.svc.SessionPrincipal(ctx, session)
		is.Equal(code(err), apikit.EUnauthorized)
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "max@acme.test", Password: pw})
		is.Equal(code(err), apikit.EUnauthorized)

		// A new invite lets them rejoin, and ends nothing else.
		_, token, err = b.svc.Invite(ctx, workspace.InviteInput{Workspace: "acme", Email: "max@acme.test", Role: apikit.RoleMember})
		is.NoErr(err)
		session, err = b.svc.AcceptInvite(ctx, token, pw)
		is.NoErr(err)
		p, err := b.svc.SessionPrincipal(ctx, session)
		is.NoErr(err)
		is.Equal(p.Role, apikit.RoleMember)
	})
}

func TestInviteRules(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)
		principal := func(email string, role apikit.Role, clients ...string) *apikit.Principal {
			_, token, err := b.svc.Invite(ctx, workspace.InviteInput{Workspace: "acme", Email: email, Role: role, Clients: clients})
			is.NoErr(err)
			session, err := b.svc.AcceptInvite(ctx, token, pw)
			is.NoErr(err)
			p, err := b.svc.SessionPrincipal(ctx, session)
			is.NoErr(err)
			return &p
		}
		invite := func(by *apikit.Principal, email string, role apikit.Role, clients ...string) error {
			_, _, err := b.svc.Invite(ctx, workspace.InviteInput{Email: email, Role: role, Clients: clients, By: by})
			return err
		}
		boss := principal("boss@acme.test", apikit.RoleManager)
		max := principal("max@acme.test", apikit.RoleMember)
		globexBoss := principal("gb@acme.test", apikit.RoleManager, "Globex")

		is.NoErr(invite(boss, "new@acme.test", apikit.RoleManager))
		is.Equal(code(invite(boss, "new2@acme.test", apikit.RoleOwner)), apikit.EForbidden) // above the inviter
		is.Equal(code(invite(max, "new3@acme.test", apikit.RoleMember)), apikit.EForbidden) // a member does not invite
		is.Equal(code(invite(globexBoss, "v@acme.test", apikit.RoleClientViewer)), apikit.EForbidden)
		is.Equal(code(invite(globexBoss, "v@acme.test", apikit.RoleClientViewer, "Initech")), apikit.EForbidden)
		is.NoErr(invite(globexBoss, "v@acme.test", apikit.RoleClientViewer, "Globex"))
		is.Equal(code(invite(boss, "v@acme.test", apikit.RoleClientViewer, "Nope")), apikit.ENotFound)
		is.Equal(code(invite(boss, "not an email", apikit.RoleMember)), apikit.EPayloadInvalid)
		is.Equal(code(invite(boss, "x@acme.test", "boss")), apikit.EPayloadInvalid)
		// An existing member keeps their role.
		is.Equal(code(invite(boss, "max@acme.test", apikit.RoleManager)), apikit.EConflict)
		is.NoErr(invite(boss, "max@acme.test", apikit.RoleMember))
		// The command line may invite an owner.
		_, _, err := b.svc.Invite(ctx, workspace.InviteInput{Workspace: "acme", Email: "owner@acme.test", Role: apikit.RoleOwner})
		is.NoErr(err)
		_, _, err = b.svc.Invite(ctx, workspace.InviteInput{Workspace: "nope", Email: "a@b.test", Role: apikit.RoleOwner})
		is.Equal(code(err), apikit.ENotFound)

		// The members list: a scoped manager sees the members within its clients.
		all, err := b.svc.MemberList(ctx, *boss)
		is.NoErr(err)
		is.Equal(len(all), 4) // owner, boss, max, gb
		pending, err := b.svc.PendingInvites(ctx, *boss)
		is.NoErr(err)
		is.Equal(len(pending), 4) // new, v, max, owner (newest first)
		is.Equal(pending[0].Email, "owner@acme.test")
		scoped, err := b.svc.PendingInvites(ctx, *globexBoss)
		is.NoErr(err)
		is.Equal(len(scoped), 1)
		is.Equal(scoped[0].ClientNames, []string{"Globex"})
		mine, err := b.svc.MemberList(ctx, *globexBoss)
		is.NoErr(err)
		is.Equal(len(mine), 1)
		is.Equal(mine[0].Email, "gb@acme.test")
		is.True(mine[0].CanSignIn)
	})
}

// maxInAcmeAndBeta adds the workspace beta (acme's twin) and makes
// max@acme.test a member of both with the password pw, through invites;
// it returns the session each invite opened, by workspace.
func maxInAcmeAndBeta(t *testing.T, b bundle) map[string]string {
	t.Helper()
	ctx := context.Background()
	s := acme()
	s.Workspaces[0].Name = "beta"
	if _, err := b.svc.Apply(ctx, s); err != nil {
		t.Fatal(err)
	}
	sessions := map[string]string{}
	for _, ws := range []string{"acme", "beta"} {
		_, token, err := b.svc.Invite(ctx, workspace.InviteInput{Workspace: ws, Email: "max@acme.test", Role: apikit.RoleMember})
		if err != nil {
			t.Fatal(err)
		}
		if sessions[ws], err = b.svc.AcceptInvite(ctx, token, pw); err != nil {
			t.Fatal(err)
		}
	}
	return sessions
}

func TestSignInAcrossWorkspaces(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)
		maxInAcmeAndBeta(t, b)
		_, err := b.svc.SignIn(ctx, workspace.SignInInput{Email: "max@acme.test", Password: pw})
		is.Equal(code(err), apikit.EConflict)
		token, err := b.svc.SignIn(ctx, workspace.SignInInput{Email: "max@acme.test", Password: pw, Workspace: "beta"})
		is.NoErr(err)
		p, err := b.svc.SessionPrincipal(ctx, token)
		is.NoErr(err)
		is.Equal(p.WorkspaceName, "beta")
	})
}

// ChangePassword checks the current password, changes only this
// workspace's member (the same email elsewhere keeps its own), and ends
// every session of the member but the new one.
func TestChangePassword(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)
		sessions := maxInAcmeAndBeta(t, b)
		other, err := b.svc.SignIn(ctx, workspace.SignInInput{Email: "max@acme.test", Password: pw, Workspace: "acme"})
		is.NoErr(err)
		p, err := b.svc.SessionPrincipal(ctx, sessions["acme"])
		is.NoErr(err)

		const next = "a new long passphrase"
		_, err = b.svc.ChangePassword(ctx, p, "wrong password!", next)
		is.True(workspace.IsCurrentPasswordWrong(err))
		is.Equal(code(err), apikit.EPayloadInvalid)
		_, err = b.svc.ChangePassword(ctx, p, pw, "short")
		is.Equal(code(err), apikit.EPayloadInvalid)
		is.True(!workspace.IsCurrentPasswordWrong(err))
		keyed := p
		keyed.KeyID = "a key"
		_, err = b.svc.ChangePassword(ctx, keyed, pw, next)
		is.Equal(code(err), apikit.EForbidden)
		_, err = b.svc.SessionPrincipal(ctx, other) // refusals end nothing
		is.NoErr(err)

		token, err := b.svc.ChangePassword(ctx, p, pw, next)
		is.NoErr(err)
		q, err := b.svc.SessionPrincipal(ctx, token)
		is.NoErr(err)
		is.Equal(q.MemberID, p.MemberID)
		for _, ended := range []string{sessions["acme"], other} {
			_, err = b.svc.SessionPrincipal(ctx, ended)
			is.Equal(code(err), apikit.EUnauthorized)
		}
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "max@acme.test", Password: pw, Workspace: "acme"})
		is.Equal(code(err), apikit.EUnauthorized)
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "max@acme.test", Password: next, Workspace: "acme"})
		is.NoErr(err)
		// beta's member keeps the old password and its session.
		_, err = b.svc.SessionPrincipal(ctx, sessions["beta"])
		is.NoErr(err)
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "max@acme.test", Password: pw})
		is.NoErr(err) // only beta's matches now
	})
}

// A member limited to some clients creates keys only within them (the
// command line's `keys create` goes through CreateKey too).
func TestScopedMemberKeys(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)
		_, token, err := b.svc.Invite(ctx, workspace.InviteInput{Workspace: "acme", Email: "gm@acme.test", Role: apikit.RoleManager, Clients: []string{"Globex"}})
		is.NoErr(err)
		_, err = b.svc.AcceptInvite(ctx, token, pw)
		is.NoErr(err)
		for _, clients := range [][]string{nil, {"Initech"}, {"Globex", "Initech"}} {
			_, _, err = b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "gm@acme.test", Role: apikit.RoleMember, Clients: clients})
			is.Equal(code(err), apikit.EForbidden) // beyond Globex
		}
		k, _, err := b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "gm@acme.test", Role: apikit.RoleMember, Clients: []string{"Globex"}})
		is.NoErr(err)
		is.Equal(k.ClientNames, []string{"Globex"})
	})
}

// Sign-ins are counted in the database per key and window before their
// password is checked; a key at its limit refuses the attempt and nothing
// is counted; a release gives an attempt back and forgets keys; once a
// window, reserving also deletes the counts whose window ended, so the
// table holds only recent keys.
func TestReserveSignIn(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)
		const window = 15 * time.Minute
		acct, addr := "account a@acme.test", "address 192.0.2.1"
		limits := []workspace.SignInLimit{{Key: addr, Limit: 5}, {Key: acct, Limit: 3}}
		count := func(key string) (n int) {
			t.Helper()
			err := d.NewRaw("SELECT failures FROM sign_in_failures WHERE key = ?", key).Scan(ctx, &n)
			if err != nil && !db.IsNoRows(err) {
				t.Fatal(err)
			}
			return n
		}
		rows := func() (n int) {
			is.NoErr(d.NewRaw("SELECT count(*) FROM sign_in_failures").Scan(ctx, &n))
			return n
		}
		var atts []*workspace.SignInAttempt
		for range 3 {
			att, full, err := b.svc.ReserveSignIn(ctx, limits, window)
			is.NoErr(err)
			is.True(full == nil && att != nil)
			atts = append(atts, att)
		}
		b.clock.Advance(time.Minute)
		att, full, err := b.svc.ReserveSignIn(ctx, limits, window)
		is.NoErr(err)
		is.True(att == nil)
		is.Equal(full.Key, acct)
		is.True(full.WindowStart.Equal(t0)) // the wait runs from here
		is.Equal(count(addr), 3)            // the refused attempt counted nowhere

		// A release gives one back: one more attempt gets in.
		is.NoErr(b.svc.ReleaseSignIn(ctx, atts[0]))
		is.Equal(count(acct), 2)
		att, _, err = b.svc.ReserveSignIn(ctx, limits, window)
		is.NoErr(err)
		is.True(att != nil)
		// A success gives its attempt back and forgets the account.
		is.NoErr(b.svc.ReleaseSignIn(ctx, att, acct))
		is.Equal(count(acct), 0)
		is.Equal(count(addr), 2) // three counted, two given back
		is.Equal(rows(), 1)

		b.clock.Advance(window)
		_, _, err = b.svc.ReserveSignIn(ctx, []workspace.SignInLimit{{Key: "account c@acme.test", Limit: 3}}, window)
		is.NoErr(err)
		is.Equal(rows(), 1) // the ended one was swept: c's alone is left
	})
}

// TestReserveSignInAtOnce: attempts made at once, through two services on
// one database (two replicas), never count past a limit.
func TestReserveSignInAtOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)
		replicas := []*workspace.Service{b.svc, workspace.NewService(d, b.clock)}
		const tries, limit = 20, 10
		limits := []workspace.SignInLimit{{Key: "address 192.0.2.1", Limit: 50}, {Key: "account a@acme.test", Limit: limit}}
		var wg sync.WaitGroup
		var reserved, refused atomic.Int32
		for i := range tries {
			wg.Go(func() {
				att, full, err := replicas[i%2].ReserveSignIn(ctx, limits, 15*time.Minute)
				switch {
				case err != nil:
					t.Error(err)
				case att != nil:
					reserved.Add(1)
				case full != nil:
					refused.Add(1)
				}
			})
		}
		wg.Wait()
		is.Equal(int(reserved.Load()), limit)
		is.Equal(int(refused.Load()), tries-limit)
	})
}

// A key acts for its own clients that its creator still sees, as its
// role is the lower of its own and its creator's: narrowing a member's
// clients narrows their keys from the next request on (on Postgres the
// change raises the authentication version, so a remembered principal is
// read again), and a key left with none of them is refused.
func TestKeyScopeFollowsTheMember(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)
		invite := func(clients ...string) {
			t.Helper()
			_, token, err := b.svc.Invite(ctx, workspace.InviteInput{Workspace: "acme", Email: "gm@acme.test", Role: apikit.RoleManager, Clients: clients})
			is.NoErr(err)
			_, err = b.svc.AcceptInvite(ctx, token, pw)
			is.NoErr(err)
		}
		invite("Globex", "Initech")
		key := func(clients ...string) string {
			t.Helper()
			_, secret, err := b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "gm@acme.test", Role: apikit.RoleMember, Clients: clients})
			is.NoErr(err)
			return secret
		}
		both, initech := key("Globex", "Initech"), key("Initech")
		_, owners, err := b.svc.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "owner@acme.test", Role: apikit.RoleManager})
		is.NoErr(err)
		cat, err := b.svc.Catalog(ctx, apikit.Principal{WorkspaceID: mustWorkspace(t, b, "acme"), Role: apikit.RoleOwner})
		is.NoErr(err)
		id := map[string]string{}
		for _, c := range cat.Clients {
			id[c.Name] = c.ID
		}
		scope := func(secret string) []string {
			t.Helper()
			p, err := b.svc.Authenticate(ctx, secret)
			is.NoErr(err)
			return p.ClientIDs
		}
		is.Equal(len(scope(both)), 2)
		is.Equal(scope(initech), []string{id["Initech"]})
		is.Equal(len(scope(owners)), 0) // the whole workspace

		version := func() (v int64) {
			if d.Engine == db.Postgres {
				is.NoErr(d.NewRaw("SELECT version FROM auth_versions WHERE workspace_id = ?", mustWorkspace(t, b, "acme")).Scan(ctx, &v))
			}
			return v
		}
		before := version()
		invite("Globex") // gm now sees Globex alone
		if d.Engine == db.Postgres {
			is.True(version() > before) // a remembered principal is read again
		}
		is.Equal(scope(both), []string{id["Globex"]})
		_, err = b.svc.Authenticate(ctx, initech)
		is.Equal(code(err), apikit.EUnauthorized)
		is.Equal(len(scope(owners)), 0)
	})
}

func mustWorkspace(t *testing.T, b bundle, name string) string {
	t.Helper()
	w, err := b.svc.ByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return w.ID
}

// TestPasswordsAreNormalised: a password is set and checked in NFKC, so
// its other spellings match; one of only invisible characters or spaces
// is refused, and invisible characters do not count towards the length.
func TestPasswordsAreNormalised(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)
		token := inviteMember(t, b, "sdr@acme.test")
		zw := "\u200b"
		for _, c := range []struct{ password, says string }{
			{strings.Repeat(zw, 12), "The password shows no visible character"},
			{strings.Repeat("\u2060\ufeff\u3164\u200d", 4), "The password shows no visible character"},
			{strings.Repeat(" ", 14), "The password shows no visible character"},
			{"abc" + strings.Repeat(zw, 12), "The password has 3 characters (its 12 invisible ones are not counted); it needs at least 12."},
		} {
			_, err := b.svc.AcceptInvite(ctx, token, c.password)
			is.Equal(code(err), apikit.EPayloadInvalid)
			is.True(strings.HasPrefix(apikit.AsError(err).Message, c.says)) // c.password
		}
		// Full-width letters and a decomposed é: the same password as the
		// plain one.
		_, err := b.svc.AcceptInvite(ctx, token, "ｃｏｒｒｅｃｔ horse caf\u0065\u0301")
		is.NoErr(err)
		for _, typed := range []string{"correct horse caf\u00e9", "ｃｏｒｒｅｃｔ horse caf\u0065\u0301"} {
			_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "sdr@acme.test", Password: typed})
			is.NoErr(err) // typed
		}
	})
}

// TestPasswordsHashedAsTypedStillMatch: a password set before passwords
// were normalised was hashed as typed; it still signs in, and its hash is
// remade in NFKC then.
func TestPasswordsHashedAsTypedStillMatch(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := signInSetup(t, d)
		token := inviteMember(t, b, "sdr@acme.test")
		_, err := b.svc.AcceptInvite(ctx, token, pw)
		is.NoErr(err)
		old := "ｃｏｒｒｅｃｔ horse caf\u0065\u0301" // its NFKC form differs
		stored := func() (h string) {
			is.NoErr(d.NewRaw("SELECT hash FROM member_passwords").Scan(ctx, &h))
			return h
		}
		_, err = d.NewRaw("UPDATE member_passwords SET hash = ?", workspace.HashPassword(old, workspace.PasswordParams{Time: 1, Memory: 256, Threads: 1})).Exec(ctx)
		is.NoErr(err)
		before := stored()
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "sdr@acme.test", Password: "correct horse café"})
		is.Equal(code(err), apikit.EUnauthorized) // the old hash knows one spelling
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "sdr@acme.test", Password: old})
		is.NoErr(err)
		is.True(stored() != before) // remade in NFKC
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "sdr@acme.test", Password: "correct horse caf\u00e9"})
		is.NoErr(err)
		_, err = b.svc.SignIn(ctx, workspace.SignInInput{Email: "sdr@acme.test", Password: old})
		is.NoErr(err)
	})
}
