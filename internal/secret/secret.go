// Package secret seals the secrets leadline keeps in its database (webhook
// signing secrets, scheduling providers' secrets, senders' secrets typed
// in, stored idempotent answers) under the server's secret key, so that a copy of the database
// alone reveals none of them.
//
// A Key seals any value with associated data (AAD) that binds it to its
// place: a sealed value opens only with the same key and the same AAD, so
// it cannot be moved to another row or column. Sealed values are AES-256-GCM
// with a random nonce, written as text that starts with a version prefix
// and the key's id: "sealed:v1:<key id>:<base64 nonce|ciphertext|tag>".
// The prefix tells a sealed value from one kept in the clear before
// sealing existed, and the key id tells which key sealed it, so that start-up
// refuses a wrong key and rotation knows what it re-seals.
package secret

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/leadline/leadline/apikit"
)

// Size is the length of a key in bytes.
const Size = 32

// The environment variables that hold keys, base64 (standard encoding).
const (
	// EnvKey holds the server's secret key.
	EnvKey = "LEADLINE_SECRET_KEY"
	// EnvNewKey holds the key `leadline secrets rotate` re-seals under.
	EnvNewKey = "LEADLINE_NEW_SECRET_KEY"
)

// Prefix starts every sealed value; the version names the format
// (AES-256-GCM, 96-bit random nonce first, then ciphertext and tag).
const Prefix = "sealed:v1:"

// idLen is the length of a key id: 8 hex digits.
const idLen = 8

// Errors of Seal and Open.
var (
	// ErrNoKey is returned by a server without a key when it is asked to
	// keep a secret; it reaches API callers and the command line as is.
	ErrNoKey = &apikit.Error{Code: apikit.EConflict,
		Message: "This server has no secret key, so it cannot keep secrets (webhook signing secrets, scheduling providers' secrets).",
		Remedy:  "Set " + EnvKey + " on every server and worker to 32 random bytes in base64 (openssl rand -base64 32) and restart them; see the README."}
	// ErrNotSealed is a value without the sealed prefix.
	ErrNotSealed = errors.New("secret: the value is not sealed")
	// ErrOtherKey is a value sealed under another key.
	ErrOtherKey = errors.New("secret: the value was sealed under another key")
	// ErrTampered is a value that does not open: changed, truncated, or
	// moved from another place (other associated data).
	ErrTampered = errors.New("secret: the value does not open: it was changed or belongs elsewhere")
)

// Key is a secret key. The zero Key is no key: Seal refuses with ErrNoKey.
// A Key never prints its bytes: every fmt verb and slog show only its id.
type Key struct {
	k *key
}

type key struct {
	aead cipher.AEAD
	id   string
}

// New returns the key of 32 raw bytes.
func New(raw []byte) (Key, error) {
	if len(raw) != Size {
		return Key{}, fmt.Errorf("a secret key is %d bytes, not %d", Size, len(raw))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return Key{}, err
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return Key{}, err
	}
	// The id is a hash of the key under a label of its own: it names the
	// key in sealed values and messages without revealing it.
	h := sha256.New()
	h.Write([]byte("leadline secret key id\x00"))
	h.Write(raw)
	return Key{&key{aead: aead, id: hex.EncodeToString(h.Sum(nil))[:idLen]}}, nil
}

// Parse returns the key written in base64 (standard encoding, white space
// around it ignored, as in a key file).
func Parse(s string) (Key, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return Key{}, errors.New("a secret key is 32 bytes in base64 (standard encoding); this is not base64")
	}
	return New(raw)
}

// Generate returns a new random key and its base64 form, the one Parse
// reads.
func Generate() (Key, string, error) {
	raw := make([]byte, Size)
	if _, err := rand.Read(raw); err != nil {
		return Key{}, "", err
	}
	k, err := New(raw)
	if err != nil {
		return Key{}, "", err
	}
	return k, base64.StdEncoding.EncodeToString(raw), nil
}

// TestKey returns a fixed key, for tests only: services built in a test
// seal with it as a server seals with its own.
func TestKey() Key {
	sum := sha256.Sum256([]byte("leadline test key: never use it to keep a real secret"))
	k, err := New(sum[:])
	if err != nil {
		panic(err)
	}
	return k
}

// IsZero reports whether k is no key.
func (k Key) IsZero() bool { return k.k == nil }

// ID names the key: 8 hex digits of a hash of it, "" for no key.
func (k Key) ID() string {
	if k.k == nil {
		return ""
	}
	return k.k.id
}

// Equal reports whether k and o are the same key.
func (k Key) Equal(o Key) bool { return k.ID() == o.ID() }

// String shows the key's id, never its bytes.
func (k Key) String() string {
	if k.k == nil {
		return "secret.Key(none)"
	}
	return "secret.Key(" + k.k.id + ")"
}

// Format shows the key's id whatever the verb, so that no format prints
// the key's bytes.
func (k Key) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// LogValue shows the key's id in structured logs.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// header is what a value sealed under k starts with.
func (k Key) header() string { return Prefix + k.k.id + ":" }

// Seal returns plaintext sealed under k, bound to aad: Open needs the same
// aad. The value is text (the prefix and base64), fit for a text column.
func (k Key) Seal(plaintext, aad []byte) ([]byte, error) {
	if k.k == nil {
		return nil, ErrNoKey
	}
	hdr := k.header()
	// The header is authenticated too: a value's key id cannot be changed.
	ct := k.k.aead.Seal(nil, nil, plaintext, append([]byte(hdr), aad...))
	out := make([]byte, len(hdr)+base64.RawStdEncoding.EncodedLen(len(ct)))
	copy(out, hdr)
	base64.RawStdEncoding.Encode(out[len(hdr):], ct)
	return out, nil
}

// Open returns the plaintext of a value Seal returned with the same aad.
// Returns ErrNoKey without a key, ErrNotSealed for a value without the
// prefix, ErrOtherKey for a value sealed under another key and ErrTampered
// for one that does not open.
func (k Key) Open(sealed, aad []byte) ([]byte, error) {
	if k.k == nil {
		return nil, ErrNoKey
	}
	if !IsSealed(sealed) {
		return nil, ErrNotSealed
	}
	id, ok := KeyID(sealed)
	if !ok {
		return nil, ErrTampered
	}
	if id != k.k.id {
		return nil, fmt.Errorf("%w (key %s, not %s)", ErrOtherKey, id, k.k.id)
	}
	hdr := k.header()
	ct, err := base64.RawStdEncoding.DecodeString(string(sealed[len(hdr):]))
	if err != nil {
		return nil, ErrTampered
	}
	plain, err := k.k.aead.Open(nil, nil, ct, append([]byte(hdr), aad...))
	if err != nil {
		return nil, ErrTampered
	}
	return plain, nil
}

// SealString is Seal for text.
func (k Key) SealString(plaintext string, aad []byte) (string, error) {
	out, err := k.Seal([]byte(plaintext), aad)
	return string(out), err
}

// OpenString is Open for text.
func (k Key) OpenString(sealed string, aad []byte) (string, error) {
	out, err := k.Open([]byte(sealed), aad)
	return string(out), err
}

// IsSealed reports whether v is a sealed value (by its prefix).
func IsSealed(v []byte) bool { return bytes.HasPrefix(v, []byte(Prefix)) }

// KeyID returns the id of the key that sealed v, and false when v is not
// sealed.
func KeyID(v []byte) (string, bool) {
	if !IsSealed(v) || len(v) < len(Prefix)+idLen+1 || v[len(Prefix)+idLen] != ':' {
		return "", false
	}
	return string(v[len(Prefix) : len(Prefix)+idLen]), true
}
