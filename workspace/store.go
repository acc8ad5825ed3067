package workspace

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// Store is the persistence the workspace service needs. BunStore serves it
// on SQLite and Postgres; every method joins the transaction in ctx.
type Store interface {
	// WorkspaceByName returns the workspace named name.
	// Returns sql.ErrNoRows (db.IsNoRows) when there is none.
	WorkspaceByName(ctx context.Context, name string) (*Workspace, error)
	// LockWorkspace locks the workspace's row for the transaction in ctx,
	// so that writers that check a per-workspace limit take turns.
	LockWorkspace(ctx context.Context, id string) error
	// SaveWorkspace inserts w or updates it.
	SaveWorkspace(ctx context.Context, w *Workspace, insert bool) error
	// Members returns the workspace's members, active or not, by email.
	Members(ctx context.Context, workspaceID string) ([]Member, error)
	// MemberByEmail returns the workspace's member with email, matched
	// case-insensitively. Returns sql.ErrNoRows when there is none.
	MemberByEmail(ctx context.Context, workspaceID, email string) (*Member, error)
	// SaveMember inserts m or updates it.
	SaveMember(ctx context.Context, m *Member, insert bool) error
	// Named returns the workspace's entries of kind by name: all of them
	// when ids is nil, else those among ids (none for an empty ids).
	Named(ctx context.Context, workspaceID string, kind Kind, ids []string) ([]Named, error)
	// NamedByName returns the workspace's entries of kind among names, by
	// name; unknown names are left out.
	NamedByName(ctx context.Context, workspaceID string, kind Kind, names []string) ([]Named, error)
	// InsertNamed adds n to the workspace's entries of kind.
	InsertNamed(ctx context.Context, workspaceID string, kind Kind, n Named, at time.Time) error
	// InsertBlacklist adds r unless the workspace lists its value under
	// its kind already, and reports whether it added it.
	InsertBlacklist(ctx context.Context, r *BlacklistEntry) (bool, error)
	// BlacklistMatch returns which of values the workspace lists under
	// kind; values are compared as they are (entries are lower-case).
	BlacklistMatch(ctx context.Context, workspaceID, kind string, values []string) (map[string]bool, error)
	// Blacklist returns a page of the workspace's entries by kind and
	// value (then id), of f.Kind when it is set, whose value contains f.Q
	// (as given: entries are lower-case), with how many match in all.
	Blacklist(ctx context.Context, workspaceID string, f BlacklistFilter) ([]BlacklistEntry, int, error)
	// BlacklistByIDs returns the workspace's entries among ids.
	BlacklistByIDs(ctx context.Context, workspaceID string, ids []string) ([]BlacklistEntry, error)
	// BlacklistByValues returns the workspace's entries of kind among
	// values.
	BlacklistByValues(ctx context.Context, workspaceID, kind string, values []string) ([]BlacklistEntry, error)
	// DeleteBlacklist deletes the workspace's entries among ids.
	DeleteBlacklist(ctx context.Context, workspaceID string, ids []string) error
	// InsertKey adds k, limited to clientIDs when there are any.
	InsertKey(ctx context.Context, k *Key, clientIDs []string) error
	// Credential returns the key whose secret hashes to hash, with its
	// creator, workspace and clients. Returns sql.ErrNoRows when there
	// is none.
	Credential(ctx context.Context, hash string) (*Credential, error)
	// KeyByID returns the workspace's key with id. Returns sql.ErrNoRows
	// when the workspace has none.
	KeyByID(ctx context.Context, workspaceID, id string) (*Key, error)
	// Keys returns the workspace's keys, revoked ones too, oldest first.
	Keys(ctx context.Context, workspaceID string) ([]Key, error)
	// KeyClientIDs returns the clients a key is limited to, sorted; none
	// for a key of the whole workspace.
	KeyClientIDs(ctx context.Context, keyID string) ([]string, error)
	// CountActiveKeys counts the workspace's keys neither revoked nor
	// expired at now.
	CountActiveKeys(ctx context.Context, workspaceID string, now time.Time) (int, error)
	// RevokeKey revokes the key at at, unless it is revoked already.
	RevokeKey(ctx context.Context, id string, at time.Time) error
	// RevokeMemberKeys revokes at at the keys the member created that are
	// not revoked yet, and returns their ids.
	RevokeMemberKeys(ctx context.Context, memberID string, at time.Time) ([]string, error)
	// TouchKey records the key's last use at at.
	TouchKey(ctx context.Context, id string, at time.Time) error

	// Sign-in (signin.go).

	// InsertInvite adds inv.
	InsertInvite(ctx context.Context, inv *Invite) error
	// InviteByHash returns the invite whose token hashes to hash, used or
	// not. Returns sql.ErrNoRows when there is none.
	InviteByHash(ctx context.Context, hash string) (*Invite, error)
	// PendingInvites returns the workspace's invites neither used nor
	// expired at now, newest first.
	PendingInvites(ctx context.Context, workspaceID string, now time.Time) ([]Invite, error)
	// UseInvite marks the invite whose token hashes to hash used at now
	// and returns it. Returns sql.ErrNoRows when there is no such invite
	// unused and unexpired at now; of two calls at once, one gets it.
	UseInvite(ctx context.Context, hash string, now time.Time) (*Invite, error)
	// SetMemberClients replaces the member's client scope with clientIDs
	// (none: the whole workspace).
	SetMemberClients(ctx context.Context, memberID string, clientIDs []string) error
	// SetPassword inserts or replaces the member's password hash.
	SetPassword(ctx context.Context, p *MemberPassword) error
	// PasswordsByEmail returns the active members with email (matched
	// case-insensitively) who have a password, in the workspace named
	// workspace when it is not empty.
	PasswordsByEmail(ctx context.Context, email, workspace string) ([]PasswordCandidate, error)
	// InsertSession adds se.
	InsertSession(ctx context.Context, se *Session) error
	// SessionCredential returns the session whose token hashes to hash,
	// with its member, workspace and the member's clients (sorted).
	// Returns sql.ErrNoRows when there is none.
	SessionCredential(ctx context.Context, hash string) (*SessionCredential, error)
	// TouchSession records the session's last use at at.
	TouchSession(ctx context.Context, id string, at time.Time) error
	// DeleteSession deletes the session whose token hashes to hash, if
	// any.
	DeleteSession(ctx context.Context, hash string) error
	// DeleteSessions deletes the member's sessions last used before
	// idleBefore, or all of them for the zero time.
	DeleteSessions(ctx context.Context, memberID string, idleBefore time.Time) error
	// MemberSignIn returns, per member of the workspace, their client ids
	// (members of the whole workspace are left out) and whether they have
	// a password.
	MemberSignIn(ctx context.Context, workspaceID string) (map[string][]string, map[string]bool, error)
	// SignInFailures returns the failure counts of keys whose window
	// started after since.
	SignInFailures(ctx context.Context, keys []string, since time.Time) ([]SignInFailure, error)
	// ReserveSignInFailure counts an attempt under key while its count is
	// under limit: in its window when that started after since, else in a
	// new window starting at now. It returns the count and its window, or
	// false when the open window's count has reached limit (nothing is
	// counted then). Counting and deciding are one statement, so attempts
	// made at once, from any process, never count past limit.
	ReserveSignInFailure(ctx context.Context, key string, limit int, since, now time.Time) (SignInFailure, bool, error)
	// ReleaseSignInFailure takes one attempt back from key's count in the
	// window that started at windowStart (none when that window is gone).
	ReleaseSignInFailure(ctx context.Context, key string, windowStart time.Time) error
	// DeleteSignInFailures deletes the counts of keys, and every count
	// whose window started at or before endedBefore (none for the zero
	// time).
	DeleteSignInFailures(ctx context.Context, keys []string, endedBefore time.Time) error
}

var _ Store = (*BunStore)(nil)

// BunStore is the Store on either engine.
type BunStore struct{ db *db.DB }

// NewBunStore returns the Store backed by d.
func NewBunStore(d *db.DB) *BunStore { return &BunStore{db: d} }

func (s *BunStore) idb(ctx context.Context) bun.IDB { return s.db.IDB(ctx) }

func (s *BunStore) WorkspaceByName(ctx context.Context, name string) (*Workspace, error) {
	w := new(Workspace)
	if err := s.idb(ctx).NewSelect().Model(w).Where("name = ?", name).Scan(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// LockWorkspace serialises writers that check a per-workspace limit. On
// SQLite the immediate transaction already holds the only write lock.
func (s *BunStore) LockWorkspace(ctx context.Context, id string) error {
	if s.db.Engine != db.Postgres {
		return nil
	}
	_, err := s.idb(ctx).NewRaw(`SELECT id FROM workspaces WHERE id = ? FOR UPDATE`, id).Exec(ctx)
	return err
}

func (s *BunStore) SaveWorkspace(ctx context.Context, w *Workspace, insert bool) error {
	if insert {
		_, err := s.idb(ctx).NewInsert().Model(w).Exec(ctx)
		return err
	}
	_, err := s.idb(ctx).NewUpdate().Model(w).WherePK().Exec(ctx)
	return err
}

func (s *BunStore) Members(ctx context.Context, workspaceID string) ([]Member, error) {
	var ms []Member
	err := s.idb(ctx).NewSelect().Model(&ms).Where("workspace_id = ?", workspaceID).Order("email").Scan(ctx)
	return ms, err
}

func (s *BunStore) MemberByEmail(ctx context.Context, workspaceID, email string) (*Member, error) {
	m := new(Member)
	err := s.idb(ctx).NewSelect().Model(m).Where("workspace_id = ? AND lower(email) = ?", workspaceID, strings.ToLower(email)).Scan(ctx)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (s *BunStore) SaveMember(ctx context.Context, m *Member, insert bool) error {
	if insert {
		_, err := s.idb(ctx).NewInsert().Model(m).Exec(ctx)
		return err
	}
	_, err := s.idb(ctx).NewUpdate().Model(m).WherePK().Exec(ctx)
	return err
}

// Named returns the workspace's entries of kind, all of them when ids is
// nil, else only those among ids.
func (s *BunStore) Named(ctx context.Context, workspaceID string, kind Kind, ids []string) ([]Named, error) {
	q := s.idb(ctx).NewSelect().Table(string(kind)).Column("id", "name").Where("workspace_id = ?", workspaceID)
	if ids != nil {
		if len(ids) == 0 {
			return nil, nil
		}
		q = q.Where("id IN (?)", bun.In(ids))
	}
	var out []Named
	err := q.Order("name").Scan(ctx, &out)
	return out, err
}

func (s *BunStore) NamedByName(ctx context.Context, workspaceID string, kind Kind, names []string) ([]Named, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var out []Named
	err := s.idb(ctx).NewSelect().Table(string(kind)).Column("id", "name").
		Where("workspace_id = ?", workspaceID).Where("name IN (?)", bun.In(names)).Order("name").Scan(ctx, &out)
	return out, err
}

func (s *BunStore) InsertNamed(ctx context.Context, workspaceID string, kind Kind, n Named, at time.Time) error {
	row := &namedRow{ID: n.ID, WorkspaceID: workspaceID, Name: n.Name, CreatedAt: at}
	_, err := s.idb(ctx).NewInsert().Model(row).ModelTableExpr(string(kind)).Exec(ctx)
	return err
}

func (s *BunStore) InsertBlacklist(ctx context.Context, r *BlacklistEntry) (bool, error) {
	return db.InsertIfAbsent(ctx, s.idb(ctx), r, "workspace_id, kind, value")
}

// BlacklistMatch returns which of values are on the workspace's blacklist
// of kind. Values are stored and compared lower-case.
func (s *BunStore) BlacklistMatch(ctx context.Context, workspaceID, kind string, values []string) (map[string]bool, error) {
	return db.Listed(ctx, s.idb(ctx), "blacklist", workspaceID, kind, values)
}

func (s *BunStore) Blacklist(ctx context.Context, workspaceID string, f BlacklistFilter) ([]BlacklistEntry, int, error) {
	l := db.List[BlacklistEntry](s.idb(ctx), "", workspaceID, nil).Equal("kind", f.Kind)
	if f.Q != "" {
		l = l.Where(`value LIKE ? ESCAPE '\'`, db.LikePattern(f.Q))
	}
	return l.Page(ctx, "kind, value, id", f.Limit, f.Offset)
}

func (s *BunStore) BlacklistByIDs(ctx context.Context, workspaceID string, ids []string) ([]BlacklistEntry, error) {
	return s.blacklistWhere(ctx, workspaceID, "id", ids, "")
}

func (s *BunStore) BlacklistByValues(ctx context.Context, workspaceID, kind string, values []string) ([]BlacklistEntry, error) {
	return s.blacklistWhere(ctx, workspaceID, "value", values, kind)
}

// blacklistWhere reads the workspace's entries whose column is among in,
// of kind when it is set, by kind and value.
func (s *BunStore) blacklistWhere(ctx context.Context, workspaceID, column string, in []string, kind string) ([]BlacklistEntry, error) {
	var out []BlacklistEntry
	if len(in) == 0 {
		return out, nil
	}
	q := s.idb(ctx).NewSelect().Model(&out).Where("workspace_id = ?", workspaceID).Where("? IN (?)", bun.Ident(column), bun.In(in))
	if kind != "" {
		q = q.Where("kind = ?", kind)
	}
	err := q.Order("kind", "value", "id").Scan(ctx)
	return out, err
}

func (s *BunStore) DeleteBlacklist(ctx context.Context, workspaceID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.idb(ctx).NewDelete().Model((*BlacklistEntry)(nil)).Where("workspace_id = ?", workspaceID).Where("id IN (?)", bun.In(ids)).Exec(ctx)
	return err
}

func (s *BunStore) InsertKey(ctx context.Context, k *Key, clientIDs []string) error {
	if _, err := s.idb(ctx).NewInsert().Model(k).Exec(ctx); err != nil {
		return err
	}
	for _, c := range clientIDs {
		if _, err := s.idb(ctx).NewInsert().Model(&keyClient{KeyID: k.ID, ClientID: c}).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (s *BunStore) KeyByID(ctx context.Context, workspaceID, id string) (*Key, error) {
	k := new(Key)
	if err := s.idb(ctx).NewSelect().Model(k).Where("workspace_id = ? AND id = ?", workspaceID, id).Scan(ctx); err != nil {
		return nil, err
	}
	return k, nil
}

func (s *BunStore) Keys(ctx context.Context, workspaceID string) ([]Key, error) {
	var ks []Key
	err := s.idb(ctx).NewSelect().Model(&ks).Where("workspace_id = ?", workspaceID).Order("created_at", "id").Scan(ctx)
	return ks, err
}

func (s *BunStore) KeyClientIDs(ctx context.Context, keyID string) ([]string, error) {
	var ids []string
	err := s.idb(ctx).NewSelect().Table("api_key_clients").Column("client_id").Where("key_id = ?", keyID).Order("client_id").Scan(ctx, &ids)
	return ids, err
}

func (s *BunStore) CountActiveKeys(ctx context.Context, workspaceID string, now time.Time) (int, error) {
	n, err := s.idb(ctx).NewSelect().Table("api_keys").
		Where("workspace_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", workspaceID, now).Count(ctx)
	return int(n), err
}

func (s *BunStore) RevokeKey(ctx context.Context, id string, at time.Time) error {
	_, err := s.revokeWhere(ctx, "id", id, at)
	return err
}

// RevokeMemberKeys revokes every key the member created that is not
// revoked yet, and returns their ids.
func (s *BunStore) RevokeMemberKeys(ctx context.Context, memberID string, at time.Time) ([]string, error) {
	return s.revokeWhere(ctx, "member_id", memberID, at)
}

func (s *BunStore) revokeWhere(ctx context.Context, column, value string, at time.Time) ([]string, error) {
	var ids []string
	err := s.idb(ctx).NewRaw(`UPDATE api_keys SET revoked_at = ? WHERE ? = ? AND revoked_at IS NULL RETURNING id`,
		at, bun.Ident(column), value).Scan(ctx, &ids)
	if db.IsNoRows(err) {
		err = nil
	}
	return ids, err
}

func (s *BunStore) TouchKey(ctx context.Context, id string, at time.Time) error {
	_, err := s.idb(ctx).NewUpdate().Table("api_keys").Set("last_used_at = ?", at).Where("id = ?", id).Exec(ctx)
	return err
}

// Credential is everything authentication needs about a key, read in one
// query: the key, its creator as they are now (with their clients), the
// workspace and the key's clients.
type Credential struct {
	Key       Key
	Member    Member
	Workspace Workspace
	ClientIDs []string
	// MemberClientIDs are the creator's clients now (none: the whole
	// workspace), sorted.
	MemberClientIDs []string
	// AuthVersion is the workspace's authentication version when the
	// credential was read (see Service.AuthenticateRead).
	AuthVersion int64
}

type credentialRow struct {
	KeyID        string     `bun:"key_id"`
	KeyName      string     `bun:"key_name"`
	KeyRole      string     `bun:"key_role"`
	ExpiresAt    *time.Time `bun:"expires_at"`
	RevokedAt    *time.Time `bun:"revoked_at"`
	LastUsedAt   *time.Time `bun:"last_used_at"`
	MemberID     string     `bun:"member_id"`
	MemberEmail  string     `bun:"member_email"`
	MemberRole   string     `bun:"member_role"`
	MemberActive bool       `bun:"member_active"`
	WorkspaceID  string     `bun:"workspace_id"`
	Name         string     `bun:"workspace_name"`
	Timezone     string     `bun:"timezone"`
	Plan         string     `bun:"plan"`
	Suspended    bool       `bun:"suspended"`
	ClientID     *string    `bun:"client_id"`
	// MemberClientID is one of the member's clients.
	MemberClientID *string `bun:"member_client_id"`
	AuthVersion    int64   `bun:"auth_version"`
}

// Credential returns the key with hash and what it acts as, or
// sql.ErrNoRows.
func (s *BunStore) Credential(ctx context.Context, hash string) (*Credential, error) {
	// Prepared: every authenticated request runs it.
	var rows []credentialRow
	err := s.db.SelectPrepared(ctx, &rows, `SELECT k.id AS key_id, k.name AS key_name, k.role AS key_role, k.expires_at, k.revoked_at, k.last_used_at,
			m.id AS member_id, m.email AS member_email, m.role AS member_role, m.active AS member_active,
			w.id AS workspace_id, w.name AS workspace_name, w.timezone, w.plan, w.suspended, kc.client_id, mc.client_id AS member_client_id,
			`+AuthVersion("w.id")+` AS auth_version
		FROM api_keys AS k
		JOIN members AS m ON m.id = k.member_id
		JOIN workspaces AS w ON w.id = k.workspace_id
		LEFT JOIN api_key_clients AS kc ON kc.key_id = k.id
		LEFT JOIN member_clients AS mc ON mc.member_id = m.id
		WHERE k.hash = ?
		ORDER BY kc.client_id, mc.client_id`, hash)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, sql.ErrNoRows
	}
	r := rows[0]
	c := &Credential{
		Key: Key{ID: r.KeyID, WorkspaceID: r.WorkspaceID, MemberID: r.MemberID, Name: r.KeyName, Role: r.KeyRole,
			ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt, LastUsedAt: r.LastUsedAt},
		Member:      Member{ID: r.MemberID, WorkspaceID: r.WorkspaceID, Email: r.MemberEmail, Role: apikit.Role(r.MemberRole), Active: r.MemberActive},
		Workspace:   Workspace{ID: r.WorkspaceID, Name: r.Name, Timezone: r.Timezone, Plan: r.Plan, Suspended: r.Suspended},
		AuthVersion: r.AuthVersion,
	}
	// One row per pair of the key's and the member's clients.
	for _, row := range rows {
		if row.ClientID != nil && !slices.Contains(c.ClientIDs, *row.ClientID) {
			c.ClientIDs = append(c.ClientIDs, *row.ClientID)
		}
		if row.MemberClientID != nil && !slices.Contains(c.MemberClientIDs, *row.MemberClientID) {
			c.MemberClientIDs = append(c.MemberClientIDs, *row.MemberClientID)
		}
	}
	slices.Sort(c.MemberClientIDs)
	return c, nil
}

// The sign-in store methods (signin.go).

func (s *BunStore) InsertInvite(ctx context.Context, inv *Invite) error {
	_, err := s.idb(ctx).NewInsert().Model(inv).Exec(ctx)
	return err
}

func (s *BunStore) InviteByHash(ctx context.Context, hash string) (*Invite, error) {
	inv := new(Invite)
	if err := s.idb(ctx).NewSelect().Model(inv).Where("token_hash = ?", hash).Scan(ctx); err != nil {
		return nil, err
	}
	return inv, nil
}

// PendingInvites returns the workspace's unused, unexpired invites at now,
// newest first.
func (s *BunStore) PendingInvites(ctx context.Context, workspaceID string, now time.Time) ([]Invite, error) {
	var out []Invite
	err := s.idb(ctx).NewSelect().Model(&out).Where("workspace_id = ? AND used_at IS NULL AND expires_at > ?", workspaceID, now).
		Order("created_at DESC", "id DESC").Scan(ctx)
	return out, err
}

// UseInvite marks the invite with hash used at now and returns it, or
// sql.ErrNoRows when there is no such invite that is unused and unexpired
// at now. Of two calls at once, one gets the invite.
func (s *BunStore) UseInvite(ctx context.Context, hash string, now time.Time) (*Invite, error) {
	inv := new(Invite)
	err := s.idb(ctx).NewUpdate().Model(inv).Set("used_at = ?", now).
		Where("token_hash = ? AND used_at IS NULL AND expires_at > ?", hash, now).Returning("*").Scan(ctx)
	if err != nil {
		return nil, err
	}
	return inv, nil
}

// SetMemberClients replaces the member's client scope with clientIDs.
func (s *BunStore) SetMemberClients(ctx context.Context, memberID string, clientIDs []string) error {
	if _, err := s.idb(ctx).NewDelete().Model((*memberClient)(nil)).Where("member_id = ?", memberID).Exec(ctx); err != nil {
		return err
	}
	for _, c := range clientIDs {
		if _, err := s.idb(ctx).NewInsert().Model(&memberClient{MemberID: memberID, ClientID: c}).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (s *BunStore) SetPassword(ctx context.Context, p *MemberPassword) error {
	_, err := s.idb(ctx).NewInsert().Model(p).On("CONFLICT (member_id) DO UPDATE").
		Set("hash = EXCLUDED.hash, updated_at = EXCLUDED.updated_at").Exec(ctx)
	return err
}

func (s *BunStore) InsertSession(ctx context.Context, se *Session) error {
	_, err := s.idb(ctx).NewInsert().Model(se).Exec(ctx)
	return err
}

// DeleteSessions deletes the member's sessions last used before idleBefore,
// or all of them for the zero time.
func (s *BunStore) DeleteSessions(ctx context.Context, memberID string, idleBefore time.Time) error {
	q := s.idb(ctx).NewDelete().Model((*Session)(nil)).Where("member_id = ?", memberID)
	if !idleBefore.IsZero() {
		q = q.Where("last_seen_at < ?", idleBefore)
	}
	_, err := q.Exec(ctx)
	return err
}

func (s *BunStore) DeleteSession(ctx context.Context, hash string) error {
	_, err := s.idb(ctx).NewDelete().Model((*Session)(nil)).Where("token_hash = ?", hash).Exec(ctx)
	return err
}

func (s *BunStore) TouchSession(ctx context.Context, id string, at time.Time) error {
	_, err := s.idb(ctx).NewUpdate().Model((*Session)(nil)).Set("last_seen_at = ?", at).Where("id = ?", id).Exec(ctx)
	return err
}

// PasswordCandidate is a member who may be signing in: an active member
// with the email and a password (its argon2id hash).
type PasswordCandidate struct {
	MemberID    string `bun:"member_id"`
	WorkspaceID string `bun:"workspace_id"`
	Hash        string `bun:"hash"`
}

// PasswordsByEmail returns the active members with email (in the workspace
// named workspace, when it is not empty) who have a password.
func (s *BunStore) PasswordsByEmail(ctx context.Context, email, workspace string) ([]PasswordCandidate, error) {
	var out []PasswordCandidate
	q := s.idb(ctx).NewSelect().TableExpr("members AS m").
		ColumnExpr("m.id AS member_id, m.workspace_id, mp.hash").
		Join("JOIN member_passwords AS mp ON mp.member_id = m.id").
		Where("lower(m.email) = ? AND m.active", strings.ToLower(email))
	if workspace != "" {
		q = q.Join("JOIN workspaces AS w ON w.id = m.workspace_id").Where("w.name = ?", workspace)
	}
	err := q.OrderExpr("m.workspace_id").Scan(ctx, &out)
	return out, err
}

// SessionCredential is everything a session's principal is made of, read
// in one query.
type SessionCredential struct {
	Session   Session
	Member    Member
	Workspace Workspace
	ClientIDs []string
}

type sessionRow struct {
	SessionID    string    `bun:"session_id"`
	TokenHash    string    `bun:"token_hash"`
	LastSeenAt   time.Time `bun:"last_seen_at"`
	MemberID     string    `bun:"member_id"`
	MemberEmail  string    `bun:"member_email"`
	MemberRole   string    `bun:"member_role"`
	MemberActive bool      `bun:"member_active"`
	WorkspaceID  string    `bun:"workspace_id"`
	Name         string    `bun:"workspace_name"`
	Timezone     string    `bun:"timezone"`
	Plan         string    `bun:"plan"`
	Suspended    bool      `bun:"suspended"`
	ClientID     *string   `bun:"client_id"`
}

// SessionCredential returns the session with hash and what it acts as, or
// sql.ErrNoRows.
func (s *BunStore) SessionCredential(ctx context.Context, hash string) (*SessionCredential, error) {
	var rows []sessionRow
	err := s.idb(ctx).NewRaw(`SELECT se.id AS session_id, se.token_hash, se.last_seen_at,
			m.id AS member_id, m.email AS member_email, m.role AS member_role, m.active AS member_active,
			w.id AS workspace_id, w.name AS workspace_name, w.timezone, w.plan, w.suspended, mc.client_id
		FROM member_sessions AS se
		JOIN members AS m ON m.id = se.member_id
		JOIN workspaces AS w ON w.id = se.workspace_id
		LEFT JOIN member_clients AS mc ON mc.member_id = m.id
		WHERE se.token_hash = ?
		ORDER BY mc.client_id`, hash).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, sql.ErrNoRows
	}
	r := rows[0]
	c := &SessionCredential{
		Session:   Session{ID: r.SessionID, WorkspaceID: r.WorkspaceID, MemberID: r.MemberID, TokenHash: r.TokenHash, LastSeenAt: r.LastSeenAt},
		Member:    Member{ID: r.MemberID, WorkspaceID: r.WorkspaceID, Email: r.MemberEmail, Role: apikit.Role(r.MemberRole), Active: r.MemberActive},
		Workspace: Workspace{ID: r.WorkspaceID, Name: r.Name, Timezone: r.Timezone, Plan: r.Plan, Suspended: r.Suspended},
	}
	for _, row := range rows {
		if row.ClientID != nil {
			c.ClientIDs = append(c.ClientIDs, *row.ClientID)
		}
	}
	return c, nil
}

// MemberSignIn returns, for the workspace's members, their client ids and
// whether they have a password.
func (s *BunStore) MemberSignIn(ctx context.Context, workspaceID string) (map[string][]string, map[string]bool, error) {
	var scopes []memberClient
	err := s.idb(ctx).NewSelect().Model(&scopes).
		Where("member_id IN (SELECT id FROM members WHERE workspace_id = ?)", workspaceID).Order("member_id", "client_id").Scan(ctx)
	if err != nil {
		return nil, nil, err
	}
	var withPassword []string
	err = s.idb(ctx).NewSelect().Model((*MemberPassword)(nil)).Column("member_id").
		Where("member_id IN (SELECT id FROM members WHERE workspace_id = ?)", workspaceID).Scan(ctx, &withPassword)
	if err != nil {
		return nil, nil, err
	}
	byMember := map[string][]string{}
	for _, sc := range scopes {
		byMember[sc.MemberID] = append(byMember[sc.MemberID], sc.ClientID)
	}
	has := map[string]bool{}
	for _, id := range withPassword {
		has[id] = true
	}
	return byMember, has, nil
}

func (s *BunStore) SignInFailures(ctx context.Context, keys []string, since time.Time) ([]SignInFailure, error) {
	out := []SignInFailure{}
	err := s.idb(ctx).NewSelect().Model(&out).Where("key IN (?) AND window_start > ?", bun.In(keys), since).Order("key").Scan(ctx)
	return out, err
}

func (s *BunStore) ReserveSignInFailure(ctx context.Context, key string, limit int, since, now time.Time) (SignInFailure, bool, error) {
	var f SignInFailure
	// The conflict's update takes the row's lock and its WHERE reads the
	// row as the last attempt left it, on both engines: of attempts made
	// at once, only those under the limit get a row back.
	err := s.idb(ctx).NewRaw(`INSERT INTO sign_in_failures (key, window_start, failures) VALUES (?, ?, 1)
		ON CONFLICT (key) DO UPDATE SET
			failures = CASE WHEN sign_in_failures.window_start > ? THEN sign_in_failures.failures + 1 ELSE 1 END,
			window_start = CASE WHEN sign_in_failures.window_start > ? THEN sign_in_failures.window_start ELSE excluded.window_start END
		WHERE sign_in_failures.window_start <= ? OR sign_in_failures.failures < ?
		RETURNING key, window_start, failures`,
		key, now, since, since, since, limit).Scan(ctx, &f)
	if db.IsNoRows(err) {
		return f, false, nil
	}
	return f, err == nil, err
}

func (s *BunStore) ReleaseSignInFailure(ctx context.Context, key string, windowStart time.Time) error {
	_, err := s.idb(ctx).NewUpdate().Model((*SignInFailure)(nil)).Set("failures = failures - 1").
		Where("key = ? AND window_start = ? AND failures > 0", key, windowStart).Exec(ctx)
	return err
}

func (s *BunStore) DeleteSignInFailures(ctx context.Context, keys []string, endedBefore time.Time) error {
	q := s.idb(ctx).NewDelete().Model((*SignInFailure)(nil))
	switch {
	case len(keys) > 0 && !endedBefore.IsZero():
		q = q.Where("key IN (?) OR window_start <= ?", bun.In(keys), endedBefore)
	case len(keys) > 0:
		q = q.Where("key IN (?)", bun.In(keys))
	case !endedBefore.IsZero():
		q = q.Where("window_start <= ?", endedBefore)
	default:
		return nil
	}
	_, err := q.Exec(ctx)
	return err
}
