package secret_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/secret"
)

func TestSealOpen(t *testing.T) {
	is := is.New(t)
	k := secret.TestKey()
	aad := secret.WebhookSecrets.AAD("0193a000-0000-7000-8000-000000000001")
	sealed, err := k.Seal([]byte("whsec_hello"), aad)
	is.NoErr(err)
	is.True(secret.IsSealed(sealed))
	is.True(strings.HasPrefix(string(sealed), secret.Prefix+k.ID()+":"))
	is.True(!bytes.Contains(sealed, []byte("whsec_")))
	id, ok := secret.KeyID(sealed)
	is.True(ok)
	is.Equal(id, k.ID())

	plain, err := k.Open(sealed, aad)
	is.NoErr(err)
	is.Equal(string(plain), "whsec_hello")

	// A random nonce: the same value seals differently every time.
	again, err := k.Seal([]byte("whsec_hello"), aad)
	is.NoErr(err)
	is.True(!bytes.Equal(sealed, again))

	// Another place (row or column) does not open it.
	_, err = k.Open(sealed, secret.WebhookSecrets.AAD("0193a000-0000-7000-8000-000000000002"))
	is.True(errors.Is(err, secret.ErrTampered))
	_, err = k.Open(sealed, secret.BookingSecrets.AAD("0193a000-0000-7000-8000-000000000001"))
	is.True(errors.Is(err, secret.ErrTampered))

	// A changed byte anywhere, the key id included, does not open.
	for i := len(secret.Prefix); i < len(sealed); i++ {
		bad := bytes.Clone(sealed)
		bad[i] ^= 1
		_, err := k.Open(bad, aad)
		is.True(err != nil)
	}
	_, err = k.Open(sealed[:len(sealed)-4], aad)
	is.True(errors.Is(err, secret.ErrTampered))

	// Another key does not open it, and says so.
	other, _, err := secret.Generate()
	is.NoErr(err)
	is.True(other.ID() != k.ID())
	_, err = other.Open(sealed, aad)
	is.True(errors.Is(err, secret.ErrOtherKey))

	// A value in the clear is not sealed.
	_, err = k.Open([]byte("whsec_hello"), aad)
	is.True(errors.Is(err, secret.ErrNotSealed))
	is.True(!secret.IsSealed([]byte(`{"data":{}}`)))

	s, err := k.SealString("", aad)
	is.NoErr(err)
	back, err := k.OpenString(s, aad)
	is.NoErr(err)
	is.Equal(back, "")
}

func TestNoKey(t *testing.T) {
	is := is.New(t)
	var k secret.Key
	is.True(k.IsZero())
	is.Equal(k.ID(), "")
	_, err := k.Seal([]byte("x"), nil)
	is.True(errors.Is(err, secret.ErrNoKey))
	is.Equal(apikit.ErrorCode(err), apikit.EConflict) // a clear refusal, not a 500
	_, err = k.Open([]byte("x"), nil)
	is.True(errors.Is(err, secret.ErrNoKey))
}

func TestParse(t *testing.T) {
	is := is.New(t)
	raw := bytes.Repeat([]byte{7}, secret.Size)
	enc := base64.StdEncoding.EncodeToString(raw)
	k, err := secret.Parse(" " + enc + "\n")
	is.NoErr(err)
	k2, err := secret.New(raw)
	is.NoErr(err)
	is.True(k.Equal(k2))
	is.Equal(len(k.ID()), 8)

	_, err = secret.Parse(base64.StdEncoding.EncodeToString(raw[:16]))
	is.True(err != nil && strings.Contains(err.Error(), "32 bytes"))
	_, err = secret.Parse("not base64!")
	is.True(err != nil && strings.Contains(err.Error(), "base64"))

	g, enc2, err := secret.Generate()
	is.NoErr(err)
	back, err := secret.Parse(enc2)
	is.NoErr(err)
	is.True(back.Equal(g))
}

// No format and no log shows a key's bytes.
func TestKeyNeverPrints(t *testing.T) {
	is := is.New(t)
	raw := bytes.Repeat([]byte{0xAB}, secret.Size)
	k, err := secret.New(raw)
	is.NoErr(err)
	enc := base64.StdEncoding.EncodeToString(raw)
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("key", "key", k)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("key", "key", k, "ptr", &k)
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %s %x %X %q %d", k, k, k, k, k, k, k, k),
		fmt.Sprint(k, &k, struct{ K secret.Key }{k}), fmt.Sprintf("%+v %#v", struct{ K secret.Key }{k}, []secret.Key{k}), logged.String()} {
		is.True(strings.Contains(out, k.ID()))
		is.True(!strings.Contains(out, enc))
		is.True(!strings.Contains(strings.ToLower(out), "abab"))
		is.True(!strings.Contains(out, "171")) // 0xAB in decimal
	}
}
