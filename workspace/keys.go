package workspace

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/uptrace/bun"
)

// MaxActiveKeys is how many unrevoked, unexpired keys a workspace may hold.
const MaxActiveKeys = 25

// keyPrefix starts every key, so leaked keys are easy to recognise.
const keyPrefix = "ll_"

// Key is an API key as stored: never the secret itself, only its SHA-256.
type Key struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID          string     `bun:"id,pk" json:"id"`
	WorkspaceID string     `bun:"workspace_id" json:"-"`
	MemberID    string     `bun:"member_id" json:"member_id"`
	Name        string     `bun:"name" json:"name"`
	Role        string     `bun:"role" json:"role"`
	Hash        string     `bun:"hash" json:"-"`
	Prefix      string     `bun:"prefix" json:"prefix"`
	ExpiresAt   *time.Time `bun:"expires_at" json:"expires_at"`
	CreatedAt   time.Time  `bun:"created_at" json:"created_at"`
	LastUsedAt  *time.Time `bun:"last_used_at" json:"last_used_at"`
	RevokedAt   *time.Time `bun:"revoked_at" json:"revoked_at"`

	// Filled when listing.
	MemberEmail string   `bun:"-" json:"member_email"`
	ClientNames []string `bun:"-" json:"clients"`
}

// Active reports whether the key can still authenticate at now (its creator
// aside).
func (k *Key) Active(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

type keyClient struct {
	bun.BaseModel `bun:"table:api_key_clients"`

	KeyID    string `bun:"key_id,pk"`
	ClientID string `bun:"client_id,pk"`
}

// newSecret returns a new key (ll_ and 160 random bits in hex) and its hash.
func newSecret() (secret, hash string) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	secret = keyPrefix + hex.EncodeToString(b)
	return secret, hashSecret(secret)
}

func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
