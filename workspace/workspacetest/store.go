// Package workspacetest is the contract of workspace.Store: one suite
// that every store runs, on every engine it serves.
package workspacetest

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/workspace"
)

// Open returns a fresh, empty store and a function that runs fn in a
// transaction of the store's database (LockWorkspace needs one).
type Open func(t *testing.T) (st workspace.Store, inTx func(ctx context.Context, fn func(ctx context.Context) error) error)

// TestStore runs the contract of workspace.Store on the stores open
// makes, one fresh store per test.
func TestStore(t *testing.T, open Open) {
	t.Run("WorkspacesAndMembers", func(t *testing.T) { workspacesAndMembers(t, open) })
	t.Run("Named", func(t *testing.T) { named(t, open) })
	t.Run("Blacklist", func(t *testing.T) { blacklist(t, open) })
	t.Run("BlacklistPages", func(t *testing.T) { blacklistPages(t, open) })
	t.Run("Keys", func(t *testing.T) { keys(t, open) })
	t.Run("Revocation", func(t *testing.T) { revocation(t, open) })
	t.Run("Invites", func(t *testing.T) { invites(t, open) })
	t.Run("PasswordsAndSessions", func(t *testing.T) { passwordsAndSessions(t, open) })
	t.Run("SignInFailures", func(t *testing.T) { signInFailures(t, open) })
}

var at = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

// world saves a workspace named name with one active member per email.
func world(t *testing.T, st workspace.Store, name string, emails ...string) (*workspace.Workspace, []*workspace.Member) {
	t.Helper()
	ctx := context.Background()
	w := &workspace.Workspace{ID: apikit.NewID(), Name: name, Timezone: "Europe/Berlin", Plan: apikit.PlanPro, CreatedAt: at, UpdatedAt: at}
	if err := st.SaveWorkspace(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	var ms []*workspace.Member
	for _, e := range emails {
		m := &workspace.Member{ID: apikit.NewID(), WorkspaceID: w.ID, Email: e, Role: apikit.RoleOwner, Active: true, CreatedAt: at, UpdatedAt: at}
		if err := st.SaveMember(ctx, m, true); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return w, ms
}

func key(w *workspace.Workspace, m *workspace.Member, hash string, created time.Time) *workspace.Key {
	return &workspace.Key{ID: apikit.NewID(), WorkspaceID: w.ID, MemberID: m.ID, Name: hash, Role: string(apikit.RoleManager), Hash: hash,
		Prefix: "ll_" + hash[:4], CreatedAt: created}
}

// workspacesAndMembers: a saved workspace reads back by name and an update
// reads back; its members come by email, one is found by its email in any
// case, and an update reads back; unknown ones are no rows; locking a
// workspace works in a transaction.
func workspacesAndMembers(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, inTx := open(t)
	w, ms := world(t, st, "acme", "zoe@acme.test", "Ada@Acme.test")
	got, err := st.WorkspaceByName(ctx, "acme")
	is.NoErr(err)
	is.Equal(got.ID, w.ID)
	is.Equal(got.Timezone, "Europe/Berlin")
	w.Suspended, w.UpdatedAt = true, at.Add(time.Hour)
	is.NoErr(st.SaveWorkspace(ctx, w, false))
	got, err = st.WorkspaceByName(ctx, "acme")
	is.NoErr(err)
	is.True(got.Suspended)
	_, err = st.WorkspaceByName(ctx, "nobody")
	is.True(db.IsNoRows(err))
	is.NoErr(inTx(ctx, func(ctx context.Context) error { return st.LockWorkspace(ctx, w.ID) }))

	all, err := st.Members(ctx, w.ID)
	is.NoErr(err)
	is.Equal(len(all), 2)
	is.Equal(all[0].ID, ms[1].ID) // "Ada@…" sorts before "zoe@…"
	m, err := st.MemberByEmail(ctx, w.ID, "ada@acme.TEST")
	is.NoErr(err)
	is.Equal(m.ID, ms[1].ID)
	m.Active, m.Role = false, apikit.RoleMember
	is.NoErr(st.SaveMember(ctx, m, false))
	m, err = st.MemberByEmail(ctx, w.ID, "Ada@Acme.test")
	is.NoErr(err)
	is.True(!m.Active)
	is.Equal(m.Role, apikit.RoleMember)
	_, err = st.MemberByEmail(ctx, w.ID, "nobody@acme.test")
	is.True(db.IsNoRows(err))
	_, err = st.MemberByEmail(ctx, apikit.NewID(), "zoe@acme.test") // another workspace
	is.True(db.IsNoRows(err))
}

// named: each catalog keeps its own entries per workspace, by name: all
// of them, those among ids (none for no ids) or among names.
func named(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, _ := open(t)
	w, _ := world(t, st, "acme")
	other, _ := world(t, st, "other")
	globex, initech := workspace.Named{ID: apikit.NewID(), Name: "Globex"}, workspace.Named{ID: apikit.NewID(), Name: "Initech"}
	is.NoErr(st.InsertNamed(ctx, w.ID, workspace.Clients, initech, at))
	is.NoErr(st.InsertNamed(ctx, w.ID, workspace.Clients, globex, at))
	is.NoErr(st.InsertNamed(ctx, w.ID, workspace.Tags, workspace.Named{ID: apikit.NewID(), Name: "hot"}, at))
	is.NoErr(st.InsertNamed(ctx, other.ID, workspace.Clients, workspace.Named{ID: apikit.NewID(), Name: "Umbrella"}, at))

	all, err := st.Named(ctx, w.ID, workspace.Clients, nil)
	is.NoErr(err)
	is.Equal(all, []workspace.Named{globex, initech})
	some, err := st.Named(ctx, w.ID, workspace.Clients, []string{initech.ID, apikit.NewID()})
	is.NoErr(err)
	is.Equal(some, []workspace.Named{initech})
	none, err := st.Named(ctx, w.ID, workspace.Clients, []string{})
	is.NoErr(err)
	is.Equal(len(none), 0)
	byName, err := st.NamedByName(ctx, w.ID, workspace.Clients, []string{"Initech", "Umbrella", "hot"})
	is.NoErr(err)
	is.Equal(byName, []workspace.Named{initech})
	stages, err := st.Named(ctx, w.ID, workspace.Stages, nil)
	is.NoErr(err)
	is.Equal(len(stages), 0)
}

// blacklist: a value is listed once per workspace and kind; a match finds
// the listed values among those asked for, of that kind and workspace.
func blacklist(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, _ := open(t)
	w, _ := world(t, st, "acme")
	other, _ := world(t, st, "other")
	entry := func(ws, kind, value string) *workspace.BlacklistEntry {
		return &workspace.BlacklistEntry{ID: apikit.NewID(), WorkspaceID: ws, Kind: kind, Value: value, CreatedAt: at}
	}
	for _, c := range []struct {
		e    *workspace.BlacklistEntry
		want bool
	}{
		{entry(w.ID, workspace.BlacklistDomain, "globex.example"), true},
		{entry(w.ID, workspace.BlacklistDomain, "globex.example"), false}, // listed already
		{entry(w.ID, workspace.BlacklistCompany, "initech"), true},
		{entry(other.ID, workspace.BlacklistDomain, "initech.example"), true},
	} {
		added, err := st.InsertBlacklist(ctx, c.e)
		is.NoErr(err)
		is.Equal(added, c.want)
	}
	hits, err := st.BlacklistMatch(ctx, w.ID, workspace.BlacklistDomain, []string{"globex.example", "initech.example", "initech"})
	is.NoErr(err)
	is.Equal(hits, map[string]bool{"globex.example": true})
	hits, err = st.BlacklistMatch(ctx, w.ID, workspace.BlacklistLinkedIn, []string{"globex.example"})
	is.NoErr(err)
	is.Equal(len(hits), 0)
}

// blacklistPages: the list comes by kind and value, a page at a time with
// the total, of one kind, or of values containing a text (LIKE's own
// characters taken as they are), with who added each entry; entries read
// back by id and by value in their workspace only, and deleted by id in
// their workspace only.
func blacklistPages(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, _ := open(t)
	w, ms := world(t, st, "acme", "boss@acme.test")
	other, _ := world(t, st, "other")
	add := func(ws, kind, value, member string) workspace.BlacklistEntry {
		e := workspace.BlacklistEntry{ID: apikit.NewID(), WorkspaceID: ws, Kind: kind, Value: value, MemberID: member, CreatedAt: at}
		added, err := st.InsertBlacklist(ctx, &e)
		is.NoErr(err)
		is.True(added)
		return e
	}
	umbrella := add(w.ID, workspace.BlacklistCompany, "umbrella", ms[0].ID)
	globexCo := add(w.ID, workspace.BlacklistCompany, "globex_corp", "")
	globex := add(w.ID, workspace.BlacklistDomain, "globex.example", "")
	jane := add(w.ID, workspace.BlacklistLinkedIn, "jane-doe", "")
	add(other.ID, workspace.BlacklistDomain, "globex.example", "")
	values := func(es []workspace.BlacklistEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Kind+":"+e.Value)
		}
		return out
	}

	page, total, err := st.Blacklist(ctx, w.ID, workspace.BlacklistFilter{Limit: 3})
	is.NoErr(err)
	is.Equal(total, 4)
	is.Equal(values(page), []string{"company:globex_corp", "company:umbrella", "domain:globex.example"})
	is.Equal(page[1].MemberID, ms[0].ID) // who added it
	is.Equal(page[0].MemberID, "")
	is.True(page[1].CreatedAt.Equal(at))
	page, total, err = st.Blacklist(ctx, w.ID, workspace.BlacklistFilter{Limit: 3, Offset: 3})
	is.NoErr(err)
	is.Equal(total, 4)
	is.Equal(values(page), []string{"linkedin:jane-doe"})
	page, total, err = st.Blacklist(ctx, w.ID, workspace.BlacklistFilter{Kind: workspace.BlacklistCompany, Limit: 10})
	is.NoErr(err)
	is.Equal(total, 2)
	is.Equal(values(page), []string{"company:globex_corp", "company:umbrella"})
	page, total, err = st.Blacklist(ctx, w.ID, workspace.BlacklistFilter{Q: "globex", Limit: 10})
	is.NoErr(err)
	is.Equal(total, 2)
	is.Equal(values(page), []string{"company:globex_corp", "domain:globex.example"})
	page, _, err = st.Blacklist(ctx, w.ID, workspace.BlacklistFilter{Q: "x_", Limit: 10}) // _ is no wildcard
	is.NoErr(err)
	is.Equal(values(page), []string{"company:globex_corp"})
	page, _, err = st.Blacklist(ctx, w.ID, workspace.BlacklistFilter{Q: "%", Limit: 10})
	is.NoErr(err)
	is.Equal(len(page), 0)

	got, err := st.BlacklistByIDs(ctx, w.ID, []string{jane.ID, umbrella.ID, apikit.NewID()})
	is.NoErr(err)
	is.Equal(values(got), []string{"company:umbrella", "linkedin:jane-doe"})
	got, err = st.BlacklistByIDs(ctx, other.ID, []string{jane.ID})
	is.NoErr(err)
	is.Equal(len(got), 0)
	got, err = st.BlacklistByIDs(ctx, w.ID, nil)
	is.NoErr(err)
	is.Equal(len(got), 0)
	got, err = st.BlacklistByValues(ctx, w.ID, workspace.BlacklistDomain, []string{"globex.example", "umbrella"})
	is.NoErr(err)
	is.Equal(len(got), 1)
	is.Equal(got[0].ID, globex.ID)

	is.NoErr(st.DeleteBlacklist(ctx, other.ID, []string{globexCo.ID})) // not its entry
	is.NoErr(st.DeleteBlacklist(ctx, w.ID, []string{globexCo.ID, globex.ID}))
	page, total, err = st.Blacklist(ctx, w.ID, workspace.BlacklistFilter{Limit: 10})
	is.NoErr(err)
	is.Equal(total, 2)
	is.Equal(values(page), []string{"company:umbrella", "linkedin:jane-doe"})
	hits, err := st.BlacklistMatch(ctx, other.ID, workspace.BlacklistDomain, []string{"globex.example"})
	is.NoErr(err)
	is.Equal(hits, map[string]bool{"globex.example": true})
}

// keys: a key reads back by id in its workspace only and with its
// clients; the workspace's keys come oldest first; a credential carries
// the key, its creator, the workspace and the clients, and a use recorded
// on the key; an unknown hash is no rows.
func keys(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, _ := open(t)
	w, ms := world(t, st, "acme", "ada@acme.test")
	c1, c2 := workspace.Named{ID: apikit.NewID(), Name: "Globex"}, workspace.Named{ID: apikit.NewID(), Name: "Initech"}
	is.NoErr(st.InsertNamed(ctx, w.ID, workspace.Clients, c1, at))
	is.NoErr(st.InsertNamed(ctx, w.ID, workspace.Clients, c2, at))
	scoped, whole := key(w, ms[0], "hash-scoped", at.Add(time.Minute)), key(w, ms[0], "hash-whole", at)
	is.NoErr(st.InsertKey(ctx, scoped, []string{c2.ID, c1.ID}))
	is.NoErr(st.InsertKey(ctx, whole, nil))

	got, err := st.KeyByID(ctx, w.ID, scoped.ID)
	is.NoErr(err)
	is.Equal(got.Hash, "hash-scoped")
	_, err = st.KeyByID(ctx, apikit.NewID(), scoped.ID) // another workspace
	is.True(db.IsNoRows(err))
	all, err := st.Keys(ctx, w.ID)
	is.NoErr(err)
	is.Equal(len(all), 2)
	is.Equal(all[0].ID, whole.ID)
	clients, err := st.KeyClientIDs(ctx, scoped.ID)
	is.NoErr(err)
	want := []string{c1.ID, c2.ID}
	if want[1] < want[0] {
		want[0], want[1] = want[1], want[0]
	}
	is.Equal(clients, want)
	clients, err = st.KeyClientIDs(ctx, whole.ID)
	is.NoErr(err)
	is.Equal(len(clients), 0)

	used := at.Add(time.Hour)
	is.NoErr(st.TouchKey(ctx, scoped.ID, used))
	cr, err := st.Credential(ctx, "hash-scoped")
	is.NoErr(err)
	is.Equal(cr.Key.ID, scoped.ID)
	is.True(cr.Key.LastUsedAt != nil && cr.Key.LastUsedAt.Equal(used))
	is.Equal(cr.Member.ID, ms[0].ID)
	is.True(cr.Member.Active)
	is.Equal(cr.Workspace.ID, w.ID)
	is.Equal(cr.Workspace.Plan, apikit.PlanPro)
	is.Equal(cr.ClientIDs, want)
	cr, err = st.Credential(ctx, "hash-whole")
	is.NoErr(err)
	is.Equal(len(cr.ClientIDs), 0)
	_, err = st.Credential(ctx, "hash-unknown")
	is.True(db.IsNoRows(err))
}

// revocation: active keys are those neither revoked nor expired; a key is
// revoked once; revoking a member's keys revokes those not revoked yet
// and names them.
func revocation(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, _ := open(t)
	w, ms := world(t, st, "acme", "ada@acme.test", "bob@acme.test")
	a1, a2, a3, b := key(w, ms[0], "hash-a1", at), key(w, ms[0], "hash-a2", at), key(w, ms[0], "hash-a3", at), key(w, ms[1], "hash-b", at)
	expires := at.Add(time.Hour)
	a3.ExpiresAt = &expires
	for _, k := range []*workspace.Key{a1, a2, a3, b} {
		is.NoErr(st.InsertKey(ctx, k, nil))
	}
	n, err := st.CountActiveKeys(ctx, w.ID, at)
	is.NoErr(err)
	is.Equal(n, 4)
	n, err = st.CountActiveKeys(ctx, w.ID, expires) // a3 expired
	is.NoErr(err)
	is.Equal(n, 3)

	first := at.Add(time.Minute)
	is.NoErr(st.RevokeKey(ctx, a1.ID, first))
	is.NoErr(st.RevokeKey(ctx, a1.ID, first.Add(time.Minute))) // revoked already: kept
	got, err := st.KeyByID(ctx, w.ID, a1.ID)
	is.NoErr(err)
	is.True(got.RevokedAt != nil && got.RevokedAt.Equal(first))
	n, err = st.CountActiveKeys(ctx, w.ID, at)
	is.NoErr(err)
	is.Equal(n, 3)

	ids, err := st.RevokeMemberKeys(ctx, ms[0].ID, first.Add(time.Hour))
	is.NoErr(err)
	is.Equal(len(ids), 2)
	is.True((ids[0] == a2.ID && ids[1] == a3.ID) || (ids[0] == a3.ID && ids[1] == a2.ID))
	ids, err = st.RevokeMemberKeys(ctx, ms[0].ID, first.Add(2*time.Hour))
	is.NoErr(err)
	is.Equal(len(ids), 0)
	n, err = st.CountActiveKeys(ctx, w.ID, at)
	is.NoErr(err)
	is.Equal(n, 1) // bob's
}

// invites: an invite reads back by its hash with its clients; pending
// ones are the unused, unexpired ones, newest first; it is used once, and
// not after it expired.
func invites(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, _ := open(t)
	w, _ := world(t, st, "acme", "owner@acme.test")
	globex := workspace.Named{ID: apikit.NewID(), Name: "Globex"}
	is.NoErr(st.InsertNamed(ctx, w.ID, workspace.Clients, globex, at))
	invite := func(hash string, created time.Time, clients ...string) *workspace.Invite {
		inv := &workspace.Invite{ID: apikit.NewID(), WorkspaceID: w.ID, Email: hash + "@acme.test", Role: apikit.RoleMember,
			ClientIDs: append([]string{}, clients...), TokenHash: hash, CreatedAt: created, ExpiresAt: created.Add(workspace.InviteValid)}
		is.NoErr(st.InsertInvite(ctx, inv))
		return inv
	}
	a := invite("a", at, globex.ID)
	invite("b", at.Add(time.Hour))
	invite("old", at.Add(-25*time.Hour))

	got, err := st.InviteByHash(ctx, "a")
	is.NoErr(err)
	is.Equal(got.Email, "a@acme.test")
	is.Equal(got.ClientIDs, []string{globex.ID})
	is.True(got.ExpiresAt.Equal(a.ExpiresAt) && got.UsedAt == nil)
	_, err = st.InviteByHash(ctx, "nope")
	is.True(db.IsNoRows(err))

	pending, err := st.PendingInvites(ctx, w.ID, at.Add(time.Hour))
	is.NoErr(err)
	is.Equal(len(pending), 2)
	is.Equal(pending[0].TokenHash, "b") // newest first; "old" expired

	used, err := st.UseInvite(ctx, "a", at.Add(time.Minute))
	is.NoErr(err)
	is.Equal(used.ID, a.ID)
	is.True(used.UsedAt != nil)
	_, err = st.UseInvite(ctx, "a", at.Add(2*time.Minute))
	is.True(db.IsNoRows(err)) // once
	_, err = st.UseInvite(ctx, "old", at)
	is.True(db.IsNoRows(err)) // expired
	_, err = st.UseInvite(ctx, "b", at.Add(25*time.Hour))
	is.True(db.IsNoRows(err))
	pending, err = st.PendingInvites(ctx, w.ID, at.Add(time.Hour))
	is.NoErr(err)
	is.Equal(len(pending), 1)
}

// passwordsAndSessions: a password is set and replaced; the candidates
// for an email are the active members with a password, in any case, in
// one workspace when it is named; a session reads back with its member,
// workspace and the member's clients, is touched, and is deleted alone,
// by idleness or with all of the member's.
func passwordsAndSessions(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, _ := open(t)
	w, ms := world(t, st, "acme", "max@acme.test", "left@acme.test", "nopw@acme.test")
	w2, ms2 := world(t, st, "beta", "max@acme.test")
	max, left := ms[0], ms[1]
	left.Active = false
	is.NoErr(st.SaveMember(ctx, left, false))
	for _, m := range []*workspace.Member{max, left, ms2[0]} {
		is.NoErr(st.SetPassword(ctx, &workspace.MemberPassword{MemberID: m.ID, Hash: "h1-" + m.ID, UpdatedAt: at}))
	}
	is.NoErr(st.SetPassword(ctx, &workspace.MemberPassword{MemberID: max.ID, Hash: "h2", UpdatedAt: at.Add(time.Hour)}))

	cands, err := st.PasswordsByEmail(ctx, "MAX@acme.test", "")
	is.NoErr(err)
	is.Equal(len(cands), 2)
	for _, c := range cands {
		if c.MemberID == max.ID {
			is.Equal(c.Hash, "h2") // replaced
			is.Equal(c.WorkspaceID, w.ID)
		} else {
			is.Equal(c.WorkspaceID, w2.ID)
		}
	}
	cands, err = st.PasswordsByEmail(ctx, "max@acme.test", "beta")
	is.NoErr(err)
	is.Equal(len(cands), 1)
	is.Equal(cands[0].MemberID, ms2[0].ID)
	for _, email := range []string{"left@acme.test", "nopw@acme.test", "nobody@acme.test"} {
		cands, err = st.PasswordsByEmail(ctx, email, "")
		is.NoErr(err)
		is.Equal(len(cands), 0) // left, no password, unknown
	}

	globex, initech := workspace.Named{ID: apikit.NewID(), Name: "Globex"}, workspace.Named{ID: apikit.NewID(), Name: "Initech"}
	is.NoErr(st.InsertNamed(ctx, w.ID, workspace.Clients, globex, at))
	is.NoErr(st.InsertNamed(ctx, w.ID, workspace.Clients, initech, at))
	is.NoErr(st.SetMemberClients(ctx, max.ID, []string{initech.ID, globex.ID}))
	is.NoErr(st.SetMemberClients(ctx, max.ID, []string{globex.ID})) // replaced
	scopes, withPassword, err := st.MemberSignIn(ctx, w.ID)
	is.NoErr(err)
	is.Equal(scopes, map[string][]string{max.ID: {globex.ID}})
	is.Equal(withPassword, map[string]bool{max.ID: true, left.ID: true})

	session := func(hash string, m *workspace.Member, last time.Time) *workspace.Session {
		se := &workspace.Session{ID: apikit.NewID(), WorkspaceID: m.WorkspaceID, MemberID: m.ID, TokenHash: hash, CreatedAt: last, LastSeenAt: last}
		is.NoErr(st.InsertSession(ctx, se))
		return se
	}
	s1 := session("s1", max, at)
	session("s2", max, at.Add(-13*time.Hour))
	session("s3", ms2[0], at)
	c, err := st.SessionCredential(ctx, "s1")
	is.NoErr(err)
	is.Equal(c.Session.ID, s1.ID)
	is.True(c.Session.LastSeenAt.Equal(at))
	is.Equal(c.Member.Email, "max@acme.test")
	is.Equal(c.Member.Role, apikit.RoleOwner)
	is.True(c.Member.Active)
	is.Equal(c.Workspace.Name, "acme")
	is.Equal(c.ClientIDs, []string{globex.ID})
	c, err = st.SessionCredential(ctx, "s3")
	is.NoErr(err)
	is.Equal(len(c.ClientIDs), 0) // the whole workspace
	_, err = st.SessionCredential(ctx, "nope")
	is.True(db.IsNoRows(err))

	is.NoErr(st.TouchSession(ctx, s1.ID, at.Add(time.Minute)))
	c, err = st.SessionCredential(ctx, "s1")
	is.NoErr(err)
	is.True(c.Session.LastSeenAt.Equal(at.Add(time.Minute)))

	is.NoErr(st.DeleteSessions(ctx, max.ID, at.Add(-12*time.Hour))) // the idle one
	_, err = st.SessionCredential(ctx, "s2")
	is.True(db.IsNoRows(err))
	_, err = st.SessionCredential(ctx, "s1")
	is.NoErr(err)
	is.NoErr(st.DeleteSession(ctx, "s3"))
	_, err = st.SessionCredential(ctx, "s3")
	is.True(db.IsNoRows(err))
	is.NoErr(st.DeleteSessions(ctx, max.ID, time.Time{})) // all
	_, err = st.SessionCredential(ctx, "s1")
	is.True(db.IsNoRows(err))
}

// signInFailures: an attempt starts a window or counts in the open one
// while it is under the limit; a read sees the windows started after its
// time; a release takes one back from its own window only; deleting takes
// keys, and the windows that ended.
func signInFailures(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, _ := open(t)
	const window = 15 * time.Minute
	const limit = 3
	reserve := func(key string, now time.Time) (workspace.SignInFailure, bool) {
		t.Helper()
		f, ok, err := st.ReserveSignInFailure(ctx, key, limit, now.Add(-window), now)
		is.NoErr(err)
		return f, ok
	}
	read := func(now time.Time, keys ...string) map[string]workspace.SignInFailure {
		t.Helper()
		fs, err := st.SignInFailures(ctx, keys, now.Add(-window))
		is.NoErr(err)
		out := map[string]workspace.SignInFailure{}
		for _, f := range fs {
			out[f.Key] = f
		}
		return out
	}
	a, b := "account ann@acme.test", "address 192.0.2.1"
	f, ok := reserve(a, at)
	is.True(ok)
	is.Equal(f.Failures, 1)
	is.True(f.WindowStart.Equal(at))
	reserve(a, at.Add(time.Minute))
	f, ok = reserve(a, at.Add(time.Minute))
	is.True(ok)
	is.Equal(f.Failures, 3)
	is.True(f.WindowStart.Equal(at)) // the window's start stays
	_, ok = reserve(a, at.Add(2*time.Minute))
	is.True(!ok) // at the limit: refused, and not counted
	reserve(b, at.Add(time.Minute))
	got := read(at.Add(2*time.Minute), a, b, "account nobody")
	is.Equal(len(got), 2)
	is.Equal(got[a].Failures, limit)
	is.Equal(got[b].Failures, 1)
	// A release takes one back from its window, and lets one more in.
	is.NoErr(st.ReleaseSignInFailure(ctx, a, at))
	is.NoErr(st.ReleaseSignInFailure(ctx, a, at.Add(time.Second))) // another window's: nothing
	is.Equal(read(at.Add(2*time.Minute), a)[a].Failures, limit-1)
	_, ok = reserve(a, at.Add(3*time.Minute))
	is.True(ok)
	// After the window, a read sees none, and an attempt starts a new one.
	later := at.Add(window + 2*time.Minute)
	is.Equal(len(read(later, a, b)), 0)
	f, ok = reserve(a, later)
	is.True(ok)
	is.Equal(f.Failures, 1)
	is.True(f.WindowStart.Equal(later))
	// Deleting: a's by key; b's because its window ended (it started at
	// at+1m, before the time given).
	is.NoErr(st.DeleteSignInFailures(ctx, []string{a}, at.Add(2*time.Minute)))
	is.Equal(len(read(at, a, b)), 0) // nothing left, however far back
	reserve(b, later)
	is.NoErr(st.DeleteSignInFailures(ctx, nil, time.Time{})) // nothing to delete by
	is.Equal(read(later, b)[b].Failures, 1)
}
