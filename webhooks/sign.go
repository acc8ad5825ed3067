package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The delivery headers: the Standard Webhooks scheme under these names.
const (
	HeaderID        = "x-delivery-id"
	HeaderTimestamp = "x-delivery-timestamp"
	HeaderSignature = "x-delivery-signature"
)

// secretPrefix starts every signing secret.
const secretPrefix = "whsec_"

// NewSecret returns a new signing secret: whsec_ and 32 random bytes in
// base64.
func NewSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// key is the HMAC key of a secret: the bytes after whsec_ (base64), as
// Standard Webhooks does.
func key(secret string) []byte {
	raw := strings.TrimPrefix(secret, secretPrefix)
	if b, err := base64.StdEncoding.DecodeString(raw); err == nil {
		return b
	}
	return []byte(raw)
}

// Sign returns the signature header value of a delivery:
// v1,<base64 HMAC-SHA256(key, id.timestamp.body)>.
func Sign(secret, id string, ts time.Time, body []byte) string {
	m := hmac.New(sha256.New, key(secret))
	fmt.Fprintf(m, "%s.%d.", id, ts.Unix())
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Errors of Verify.
var (
	ErrNoSignature  = errors.New("webhooks: the delivery has no id, timestamp or signature header")
	ErrBadTimestamp = errors.New("webhooks: the delivery's timestamp is outside the tolerance")
	ErrBadSignature = errors.New("webhooks: no signature of the delivery matches")
)

// Verify checks a delivery a receiver got: its signature over id,
// timestamp and body with secret, and that its timestamp is within
// tolerance of now (replayed old requests are refused). The signature
// header may carry several space-separated signatures (during a secret
// rotation); one match is enough.
func Verify(secret string, headers http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	id, tsRaw, sigs := headers.Get(HeaderID), headers.Get(HeaderTimestamp), headers.Get(HeaderSignature)
	if id == "" || tsRaw == "" || sigs == "" {
		return ErrNoSignature
	}
	sec, err := strconv.ParseInt(tsRaw, 10, 64)
	if err != nil {
		return ErrBadTimestamp
	}
	ts := time.Unix(sec, 0)
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return ErrBadTimestamp
	}
	want := Sign(secret, id, ts, body)
	for _, s := range strings.Fields(sigs) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return ErrBadSignature
}
