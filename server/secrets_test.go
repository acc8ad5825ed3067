package server

import (
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/internal/secret"
)

// A webhook created with an Idempotency-Key: the stored answer, which
// carries the signing secret, is sealed, so a copy of the database holds
// no whsec_; the replay still answers the secret in full.
func TestStoredAnswerSealed(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := context.Background()
		body := map[string]any{"url": "https://127.0.0.1:9/h", "events": []string{"*"}}
		first := e.call("POST", "/v1/webhooks", "manager", body, "Idempotency-Key", "hook-1")
		is.Equal(first.Status, 201)
		plain := first.data()["secret"].(string)
		is.True(strings.HasPrefix(plain, "whsec_"))

		var raw [][]byte
		is.NoErr(e.db.NewRaw("SELECT body FROM idempotency WHERE idem_key = 'hook-1'").Scan(ctx, &raw))
		is.Equal(len(raw), 1)
		is.True(secret.IsSealed(raw[0]))
		is.True(!strings.Contains(string(raw[0]), "whsec_"))
		is.True(!strings.Contains(string(raw[0]), strings.TrimPrefix(plain, "whsec_")))
		var hooks []string
		is.NoErr(e.db.NewRaw("SELECT secret FROM webhooks").Scan(ctx, &hooks))
		is.Equal(len(hooks), 1)
		is.True(!strings.Contains(hooks[0], "whsec_"))

		again := e.call("POST", "/v1/webhooks", "manager", body, "Idempotency-Key", "hook-1")
		is.Equal(again.Status, 201)
		is.Equal(again.Header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(again.Raw), string(first.Raw))
		is.Equal(again.data()["secret"], plain)

		// A sealed answer opens only for its own API key and
		// Idempotency-Key: moved under another (only someone who can write
		// the database can), it is an internal error, never replayed.
		_, err := e.db.NewRaw("UPDATE idempotency SET idem_key = 'hook-2' WHERE idem_key = 'hook-1'").Exec(ctx)
		is.NoErr(err)
		moved := e.call("POST", "/v1/webhooks", "manager", body, "Idempotency-Key", "hook-2")
		assertEnvelope(t, moved, 500, "E_INTERNAL")
		is.True(!strings.Contains(string(moved.Raw), plain))
	})
}

// The scheduling providers' secrets are sealed; the inbound routes verify
// signatures with them all the same (TestInboundBookings), and applying
// the same secret again changes nothing.
func TestBookingSecretsSealed(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := context.Background()
		w, err := e.ws.ByName(ctx, "acme")
		is.NoErr(err)
		changes, err := e.srv.bookings.SetSecrets(ctx, w.ID, bookings.Secrets{CalCom: "cal-secret-value", Calendly: "cly-secret-value"})
		is.NoErr(err)
		is.Equal(changes, []string{"calcom booking secret set", "calendly booking secret set"})
		var raw []string
		is.NoErr(e.db.NewRaw("SELECT secret FROM booking_secrets ORDER BY provider").Scan(ctx, &raw))
		is.Equal(len(raw), 2)
		for _, v := range raw {
			is.True(secret.IsSealed([]byte(v)))
			is.True(!strings.Contains(v, "secret-value"))
		}
		changes, err = e.srv.bookings.SetSecrets(ctx, w.ID, bookings.Secrets{CalCom: "cal-secret-value", Calendly: "cly-secret-value"})
		is.NoErr(err)
		is.Equal(len(changes), 0)
		var again []string
		is.NoErr(e.db.NewRaw("SELECT secret FROM booking_secrets ORDER BY provider").Scan(ctx, &again))
		is.Equal(again, raw)
		changes, err = e.srv.bookings.SetSecrets(ctx, w.ID, bookings.Secrets{Calendly: "new-value"})
		is.NoErr(err)
		is.Equal(changes, []string{"calendly booking secret set"})

		cal := `{"triggerEvent":"BOOKING_CREATED","payload":{"uid":"bk-9","startTime":"2026-11-05T14:00:00Z","attendees":[{"email":"x@example.test"}]}}`
		is.Equal(e.call("POST", "/inbound/calcom/"+w.ID, "", cal, "X-Cal-Signature-256", hexSig("cal-secret-value", cal)).Status, 200)
		assertEnvelope(t, e.call("POST", "/inbound/calcom/"+w.ID, "", cal, "X-Cal-Signature-256", hexSig(raw[0], cal)), 401, "E_UNAUTHORIZED")
	})
}
