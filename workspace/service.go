package workspace

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// Service holds the workspace rules.
type Service struct {
	db     *db.DB
	store  Store
	clock  apikit.Clock
	events *events.Log
	auth   authCache
	// passwords are argon2id's costs for new passwords (signin.go).
	passwords PasswordParams
	// gate bounds the password hashes run at once (gate.go).
	gate *PasswordGate
	// byID and blacklists read a workspace and its blacklist, which the
	// runner does every tick: prepared once per connection.
	byID, blacklists string
	// failuresSwept is when this process last deleted the failed sign-in
	// counts whose window ended (signin.go).
	failuresSwept struct {
		sync.Mutex
		at time.Time
	}
}

// NewService returns a Service on d.
func NewService(d *db.DB, clock apikit.Clock) *Service {
	return &Service{db: d, store: NewBunStore(d), clock: clock, events: events.NewLog(d, clock), gate: DefaultPasswordGate(),
		byID:       d.NewSelect().Model((*Workspace)(nil)).Where("id = ?", bun.Safe("?")).String(),
		blacklists: d.NewSelect().Model((*BlacklistEntry)(nil)).Column("kind", "value").Where("workspace_id = ?", bun.Safe("?")).Limit(MaxBlacklistSnapshot + 1).String()}
}

// EventKeyRevoked is the activity-log kind written when a key is revoked,
// by hand or because the member who created it left.
const EventKeyRevoked = "key.revoked"

// Reasons a key is revoked, in the key.revoked event.
const (
	RevokedByRequest  = "revoked"
	RevokedMemberLeft = "member_left"
)

// revoked records the revocation of keyIDs, created by memberID, in the
// activity log. Revocations come from the command line and setup files, so
// the event names no actor.
func (s *Service) revoked(ctx context.Context, workspaceID, memberID, reason string, keyIDs ...string) error {
	evs := make([]events.Event, 0, len(keyIDs))
	for _, id := range keyIDs {
		evs = append(evs, events.Event{WorkspaceID: workspaceID, Kind: EventKeyRevoked,
			Data: map[string]any{"key_id": id, "key_member_id": memberID, "reason": reason}})
	}
	return s.events.EmitMany(ctx, evs)
}

// setupNotFound is E_NOT_FOUND for what setup files and the command line
// name: workspaces, members, clients and keys. Its remedy speaks of those,
// not of API keys and their scope.
func setupNotFound(what, remedy string) *apikit.Error {
	return &apikit.Error{Code: apikit.ENotFound, Message: what + " was not found.", Remedy: remedy}
}

// ByName returns the workspace named name.
// Returns E_NOT_FOUND if there is none.
func (s *Service) ByName(ctx context.Context, name string) (*Workspace, error) {
	w, err := s.store.WorkspaceByName(ctx, name)
	if db.IsNoRows(err) {
		return nil, setupNotFound(fmt.Sprintf("Workspace %q", name),
			"Check the name's spelling and the database (--db or LEADLINE_DB); workspaces are created by `leadline apply -f setup.yaml`.")
	}
	return w, err
}

// Catalog returns the workspace's clients, stages, tags and lists, with the
// clients limited to the principal's scope.
func (s *Service) Catalog(ctx context.Context, p apikit.Principal) (Catalog, error) {
	var c Catalog
	var err error
	var clientIDs []string
	if p.Scoped() {
		clientIDs = p.ClientIDs
	}
	if c.Clients, err = s.store.Named(ctx, p.WorkspaceID, Clients, clientIDs); err != nil {
		return c, err
	}
	if c.Stages, err = s.store.Named(ctx, p.WorkspaceID, Stages, nil); err != nil {
		return c, err
	}
	if c.Tags, err = s.store.Named(ctx, p.WorkspaceID, Tags, nil); err != nil {
		return c, err
	}
	if c.Lists, err = s.store.Named(ctx, p.WorkspaceID, Lists, nil); err != nil {
		return c, err
	}
	for _, l := range []*[]Named{&c.Clients, &c.Stages, &c.Tags, &c.Lists} {
		if *l == nil {
			*l = []Named{}
		}
	}
	return c, nil
}

// Lookup returns the entries of kind among ids that exist in the workspace.
func (s *Service) Lookup(ctx context.Context, workspaceID string, kind Kind, ids []string) ([]Named, error) {
	if ids == nil {
		ids = []string{}
	}
	return s.store.Named(ctx, workspaceID, kind, ids)
}

// Person is who a blacklist check is about.
type Person struct {
	Company  string
	Emails   []string
	LinkedIn []string // public identifiers and member ids
}

// BlacklistHit returns which blacklist entry a person matches, as
// "kind:value", or "" when none does. Company names and email domains are
// compared case-insensitively.
func (s *Service) BlacklistHit(ctx context.Context, workspaceID, company string, emails, linkedin []string) (string, error) {
	hits, err := s.BlacklistHits(ctx, workspaceID, []Person{{Company: company, Emails: emails, LinkedIn: linkedin}})
	if err != nil {
		return "", err
	}
	return hits[0], nil
}

// BlacklistHits checks many people at once, with one query per kind of
// entry, and returns for each the entry it matches ("kind:value") or "".
func (s *Service) BlacklistHits(ctx context.Context, workspaceID string, people []Person) ([]string, error) {
	return blacklistHits(people, func(kind string, values []string) (map[string]bool, error) {
		return s.store.BlacklistMatch(ctx, workspaceID, kind, values)
	})
}

// Blacklist is a workspace's whole blacklist in memory, for a runner that
// checks many leads in a short time.
type Blacklist struct {
	entries map[string]map[string]bool // kind -> value
}

// MaxBlacklistSnapshot is the size up to which a blacklist is read into
// memory; a larger one is checked in the database.
const MaxBlacklistSnapshot = 10000

// BlacklistSnapshot reads the workspace's blacklist into memory, or returns
// nil when it has more than MaxBlacklistSnapshot entries.
func (s *Service) BlacklistSnapshot(ctx context.Context, workspaceID string) (*Blacklist, error) {
	var rows []BlacklistEntry
	if err := s.db.SelectPrepared(ctx, &rows, s.blacklists, workspaceID); err != nil {
		return nil, err
	}
	if len(rows) > MaxBlacklistSnapshot {
		return nil, nil
	}
	b := &Blacklist{entries: map[string]map[string]bool{}}
	for _, r := range rows {
		if b.entries[r.Kind] == nil {
			b.entries[r.Kind] = map[string]bool{}
		}
		b.entries[r.Kind][r.Value] = true
	}
	return b, nil
}

// Hits returns for each person the entry it matches ("kind:value") or "",
// as BlacklistHits does.
func (b *Blacklist) Hits(people []Person) []string {
	out, _ := blacklistHits(people, func(kind string, _ []string) (map[string]bool, error) { return b.entries[kind], nil })
	return out
}

// blacklistHits matches people against the entries listed returns for each
// kind: company names, email domains and LinkedIn identifiers, compared
// lower-case.
func blacklistHits(people []Person, listed func(kind string, values []string) (map[string]bool, error)) ([]string, error) {
	type check struct {
		kind   string
		values func(p Person) []string
	}
	checks := []check{
		{BlacklistCompany, func(p Person) []string { return nonEmptyLower(p.Company) }},
		{BlacklistDomain, func(p Person) []string {
			var domains []string
			for _, e := range p.Emails {
				if _, d, ok := strings.Cut(e, "@"); ok && d != "" {
					domains = append(domains, strings.ToLower(d))
				}
			}
			return domains
		}},
		{BlacklistLinkedIn, func(p Person) []string { return nonEmptyLower(p.LinkedIn...) }},
	}
	out := make([]string, len(people))
	for _, c := range checks {
		var all []string
		for _, p := range people {
			all = append(all, c.values(p)...)
		}
		hits, err := listed(c.kind, slices.Compact(slices.Sorted(slices.Values(all))))
		if err != nil {
			return nil, err
		}
		for i, p := range people {
			if out[i] != "" {
				continue
			}
			for _, v := range c.values(p) {
				if hits[v] {
					out[i] = c.kind + ":" + v
					break
				}
			}
		}
	}
	return out, nil
}

func nonEmptyLower(vals ...string) []string {
	var out []string
	for _, v := range vals {
		if v = strings.ToLower(strings.TrimSpace(v)); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// KeyInput is what creating a key takes.
type KeyInput struct {
	Workspace   string
	MemberEmail string
	Role        apikit.Role
	Clients     []string // client names
	ExpiresAt   *time.Time
	Name        string
}

// CreateKey creates an API key and returns it with its secret, which is
// never stored and cannot be shown again.
//
// Returns E_NOT_FOUND for an unknown workspace, member or client,
// E_FORBIDDEN if the member may not create keys, the role is above what
// they may hand out or the key would reach a client the member does not
// see, E_PAYLOAD_INVALID for a bad role or a past expiry and
// E_TOO_MANY when the workspace already has 25 active keys.
func (s *Service) CreateKey(ctx context.Context, in KeyInput) (*Key, string, error) {
	if err := apikit.CheckText("", in); err != nil {
		return nil, "", err
	}
	var key *Key
	var secret string
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		now := db.Now(ctx, s.clock)
		w, err := s.ByName(ctx, in.Workspace)
		if err != nil {
			return err
		}
		if err := s.store.LockWorkspace(ctx, w.ID); err != nil {
			return err
		}
		m, err := s.store.MemberByEmail(ctx, w.ID, in.MemberEmail)
		if db.IsNoRows(err) || (err == nil && !m.Active) {
			return setupNotFound(fmt.Sprintf("Active member %q of workspace %q", in.MemberEmail, in.Workspace),
				"List the member under the workspace's members: in the setup file (active: true) and run `leadline apply`.")
		} else if err != nil {
			return err
		}
		if !m.Role.AtLeast(apikit.RoleManager) {
			return apikit.Forbidden(fmt.Sprintf("Member %s is a %s; only owners and managers create keys.", m.Email, m.Role),
				"Create the key as an owner or a manager of the workspace.")
		}
		switch in.Role {
		case apikit.RoleManager, apikit.RoleMember, apikit.RoleClientViewer:
		case apikit.RoleOwner:
			return apikit.Invalid("A key's role is never owner.", "Use manager, member or client_viewer.")
		default:
			return apikit.Invalid(fmt.Sprintf("Unknown role %q.", in.Role), "Use manager, member or client_viewer.")
		}
		if !m.Role.AtLeast(in.Role) {
			return apikit.Forbidden(fmt.Sprintf("A %s cannot create a %s key.", m.Role, in.Role),
				"Choose a role no higher than the creating member's.")
		}
		if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
			return apikit.Invalid("The expiry is in the past.", "Give an expiry date in the future, or none for a key valid until revoked.")
		}
		clientIDs, names, err := s.clientIDsByName(ctx, w, in.Clients)
		if err != nil {
			return err
		}
		// A member limited to some clients holds keys within them, as
		// they invite only within them.
		scopes, _, err := s.store.MemberSignIn(ctx, w.ID)
		if err != nil {
			return err
		}
		if mine := scopes[m.ID]; len(mine) > 0 && (len(clientIDs) == 0 || slices.ContainsFunc(clientIDs, func(c string) bool { return !slices.Contains(mine, c) })) {
			return apikit.Forbidden(fmt.Sprintf("Member %s sees only some clients; a key they create must be limited to clients among theirs.", m.Email),
				"Name one or more of the member's clients (--client), or create the key as a member of the whole workspace.")
		}
		active, err := s.store.CountActiveKeys(ctx, w.ID, now)
		if err != nil {
			return err
		}
		if active >= MaxActiveKeys {
			return apikit.TooMany(fmt.Sprintf("Workspace %q already has %d active keys.", w.Name, MaxActiveKeys),
				"Revoke a key you no longer use ('leadline keys revoke'), then create the new one.")
		}
		var hash string
		secret, hash = newSecret()
		name := in.Name
		if name == "" {
			name = string(in.Role) + " key"
		}
		key = &Key{ID: apikit.NewID(), WorkspaceID: w.ID, MemberID: m.ID, Name: name, Role: string(in.Role),
			Hash: hash, Prefix: secret[:len(keyPrefix)+8], ExpiresAt: in.ExpiresAt, CreatedAt: now,
			MemberEmail: m.Email, ClientNames: names}
		if key.ClientNames == nil {
			key.ClientNames = []string{}
		}
		if err := s.store.InsertKey(ctx, key, clientIDs); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return key, secret, nil
}

// Keys lists every key of the workspace, revoked and expired ones included.
func (s *Service) Keys(ctx context.Context, workspace string) ([]Key, error) {
	w, err := s.ByName(ctx, workspace)
	if err != nil {
		return nil, err
	}
	keys, err := s.store.Keys(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	members, err := s.store.Members(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	clients, err := s.store.Named(ctx, w.ID, Clients, nil)
	if err != nil {
		return nil, err
	}
	for i := range keys {
		k := &keys[i]
		for _, m := range members {
			if m.ID == k.MemberID {
				k.MemberEmail = m.Email
			}
		}
		ids, err := s.store.KeyClientIDs(ctx, k.ID)
		if err != nil {
			return nil, err
		}
		k.ClientNames = []string{}
		for _, c := range clients {
			if slices.Contains(ids, c.ID) {
				k.ClientNames = append(k.ClientNames, c.Name)
			}
		}
	}
	return keys, nil
}

// RevokeKey revokes the key with id in the workspace; revoking twice is a
// no-op. Returns E_NOT_FOUND for an unknown key.
func (s *Service) RevokeKey(ctx context.Context, workspace, id string) (*Key, error) {
	w, err := s.ByName(ctx, workspace)
	if err != nil {
		return nil, err
	}
	if !apikit.ValidID(id) {
		return nil, setupNotFound(fmt.Sprintf("Key %q of workspace %q", id, workspace),
			"Run `leadline keys list --workspace NAME` for the ids of the workspace's keys.")
	}
	k, err := s.store.KeyByID(ctx, w.ID, id)
	if db.IsNoRows(err) {
		return nil, setupNotFound(fmt.Sprintf("Key %q of workspace %q", id, workspace),
			"Run `leadline keys list --workspace NAME` for the ids of the workspace's keys.")
	} else if err != nil {
		return nil, err
	}
	if k.RevokedAt == nil {
		var now time.Time
		err := s.db.InTx(ctx, func(ctx context.Context) error {
			now = db.Now(ctx, s.clock)
			if err := s.store.RevokeKey(ctx, k.ID, now); err != nil {
				return err
			}
			return s.revoked(ctx, w.ID, k.MemberID, RevokedByRequest, k.ID)
		})
		if err != nil {
			return nil, err
		}
		k.RevokedAt = &now
	}
	return k, nil
}

// touchEvery is how stale last_used_at may get before a request refreshes
// it, so that reads do not each cost a write.
const touchEvery = time.Minute

// Authenticate turns a secret into the principal it acts as. The creator's
// current membership decides at every call: a creator who left makes the
// key invalid, a lowered role lowers the key's rights.
//
// Returns E_UNAUTHORIZED for a missing, unknown, expired or revoked key or
// one whose creator left, and E_PLAN_SUSPENDED for a suspended workspace.
func (s *Service) Authenticate(ctx context.Context, secret string) (apikit.Principal, error) {
	p, _, err := s.authenticate(ctx, secret)
	return p, err
}

// authenticate is Authenticate, also returning the credential it read.
func (s *Service) authenticate(ctx context.Context, secret string) (apikit.Principal, *Credential, error) {
	var p apikit.Principal
	if secret == "" {
		return p, nil, apikit.Unauthorized("No API key was sent.")
	}
	c, err := s.store.Credential(ctx, hashSecret(secret))
	if db.IsNoRows(err) {
		return p, nil, apikit.Unauthorized("The API key is not valid.")
	} else if err != nil {
		return p, nil, err
	}
	k, m, w := &c.Key, &c.Member, &c.Workspace
	now := s.clock.Now()
	if k.RevokedAt != nil {
		return p, nil, apikit.Unauthorized("The API key was revoked.")
	}
	if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
		return p, nil, apikit.Unauthorized("The API key has expired.")
	}
	if !m.Active {
		return p, nil, apikit.Unauthorized("The member who created this API key has left the workspace.")
	}
	clients, ok := keyScope(c.ClientIDs, c.MemberClientIDs)
	if !ok {
		return p, nil, apikit.Unauthorized("The API key's clients are no longer among the clients of the member who created it.")
	}
	if w.Suspended {
		return p, nil, apikit.PlanSuspended()
	}
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= touchEvery {
		if err := s.db.InTx(ctx, func(ctx context.Context) error { return s.store.TouchKey(ctx, k.ID, now) }); err != nil {
			return p, nil, err
		}
		k.LastUsedAt = &now
	}
	return apikit.Principal{
		WorkspaceID: w.ID, WorkspaceName: w.Name, Timezone: w.Timezone, Plan: w.Plan,
		KeyID: k.ID, MemberID: m.ID, MemberEmail: m.Email,
		Role: apikit.MinRole(apikit.Role(k.Role), m.Role), ClientIDs: clients,
	}, c, nil
}

// keyScope is the clients a key acts for, as its role is the lower of its
// own and its creator's: the key's clients that its creator still sees
// (none on either side: the whole workspace on that side). ok is false
// when none is left: the key's clients are all outside the creator's.
func keyScope(key, member []string) (clients []string, ok bool) {
	switch {
	case len(member) == 0:
		return key, true
	case len(key) == 0:
		return member, true
	}
	for _, c := range key {
		if slices.Contains(member, c) {
			clients = append(clients, c)
		}
	}
	return clients, len(clients) > 0
}

// AuthenticateRead is Authenticate for a read, which on Postgres may answer
// from this process's memory of the key: then cached is true, and version
// is the workspace's authentication version the principal was read at. The
// caller must compare it with the version its read's rate count returns
// (Postgres keeps it in auth_versions, raised by triggers whenever
// anything authentication reads changes) and call Forget and authenticate
// again when they differ. A key that expires, or whose last use is due to
// be recorded, is read again. On SQLite every call reads the database,
// which its process does without a round trip.
func (s *Service) AuthenticateRead(ctx context.Context, secret string) (p apikit.Principal, version int64, cached bool, err error) {
	if s.db.Engine != db.Postgres || secret == "" {
		p, err = s.Authenticate(ctx, secret)
		return p, 0, false, err
	}
	hash := hashSecret(secret)
	now := s.clock.Now()
	if a, ok := s.auth.get(hash); ok && (a.expiresAt == nil || now.Before(*a.expiresAt)) && now.Sub(a.lastUsed) < touchEvery {
		return a.p, a.version, true, nil
	}
	p, c, err := s.authenticate(ctx, secret)
	if err != nil {
		s.auth.forget(hash)
		return p, 0, false, err
	}
	s.auth.put(hash, cachedAuth{p: p, version: c.AuthVersion, expiresAt: c.Key.ExpiresAt, lastUsed: *c.Key.LastUsedAt})
	return p, c.AuthVersion, false, nil
}

// Forget drops this process's memory of the key with secret.
func (s *Service) Forget(secret string) {
	s.auth.forget(hashSecret(secret))
}

// authCache is what a process remembers of the keys it authenticated,
// by the hash of their secret.
type authCache struct {
	mu sync.Mutex
	m  map[string]cachedAuth
}

type cachedAuth struct {
	p         apikit.Principal
	version   int64
	expiresAt *time.Time
	lastUsed  time.Time
}

// maxCachedKeys bounds the memory of keys; past it the memory starts over.
const maxCachedKeys = 10_000

func (c *authCache) get(hash string) (cachedAuth, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[hash]
	return a, ok
}

func (c *authCache) put(hash string, a cachedAuth) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedKeys {
		c.m = map[string]cachedAuth{}
	}
	c.m[hash] = a
}

func (c *authCache) forget(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, hash)
}

// WorkspaceByID returns the workspace with id, for the engine.
func (s *Service) WorkspaceByID(ctx context.Context, id string) (*Workspace, error) {
	var got []Workspace
	err := s.db.SelectPrepared(ctx, &got, s.byID, id)
	return db.First(got, err)
}

// IsMember reports whether memberID is an active member of the workspace,
// for assigning work to people.
func (s *Service) IsMember(ctx context.Context, workspaceID, memberID string) (bool, error) {
	if !apikit.ValidID(memberID) {
		return false, nil
	}
	return s.db.IDB(ctx).NewSelect().Model((*Member)(nil)).
		Where("workspace_id = ? AND id = ? AND active", workspaceID, memberID).Exists(ctx)
}

// Named returns the workspace's entries of kind, all of them when ids is
// nil, else those among ids that exist, by name.
func (s *Service) Named(ctx context.Context, workspaceID string, kind Kind, ids []string) ([]Named, error) {
	return s.store.Named(ctx, workspaceID, kind, ids)
}

// NamedByName returns the workspace's entries of kind among names, by
// name; a name the workspace does not have is left out.
func (s *Service) NamedByName(ctx context.Context, workspaceID string, kind Kind, names []string) ([]Named, error) {
	return s.store.NamedByName(ctx, workspaceID, kind, names)
}

// ActiveMemberID returns the id of the workspace's active member with
// email (compared case-insensitively), or "" when it has none: the member
// a sequence's rule assigns work to.
func (s *Service) ActiveMemberID(ctx context.Context, workspaceID, email string) (string, error) {
	m, err := s.store.MemberByEmail(ctx, workspaceID, strings.TrimSpace(email))
	if db.IsNoRows(err) || (err == nil && !m.Active) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return m.ID, nil
}
