package secret_test

import (
	"context"
	"errors"
	"fmt"
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

// legacy names the rows plainRows writes.
type legacy struct{ hookID, wsID, keyID string }

// plainRows writes, as leadline did before sealing, a webhook and a
// booking secret and a stored answer carrying a webhook secret.
func plainRows(t *testing.T, d *db.DB) legacy {
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
	l := legacy{hookID: apikit.NewID(), wsID: w.ID, keyID: apikit.NewID()}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO webhooks (id, workspace_id, url, events, secret, created_at, updated_at) VALUES (?, ?, 'https://example.test/h', '[\"*\"]', ?, ?, ?)",
			[]any{l.hookID, w.ID, plaintexts[0], now, now}},
		{"INSERT INTO booking_secrets (workspace_id, provider, secret, updated_at) VALUES (?, 'calcom', ?, ?)", []any{w.ID, plaintexts[1], now}},
		{"INSERT INTO idempotency (key_id, idem_key, fingerprint, state, status, body, locked_until, expires_at, created_at) VALUES (?, 'k/1', 'fp', 'done', 201, ?, ?, ?, ?)",
			[]any{l.keyID, []byte(plaintexts[2]), now, now.Add(24 * time.Hour), now}},
		// A request still running has no answer yet.
		{"INSERT INTO idempotency (key_id, idem_key, fingerprint, state, status, locked_until, expires_at, created_at) VALUES (?, 'k2', 'fp', 'running', 0, ?, ?, ?)",
			[]any{l.keyID, now, now.Add(24 * time.Hour), now}},
	} {
		if _, err := d.NewRaw(q.sql, q.args...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// plaintexts are the values plainRows writes in the clear: a webhook's
// secret, a booking secret and a stored answer.
var plaintexts = [3]string{"whsec_plainwebhook", "plain-cal-secret", `{"data":{"secret":"whsec_plainanswer"}}`}

// values are the three values as the database holds them.
type values [3][]byte

// stored reads the three values as the database holds them.
func stored(t *testing.T, d *db.DB) values {
	t.Helper()
	var v values
	for i, q := range []string{"SELECT secret FROM webhooks", "SELECT secret FROM booking_secrets", "SELECT body FROM idempotency WHERE idem_key = 'k/1'"} {
		var b [][]byte
		if err := d.NewRaw(q).Scan(context.Background(), &b); err != nil || len(b) != 1 {
			t.Fatal(q, err, b)
		}
		v[i] = b[0]
	}
	return v
}

// open opens the values with k and checks them against what plainRows
// wrote; every value must be sealed under k.
func (l legacy) open(k secret.Key, v values) error {
	aads := [][]byte{secret.WebhookSecrets.AAD(l.hookID), secret.BookingSecrets.AAD(l.wsID, "calcom"), secret.StoredAnswers.AAD(l.keyID, "k/1")}
	for i := range v {
		got, err := k.Open(v[i], aads[i])
		if err != nil {
			return err
		}
		if string(got) != plaintexts[i] {
			return fmt.Errorf("value %d opens to %q, not %q", i, got, plaintexts[i])
		}
	}
	return nil
}

// sealedRows writes plainRows and seals them under k, as a start-up does,
// and returns them with their values as stored then.
func sealedRows(t *testing.T, d *db.DB, k secret.Key) (legacy, values) {
	t.Helper()
	l := plainRows(t, d)
	if n, err := secret.Prepare(context.Background(), d, k); err != nil || n != 3 {
		t.Fatalf("sealed %d of 3: %v", n, err)
	}
	return l, stored(t, d)
}

func TestPrepareSealsWhatWasInTheClear(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		k := secret.TestKey()
		l, v := sealedRows(t, d, k)
		for _, b := range v {
			is.True(secret.IsSealed(b))
			is.True(!strings.Contains(string(b), "whsec_"))
			is.True(!strings.Contains(string(b), "plain"))
		}
		is.NoErr(l.open(k, v))
		var running []int
		is.NoErr(d.NewRaw("SELECT count(*) FROM idempotency WHERE idem_key = 'k2' AND body IS NULL").Scan(ctx, &running))
		is.Equal(running[0], 1)

		// Again: nothing more to seal, nothing changed.
		n, err := secret.Prepare(ctx, d, k)
		is.NoErr(err)
		is.Equal(n, 0)
		is.Equal(stored(t, d), v)
	})
}

func TestPrepareRefusesTheWrongKey(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		l := plainRows(t, d)

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
		is.NoErr(l.open(k, stored(t, d))) // nothing was touched
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
		old := secret.TestKey()
		l, v := sealedRows(t, d, old)

		// A key that did not seal them changes nothing.
		wrong, _, _ := secret.Generate()
		next, _, _ := secret.Generate()
		_, err := secret.Rotate(ctx, d, wrong, next)
		var ae *apikit.Error
		is.True(errors.As(err, &ae))
		is.True(strings.Contains(ae.Message, old.ID()))
		is.Equal(stored(t, d), v)

		n, err := secret.Rotate(ctx, d, old, next)
		is.NoErr(err)
		is.Equal(n, 3)
		rotated := stored(t, d)
		for _, b := range rotated {
			id, ok := secret.KeyID(b)
			is.True(ok)
			is.Equal(id, next.ID())
		}
		is.NoErr(l.open(next, rotated))
		is.True(errors.Is(l.open(old, rotated), secret.ErrOtherKey))

		// The server starts with the new key only.
		_, err = secret.Prepare(ctx, d, old)
		is.True(err != nil)
		n, err = secret.Prepare(ctx, d, next)
		is.NoErr(err)
		is.Equal(n, 0)
	})
}
