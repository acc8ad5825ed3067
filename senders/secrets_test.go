package senders_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
)

// TestStoredSecrets: a secret typed in is kept sealed, read before the
// environment, never kept in the clear, re-sealed by a key rotation; a
// name the settings do not give and a server without a key are refused.
func TestStoredSecrets(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d, time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
		mail := &email.Server{Host: "127.0.0.1", Port: 1, Security: "none", Username: "u", PasswordEnv: "LEADLINE_TEST_STORED_PW"}
		_, err := b.svc.Apply(ctx, b.owner, []senders.Spec{{Name: "box", Channel: senders.Email, Address: "box@acme.test", Transport: "smtp",
			Sections: email.Sections(mail, mail)}})
		is.NoErr(err)
		s, err := b.svc.ByName(ctx, b.ws.ID, "box")
		is.NoErr(err)
		t.Setenv("LEADLINE_TEST_STORED_PW", "from-the-environment")
		x := senders.NewSecrets(d, b.clock, secret.TestKey())

		v, err := x.Secret(ctx, s, "LEADLINE_TEST_STORED_PW")
		is.NoErr(err)
		is.Equal(v, "from-the-environment") // nothing stored: the environment
		is.NoErr(x.Set(ctx, s, "LEADLINE_TEST_STORED_PW", "typed-in-secret"))
		v, err = x.Secret(ctx, s, "LEADLINE_TEST_STORED_PW")
		is.NoErr(err)
		is.Equal(v, "typed-in-secret") // stored first
		names, err := x.Stored(ctx, s)
		is.NoErr(err)
		is.Equal(names, []string{"LEADLINE_TEST_STORED_PW"})

		var raw []string
		is.NoErr(d.NewSelect().Table("sender_secrets").Column("secret").Scan(ctx, &raw))
		is.Equal(len(raw), 1)
		is.True(secret.IsSealed([]byte(raw[0])))
		is.True(!strings.Contains(raw[0], "typed-in-secret"))

		// Rotation re-seals it: it opens under the new key only.
		newKey, _, err := secret.Generate()
		is.NoErr(err)
		n, err := secret.Rotate(ctx, d, secret.TestKey(), newKey)
		is.NoErr(err)
		is.True(n >= 1)
		v, err = senders.NewSecrets(d, b.clock, newKey).Secret(ctx, s, "LEADLINE_TEST_STORED_PW")
		is.NoErr(err)
		is.Equal(v, "typed-in-secret")
		_, err = x.Secret(ctx, s, "LEADLINE_TEST_STORED_PW")
		is.True(errors.Is(err, senders.ErrCredentialsMissing))
		is.True(!strings.Contains(err.Error(), "typed-in-secret"))

		// Refusals.
		err = x.Set(ctx, s, "OTHER_VAR", "x")
		is.Equal(apikit.AsError(err).Code, apikit.EPayloadInvalid)
		is.True(strings.Contains(apikit.AsError(err).Remedy, "LEADLINE_TEST_STORED_PW"))
		err = senders.NewSecrets(d, b.clock, secret.Key{}).Set(ctx, s, "LEADLINE_TEST_STORED_PW", "x")
		is.Equal(apikit.AsError(err).Code, apikit.EConflict)
		is.Equal(apikit.AsError(x.Set(ctx, s, "LEADLINE_TEST_STORED_PW", "")).Code, apikit.EPayloadInvalid)

		// Deleted: the environment again.
		is.NoErr(x.Delete(ctx, s, "LEADLINE_TEST_STORED_PW"))
		v, err = x.Secret(ctx, s, "LEADLINE_TEST_STORED_PW")
		is.NoErr(err)
		is.Equal(v, "from-the-environment")
	})
}
