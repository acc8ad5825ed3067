package secret_test

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
	"github.com/leadline/leadline/workspace"
)

// plainRows writes, as leadline did before sealing, a webhook and a
// booking secret and a stored answer carrying a webhook secret, and
// returns the webhook's id, the workspace's and the API key's.
func plainRows(t *testing.T, d *db.DB) (hookID, wsID, keyID string) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	ws := workspace.NewService(d, apikit.NewFakeClock(now))
	if _, err := ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{Name: "acme", Plan: apikit.PlanPro}}}); err != nil {
		t.Fatal(err)
	}
	w, err := ws.ByName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	hookID, keyID = apikit.NewID(), apikit.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO webhooks (id, workspace_id, url, events, secret, created_at, updated_at) VALUES (?, ?, 'https://example.test/h', '[\"*\"]', 'whsec_plainwebhook', ?, ?)",
			[]any{hookID, w.ID, now, now}},
		{"INSERT INTO booking_secrets (workspace_id, provider, secret, updated_at) VALUES (?, 'calcom', 'plain-cal-secret', ?)", []any{w.ID, now}},
		{"INSERT INTO idempotency (key_id, idem_key, fingerprint, state, status, body, locked_until, expires_at, created_at) VALUES (?, 'k/1', 'fp', 'done', 201, ?, ?, ?, ?)",
			[]any{keyID, []byte(`{"data":{"secret":"whsec_plainanswer"}}`), now, now.Add(24 * time.Hour), now}},
		// A request still running has no answer yet.
		{"INSERT INTO idempotency (key_id, idem_key, fingerprint, state, status, locked_until, expires_at, created_at) VALUES (?, 'k2', 'fp', 'running', 0, ?, ?, ?)",
			[]any{keyID, now, now.Add(24 * time.Hour), now}},
	} {
		if _, err := d.NewRaw(q.sql, q.args...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return hookID, w.ID, keyID
}

// stored reads the three values as the database holds them.
func stored(t *testing.T, d *db.DB) (hook, booking string, answer []byte) {
	t.Helper()
	ctx := context.Background()
	var s []string
	if err := d.NewRaw("SELECT secret FROM webhooks").Scan(ctx, &s); err != nil || len(s) != 1 {
		t.Fatal(err, s)
	}
	hook = s[0]
	s = nil
	if err := d.NewRaw("SELECT secret FROM booking_secrets").Scan(ctx, &s); err != nil || len(s) != 1 {
		t.Fatal(err, s)
	}
	booking = s[0]
	var b [][]byte
	if err := d.NewRaw("SELECT body FROM idempotency WHERE idem_key = 'k/1'").Scan(ctx, &b); err != nil || len(b) != 1 {
		t.Fatal(err, b)
	}
	return hook, booking, b[0]
}

func TestPrepareSealsWhatWasInTheClear(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		hookID, wsID, keyID := plainRows(t, d)
		k := secret.TestKey()

		n, err := secret.Prepare(ctx, d, k)
		is.NoErr(err)
		is.Equal(n, 3)
		hook, booking, answer := stored(t, d)
		for _, v := range []string{hook, booking, string(answer)} {
			is.True(secret.IsSealed([]byte(v)))
			is.True(!strings.Contains(v, "whsec_"))
			is.True(!strings.Contains(v, "plain"))
		}
		got, err := k.OpenString(hook, secret.WebhookSecrets.AAD(hookID))
		is.NoErr(err)
		is.Equal(got, "whsec_plainwebhook")
		got, err = k.OpenString(booking, secret.BookingSecrets.AAD(wsID, "calcom"))
		is.NoErr(err)
		is.Equal(got, "plain-cal-secret")
		plain, err := k.Open(answer, secret.StoredAnswers.AAD(keyID, "k/1"))
		is.NoErr(err)
		is.Equal(string(plain), `{"data":{"secret":"whsec_plainanswer"}}`)
		var running []int
		is.NoErr(d.NewRaw("SELECT count(*) FROM idempotency WHERE idem_key = 'k2' AND body IS NULL").Scan(ctx, &running))
		is.Equal(running[0], 1)

		// Again: nothing more to seal, nothing changed.
		n, err = secret.Prepare(ctx, d, k)
		is.NoErr(err)
		is.Equal(n, 0)
		hook2, booking2, answer2 := stored(t, d)
		is.Equal(hook2, hook)
		is.Equal(booking2, booking)
		is.Equal(string(answer2), string(answer))
	})
}

func TestPrepareRefusesTheWrongKey(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		plainRows(t, d)

		// No key while secrets are kept in the clear: refused, with the remedy.
		_, err := secret.Prepare(ctx, d, secret.Key{})
		is.True(err != nil)
		var ae *apikit.Error
		is.True(errors.As(err, &ae))
		is.True(strings.Contains(ae.Message, secret.EnvKey))
		is.True(strings.Contains(ae.Message, "2 secrets"))
		is.True(strings.Contains(ae.Remedy, "openssl rand -base64 32"))

		k := secret.TestKey()
		_, err = secret.Prepare(ctx, d, k)
		is.NoErr(err)

		// Another key, or none, once they are sealed: refused, naming the key.
		other, _, _ := secret.Generate()
		for _, wrong := range []secret.Key{other, {}} {
			_, err = secret.Prepare(ctx, d, wrong)
			is.True(errors.As(err, &ae))
			is.True(strings.Contains(ae.Message, k.ID()))
			is.True(strings.Contains(ae.Remedy, secret.EnvKey))
		}
		hook, _, _ := stored(t, d)
		id, _ := secret.KeyID([]byte(hook))
		is.Equal(id, k.ID()) // nothing was touched
	})
}

func TestPrepareWithoutKeyOrSecrets(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		n, err := secret.Prepare(ctx, d, secret.Key{})
		is.NoErr(err)
		is.Equal(n, 0)
		// Stored answers of a server without a key stay as they are.
		_, err = d.NewRaw("INSERT INTO idempotency (key_id, idem_key, fingerprint, state, status, body, locked_until, expires_at, created_at) VALUES (?, 'k', 'fp', 'done', 200, ?, ?, ?, ?)",
			apikit.NewID(), []byte(`{}`), time.Now(), time.Now().Add(time.Hour), time.Now()).Exec(ctx)
		is.NoErr(err)
		n, err = secret.Prepare(ctx, d, secret.Key{})
		is.NoErr(err)
		is.Equal(n, 0)
	})
}

func TestRotate(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		hookID, wsID, keyID := plainRows(t, d)
		old := secret.TestKey()
		_, err := secret.Prepare(ctx, d, old)
		is.NoErr(err)
		hook, booking, answer := stored(t, d)

		// A key that did not seal them changes nothing.
		wrong, _, _ := secret.Generate()
		next, _, _ := secret.Generate()
		_, err = secret.Rotate(ctx, d, wrong, next)
		is.True(errors.Is(err, secret.ErrOtherKey))
		h, b, a := stored(t, d)
		is.Equal(h, hook)
		is.Equal(b, booking)
		is.Equal(string(a), string(answer))

		n, err := secret.Rotate(ctx, d, old, next)
		is.NoErr(err)
		is.Equal(n, 3)
		h, b, a = stored(t, d)
		for _, v := range []string{h, b, string(a)} {
			id, ok := secret.KeyID([]byte(v))
			is.True(ok)
			is.Equal(id, next.ID())
		}
		got, err := next.OpenString(h, secret.WebhookSecrets.AAD(hookID))
		is.NoErr(err)
		is.Equal(got, "whsec_plainwebhook")
		got, err = next.OpenString(b, secret.BookingSecrets.AAD(wsID, "calcom"))
		is.NoErr(err)
		is.Equal(got, "plain-cal-secret")
		_, err = next.Open(a, secret.StoredAnswers.AAD(keyID, "k/1"))
		is.NoErr(err)
		_, err = old.OpenString(h, secret.WebhookSecrets.AAD(hookID))
		is.True(errors.Is(err, secret.ErrOtherKey))

		// The server starts with the new key only.
		_, err = secret.Prepare(ctx, d, old)
		is.True(err != nil)
		n, err = secret.Prepare(ctx, d, next)
		is.NoErr(err)
		is.Equal(n, 0)
	})
}
