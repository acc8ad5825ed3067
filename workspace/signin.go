package workspace

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/uptrace/bun"
	"golang.org/x/crypto/argon2"
	"golang.org/x/text/unicode/norm"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// Members sign in to the console with an email and a password. A password
// is set through a one-time invite link (Invite, AcceptInvite); signing in
// opens a session kept in the database (SignIn, SessionPrincipal,
// SignOut). Only hashes are stored: argon2id for passwords, SHA-256 for
// the session and invite tokens.

// SessionIdle is how long a session lasts without use.
const SessionIdle = 12 * time.Hour

// InviteValid is how long an invite link can be used.
const InviteValid = 24 * time.Hour

// Password lengths, in characters of the NFKC form, not counting
// invisible ones (newPassword).
const (
	MinPasswordLength = 12
	MaxPasswordLength = 256
)

// sessionTouchEvery is how stale a session's last use may get before a
// request records it, so that pages do not each cost a write.
const sessionTouchEvery = time.Minute

// PasswordParams are argon2id's costs.
type PasswordParams struct {
	Time    uint32
	Memory  uint32 // KiB
	Threads uint8
}

// DefaultPasswordParams are OWASP's argon2id recommendation (19 MiB, two
// passes, one lane).
var DefaultPasswordParams = PasswordParams{Time: 2, Memory: 19 * 1024, Threads: 1}

// Session is a signed-in browser: the member and the hash of the token its
// cookie holds.
type Session struct {
	bun.BaseModel `bun:"table:member_sessions"`

	ID          string    `bun:"id,pk"`
	WorkspaceID string    `bun:"workspace_id"`
	MemberID    string    `bun:"member_id"`
	TokenHash   string    `bun:"token_hash"`
	CreatedAt   time.Time `bun:"created_at"`
	LastSeenAt  time.Time `bun:"last_seen_at"`
}

// Invite is an invitation to set a password (and join the workspace, for
// a new email), valid once until ExpiresAt.
type Invite struct {
	bun.BaseModel `bun:"table:member_invites"`

	ID          string      `bun:"id,pk"`
	WorkspaceID string      `bun:"workspace_id"`
	Email       string      `bun:"email"`
	Role        apikit.Role `bun:"role"`
	ClientIDs   []string    `bun:"client_ids,type:jsonb"`
	TokenHash   string      `bun:"token_hash"`
	InvitedBy   *string     `bun:"invited_by"`
	CreatedAt   time.Time   `bun:"created_at"`
	ExpiresAt   time.Time   `bun:"expires_at"`
	UsedAt      *time.Time  `bun:"used_at"`

	// Filled when read for a person.
	WorkspaceName string   `bun:"-"`
	ClientNames   []string `bun:"-"`
}

// MemberPassword is a member's password as stored: its argon2id hash
// (a PHC string), never the password.
type MemberPassword struct {
	bun.BaseModel `bun:"table:member_passwords"`

	MemberID  string    `bun:"member_id,pk"`
	Hash      string    `bun:"hash"`
	UpdatedAt time.Time `bun:"updated_at"`
}

type memberClient struct {
	bun.BaseModel `bun:"table:member_clients"`

	MemberID string `bun:"member_id,pk"`
	ClientID string `bun:"client_id,pk"`
}

// SetPasswordParams sets argon2id's costs for new passwords (tests lower
// them); stored hashes keep the costs they were made with.
func (s *Service) SetPasswordParams(p PasswordParams) { s.passwords = p }

func (s *Service) passwordParams() PasswordParams {
	if s.passwords == (PasswordParams{}) {
		return DefaultPasswordParams
	}
	return s.passwords
}

// hashPassword returns the PHC string of password's argon2id hash under a
// new random salt.
func hashPassword(password string, p PasswordParams) string {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		panic(err)
	}
	sum := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(sum))
}

// checkPassword reports whether password matches the PHC string encoded.
func checkPassword(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	var p PasswordParams
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// newToken returns a new session or invite token (256 random bits) and
// its hash.
func newToken() (token, hash string) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, hashSecret(token)
}

// Passwords are compared in Unicode's compatibility composition (NFKC):
// the same password typed on another keyboard or system (a precomposed é
// or an e and a combining accent, a full-width letter, a ligature) is the
// same password. It is hashed in that form.

// invisible reports whether r shows nothing of its own: a format character
// (the zero-width space and joiners, direction marks), a control, a
// variation selector or another default-ignorable code point (the Hangul
// fillers).
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Cc, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// newPassword returns password, to be set, in NFKC, or refuses it when it
// shows no visible character (only spaces and invisible characters) or
// when, not counting its invisible characters, it is too short or too
// long.
func newPassword(password string) (string, error) {
	if err := apikit.CheckText("password", password); err != nil {
		return "", err
	}
	password = norm.NFKC.String(password)
	n, hidden, seen := 0, 0, false
	for _, r := range password {
		switch {
		case invisible(r):
			hidden++
			continue
		case !unicode.IsSpace(r) && !unicode.In(r, unicode.Mn, unicode.Me):
			seen = true
		}
		n++
	}
	if !seen {
		return "", apikit.Invalid("The password shows no visible character: it is only spaces or invisible characters (such as zero-width spaces).",
			"Choose a password of letters, digits or symbols; a few unrelated words make a good one.")
	}
	counted := ""
	if hidden > 0 {
		counted = fmt.Sprintf(" (its %d invisible ones are not counted)", hidden)
	}
	if n < MinPasswordLength {
		return "", apikit.Invalid(fmt.Sprintf("The password has %d characters%s; it needs at least %d.", n, counted, MinPasswordLength),
			fmt.Sprintf("Choose a password of %d characters or more; a few unrelated words make a good one.", MinPasswordLength))
	}
	if n > MaxPasswordLength {
		return "", apikit.Invalid(fmt.Sprintf("The password has %d characters%s; at most %d are taken.", n, counted, MaxPasswordLength),
			fmt.Sprintf("Choose a password of %d to %d characters.", MinPasswordLength, MaxPasswordLength))
	}
	return password, nil
}

// matchPassword reports whether password matches the PHC string encoded,
// and whether it matched only as typed. Passwords are hashed in NFKC
// (newPassword), but those set before were hashed as typed: one whose
// NFKC form differs (a decomposed accent, a full-width letter) would no
// longer match, and its member would be locked out. So a password that
// does not match in NFKC is tried as typed too; a member who signs in so
// has the hash remade in NFKC (SignIn). The second try costs a second
// hash only for a password whose NFKC form differs, whether or not a
// member has the email, so it tells nothing of who is a member.
func matchPassword(encoded, password string) (ok, asTyped bool) {
	n := norm.NFKC.String(password)
	if checkPassword(encoded, n) {
		return true, false
	}
	if n != password && checkPassword(encoded, password) {
		return true, true
	}
	return false, false
}

// openSession records a new session of m and returns its token.
func (s *Service) openSession(ctx context.Context, m *Member, now time.Time) (string, error) {
	token, hash := newToken()
	return token, s.store.InsertSession(ctx, &Session{ID: apikit.NewID(), WorkspaceID: m.WorkspaceID, MemberID: m.ID,
		TokenHash: hash, CreatedAt: now, LastSeenAt: now})
}

// SignInInput is what signing in takes. Workspace is needed only when the
// email and password are those of members of several workspaces.
type SignInInput struct {
	Workspace string
	Email     string
	Password  string
}

// ErrSignIn is the answer to every failed sign-in, whether the email is
// known or not.
func ErrSignIn() *apikit.Error {
	return &apikit.Error{Code: apikit.EUnauthorized, Message: "The email or the password is not right.",
		Remedy: "Check both and try again. Forgot the password? Ask a manager of your workspace for a new invite link."}
}

// dummyHash is checked when no member matches, so that an unknown email
// takes about as long to refuse as a wrong password.
var dummyHash = hashPassword("leadline-no-such-member", DefaultPasswordParams)

// SignIn checks an email and password and opens a session, whose token it
// returns.
//
// Returns E_UNAUTHORIZED (ErrSignIn) for an unknown email, a member
// without a password or who left, or a wrong password, all alike, and
// E_CONFLICT when they are right in several workspaces and in.Workspace
// does not choose one, and E_RATE_LIMITED (ErrPasswordBusy) when the
// password gate is full. A member whose password matched only as typed
// (set before passwords were normalised; matchPassword) has its hash
// remade in NFKC.
func (s *Service) SignIn(ctx context.Context, in SignInInput) (string, error) {
	if apikit.CheckText("", in) != nil || len(in.Password) > 4*MaxPasswordLength {
		return "", ErrSignIn()
	}
	cands, err := s.store.PasswordsByEmail(ctx, strings.TrimSpace(in.Email), strings.TrimSpace(in.Workspace))
	if err != nil {
		return "", err
	}
	leave, err := s.gate.Enter(ctx)
	if err != nil {
		return "", err
	}
	if len(cands) == 0 {
		matchPassword(dummyHash, in.Password)
		leave()
		return "", ErrSignIn()
	}
	var match []PasswordCandidate
	asTyped := false
	for _, c := range cands {
		if ok, typed := matchPassword(c.Hash, in.Password); ok {
			match, asTyped = append(match, c), typed
		}
	}
	var rehash string
	if len(match) == 1 && asTyped {
		rehash = hashPassword(norm.NFKC.String(in.Password), s.passwordParams())
	}
	leave()
	switch {
	case len(match) == 0:
		return "", ErrSignIn()
	case len(match) > 1:
		return "", apikit.Conflict("This email and password are those of a member of several workspaces.",
			"Type the name of the workspace to sign in to as well.")
	}
	var token string
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		now := db.Now(ctx, s.clock)
		m := &Member{ID: match[0].MemberID, WorkspaceID: match[0].WorkspaceID}
		if rehash != "" {
			if err := s.store.SetPassword(ctx, &MemberPassword{MemberID: m.ID, Hash: rehash, UpdatedAt: now}); err != nil {
				return err
			}
		}
		// Sessions of the member that ended by idling are cleared here.
		if err := s.store.DeleteSessions(ctx, m.ID, now.Add(-SessionIdle)); err != nil {
			return err
		}
		token, err = s.openSession(ctx, m, now)
		return err
	})
	return token, err
}

// ErrCurrentPassword is ChangePassword's answer to a wrong current
// password.
func ErrCurrentPassword() *apikit.Error {
	return apikit.Invalid(currentPasswordWrong,
		"Type the password you signed in with. Forgot it? Ask a manager of your workspace for a new invite link.")
}

const currentPasswordWrong = "The current password is not right."

// IsCurrentPasswordWrong reports whether err is ErrCurrentPassword's, a
// failed guess that the console counts against the sign-in limits.
func IsCurrentPasswordWrong(err error) bool {
	ae := apikit.AsError(err)
	return ae.Code == apikit.EPayloadInvalid && ae.Message == currentPasswordWrong
}

// ChangePassword sets a new password for the member p acts as, once the
// current one is checked, ends every session of the member (those of
// other browsers too) and opens a new one, whose token it returns. A
// member who forgot the password gets a new invite link instead
// (`leadline members invite`, or the members page).
//
// Returns E_PAYLOAD_INVALID for a wrong current password
// (ErrCurrentPassword) or a new one that breaks the rules (newPassword),
// E_FORBIDDEN for a principal that is not a signed-in member and
// E_RATE_LIMITED (ErrPasswordBusy) when the password gate is full.
func (s *Service) ChangePassword(ctx context.Context, p apikit.Principal, current, password string) (string, error) {
	if p.MemberID == "" || p.KeyID != "" {
		return "", apikit.Forbidden("Only a signed-in member changes their own password.",
			"Sign in to the console as the member whose password changes.")
	}
	password, err := newPassword(password)
	if err != nil {
		return "", err
	}
	if len(current) > 4*MaxPasswordLength {
		return "", ErrCurrentPassword()
	}
	cands, err := s.store.PasswordsByEmail(ctx, p.MemberEmail, "")
	if err != nil {
		return "", err
	}
	hash := dummyHash
	for _, c := range cands {
		if c.MemberID == p.MemberID {
			hash = c.Hash
		}
	}
	leave, err := s.gate.Enter(ctx)
	if err != nil {
		return "", err
	}
	if ok, _ := matchPassword(hash, current); !ok || hash == dummyHash {
		leave()
		return "", ErrCurrentPassword()
	}
	newHash := hashPassword(password, s.passwordParams())
	leave()
	var token string
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		now := db.Now(ctx, s.clock)
		if err := s.store.SetPassword(ctx, &MemberPassword{MemberID: p.MemberID, Hash: newHash, UpdatedAt: now}); err != nil {
			return err
		}
		if err := s.store.DeleteSessions(ctx, p.MemberID, time.Time{}); err != nil {
			return err
		}
		token, err = s.openSession(ctx, &Member{ID: p.MemberID, WorkspaceID: p.WorkspaceID}, now)
		return err
	})
	return token, err
}

func sessionEnded(msg string) *apikit.Error {
	return &apikit.Error{Code: apikit.EUnauthorized, Message: msg, Remedy: "Sign in again."}
}

// SessionPrincipal returns the principal a session acts as: its member's
// workspace, role and clients as they are now, exactly as a key of the
// member's role and clients would act. A use more than a minute after the
// last one is recorded.
//
// Returns E_UNAUTHORIZED for an unknown session, one idle for 12 hours
// (which it ends) or one whose member left, and E_PLAN_SUSPENDED for a
// suspended workspace.
func (s *Service) SessionPrincipal(ctx context.Context, token string) (apikit.Principal, error) {
	var p apikit.Principal
	if token == "" {
		return p, sessionEnded("You are not signed in.")
	}
	c, err := s.store.SessionCredential(ctx, hashSecret(token))
	if db.IsNoRows(err) {
		return p, sessionEnded("Your session has ended.")
	} else if err != nil {
		return p, err
	}
	now := s.clock.Now()
	if now.Sub(c.Session.LastSeenAt) >= SessionIdle {
		err := s.db.InTx(ctx, func(ctx context.Context) error { return s.store.DeleteSession(ctx, c.Session.TokenHash) })
		if err != nil {
			return p, err
		}
		return p, sessionEnded("Your session ended after 12 hours without use.")
	}
	if !c.Member.Active {
		return p, sessionEnded("Your membership of this workspace has ended.")
	}
	if c.Workspace.Suspended {
		return p, apikit.PlanSuspended()
	}
	if now.Sub(c.Session.LastSeenAt) >= sessionTouchEvery {
		if err := s.db.InTx(ctx, func(ctx context.Context) error { return s.store.TouchSession(ctx, c.Session.ID, now) }); err != nil {
			return p, err
		}
	}
	w, m := &c.Workspace, &c.Member
	return apikit.Principal{
		WorkspaceID: w.ID, WorkspaceName: w.Name, Timezone: w.Timezone, Plan: w.Plan,
		MemberID: m.ID, MemberEmail: m.Email, Role: m.Role, ClientIDs: c.ClientIDs,
	}, nil
}

// SignOut ends the session with token; an unknown token is no error.
func (s *Service) SignOut(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	return s.db.InTx(ctx, func(ctx context.Context) error { return s.store.DeleteSession(ctx, hashSecret(token)) })
}

// MemberView is a member as the console's members page shows it.
type MemberView struct {
	Member
	CanSignIn   bool
	ClientNames []string
}

// MemberList returns the workspace's members, with whether each can sign
// in and their clients, for a manager. A principal limited to some
// clients sees only the members limited to clients among its own.
func (s *Service) MemberList(ctx context.Context, p apikit.Principal) ([]MemberView, error) {
	ms, err := s.store.Members(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	scopes, signIn, err := s.store.MemberSignIn(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	clients, err := s.store.Named(ctx, p.WorkspaceID, Clients, nil)
	if err != nil {
		return nil, err
	}
	out := []MemberView{}
	for _, m := range ms {
		ids := scopes[m.ID]
		if p.Scoped() && (len(ids) == 0 || slices.ContainsFunc(ids, func(c string) bool { return !p.SeesClient(c) })) {
			continue
		}
		v := MemberView{Member: m, CanSignIn: signIn[m.ID], ClientNames: []string{}}
		for _, c := range clients {
			if slices.Contains(ids, c.ID) {
				v.ClientNames = append(v.ClientNames, c.Name)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// PendingInvites returns the workspace's invites that can still be used,
// newest first, with their clients' names. A principal limited to some
// clients sees only the invites limited to clients among its own.
func (s *Service) PendingInvites(ctx context.Context, p apikit.Principal) ([]Invite, error) {
	invs, err := s.store.PendingInvites(ctx, p.WorkspaceID, s.clock.Now())
	if err != nil {
		return nil, err
	}
	clients, err := s.store.Named(ctx, p.WorkspaceID, Clients, nil)
	if err != nil {
		return nil, err
	}
	out := []Invite{}
	for _, inv := range invs {
		if p.Scoped() && (len(inv.ClientIDs) == 0 || slices.ContainsFunc(inv.ClientIDs, func(c string) bool { return !p.SeesClient(c) })) {
			continue
		}
		inv.ClientNames = []string{}
		for _, c := range clients {
			if slices.Contains(inv.ClientIDs, c.ID) {
				inv.ClientNames = append(inv.ClientNames, c.Name)
			}
		}
		out = append(out, inv)
	}
	return out, nil
}

// SignInFailure is the failed sign-ins counted under one key since its
// window started. The console counts under "account <email>" (the email
// typed, whether a member has it or not) and "address <ip>", and keeps the
// limits; the counts live in the database, so that every process serving
// the console counts together.
type SignInFailure struct {
	bun.BaseModel `bun:"table:sign_in_failures"`

	Key         string    `bun:"key,pk"`
	WindowStart time.Time `bun:"window_start"`
	Failures    int       `bun:"failures"`
}

// SignInLimit is how many failed sign-ins may be counted under Key in a
// window.
type SignInLimit struct {
	Key   string
	Limit int
}

// SignInAttempt is a sign-in counted under its keys before its password
// is checked. A wrong password leaves it counted: it is the failure.
// Anything else gives it back (ReleaseSignIn).
type SignInAttempt struct {
	counted []SignInFailure
}

// errLimitReached rolls back a reservation that a key refused.
var errLimitReached = errors.New("sign-in limit reached")

// ReserveSignIn counts a sign-in under every key of limits, in one
// transaction, before its password is checked, so that the count and the
// decision are one step: sign-ins sent at once, to any process serving
// the console, never count past a limit (counting after the check, each
// would have seen the count before the others'). A key whose open window
// holds Limit attempts already refuses it: then nothing is counted, and
// ReserveSignIn returns that key's count (with its window's start) instead
// of an attempt. At most once a window, this process also deletes the
// counts whose window ended, so that the table holds only the last
// window's keys.
func (s *Service) ReserveSignIn(ctx context.Context, limits []SignInLimit, window time.Duration) (*SignInAttempt, *SignInFailure, error) {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	if err := s.sweepFailedSignIns(ctx, now, window); err != nil {
		return nil, nil, err
	}
	// In key order: two reservations lock their rows in one order.
	limits = slices.SortedFunc(slices.Values(limits), func(a, b SignInLimit) int { return strings.Compare(a.Key, b.Key) })
	for try := 1; ; try++ {
		att, full := &SignInAttempt{}, (*SignInFailure)(nil)
		err := s.db.InTx(ctx, func(ctx context.Context) error {
			for _, l := range limits {
				f, ok, err := s.store.ReserveSignInFailure(ctx, l.Key, l.Limit, now.Add(-window), now)
				if err != nil {
					return err
				}
				if !ok {
					fs, err := s.store.SignInFailures(ctx, []string{l.Key}, now.Add(-window))
					if err != nil {
						return err
					}
					full = &SignInFailure{Key: l.Key, WindowStart: now, Failures: l.Limit}
					if len(fs) == 1 {
						full = &fs[0]
					}
					return errLimitReached
				}
				att.counted = append(att.counted, f)
			}
			return nil
		})
		switch {
		case full != nil:
			return nil, full, nil
		case err == nil:
			return att, nil, nil
		case try < 3 && db.IsRetryable(err):
			continue
		}
		return nil, nil, err
	}
}

// sweepFailedSignIns deletes the counts whose window ended, at most once
// a window in this process.
func (s *Service) sweepFailedSignIns(ctx context.Context, now time.Time, window time.Duration) error {
	s.failuresSwept.Lock()
	if now.Sub(s.failuresSwept.at) < window {
		s.failuresSwept.Unlock()
		return nil
	}
	s.failuresSwept.at = now
	s.failuresSwept.Unlock()
	return s.db.InTx(ctx, func(ctx context.Context) error { return s.store.DeleteSignInFailures(ctx, nil, now.Add(-window)) })
}

// ReleaseSignIn gives back an attempt (nil: none) whose password was not
// found wrong, and deletes the counts of forget (a sign-in that succeeds
// clears its account's).
func (s *Service) ReleaseSignIn(ctx context.Context, att *SignInAttempt, forget ...string) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		if att != nil {
			for _, f := range att.counted {
				if err := s.store.ReleaseSignInFailure(ctx, f.Key, f.WindowStart); err != nil {
					return err
				}
			}
		}
		return s.store.DeleteSignInFailures(ctx, forget, time.Time{})
	})
}
