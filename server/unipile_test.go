package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/unipile"
)

func unipileEvent(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "transports", "unipile", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInboundUnipile: Unipile's webhook is verified with the sender's
// secret before anything is queued; a delivery is queued once however
// often it comes, and a worker records it.
func TestInboundUnipile(t *testing.T) {
	t.Setenv("LEADLINE_TEST_UNIPILE_WEBHOOK", "whsec-test")
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := context.Background()
		w, _ := e.ws.ByName(ctx, "acme")
		_, err := e.srv.senders.Apply(ctx, senders.Owner{WorkspaceID: w.ID, Timezone: w.Timezone}, []senders.Spec{
			{Name: "max-li", Channel: senders.LinkedIn, Transport: senders.TransportUnipile,
				Unipile: &senders.Unipile{AccountID: "acc_ann", APIKeyEnv: "UNIPILE_API_KEY", WebhookSecretEnv: "LEADLINE_TEST_UNIPILE_WEBHOOK"}},
			{Name: "no-secret", Channel: senders.LinkedIn, Transport: senders.TransportUnipile,
				Unipile: &senders.Unipile{AccountID: "acc_bare", APIKeyEnv: "UNIPILE_API_KEY"}},
		})
		is.NoErr(err)
		queued := func() int {
			n, err := e.db.NewSelect().Table("inbound").Where("source = ?", unipile.Source).Count(ctx)
			is.NoErr(err)
			return int(n)
		}
		post := func(body, sig string) *resp {
			if sig == "" {
				return e.call("POST", "/inbound/unipile", "", body)
			}
			return e.call("POST", "/inbound/unipile", "", body, unipile.SignatureHeader, sig)
		}
		now := e.clock.Now()
		msg := unipileEvent(t, "webhook_message_new.json")

		// Unsigned, signed with another secret, stale: 401, nothing queued.
		assertEnvelope(t, post(msg, ""), 401, "E_UNAUTHORIZED")
		assertEnvelope(t, post(msg, unipile.Sign("another", []byte(msg), now)), 401, "E_UNAUTHORIZED")
		assertEnvelope(t, post(msg, unipile.Sign("whsec-test", []byte(msg), now.Add(-10*time.Minute))), 401, "E_UNAUTHORIZED")
		assertEnvelope(t, post(msg+" ", unipile.Sign("whsec-test", []byte(msg), now)), 401, "E_UNAUTHORIZED") // body changed
		// A sender without a webhook secret takes no webhook.
		bare := `{"id":"e1","created_at":"2026-11-02T09:15:00Z","account_id":"acc_bare","type":"account.status.running","payload":{}}`
		assertEnvelope(t, post(bare, unipile.Sign("", []byte(bare), now)), 401, "E_UNAUTHORIZED")
		// An account no sender has; a body that is no event.
		other := `{"id":"e2","created_at":"2026-11-02T09:15:00Z","account_id":"acc_other","type":"message.new","payload":{}}`
		assertEnvelope(t, post(other, unipile.Sign("whsec-test", []byte(other), now)), 404, "E_NOT_FOUND")
		assertEnvelope(t, post("[]", unipile.Sign("whsec-test", []byte("[]"), now)), 422, "E_PAYLOAD_INVALID")
		is.Equal(queued(), 0)

		// Signed: queued once, however often Unipile delivers it.
		r := post(msg, unipile.Sign("whsec-test", []byte(msg), now))
		is.Equal(r.Status, 200)
		is.Equal(r.data()["reports"], 1.0)
		is.Equal(r.data()["queued"], 1.0)
		r = post(msg, unipile.Sign("whsec-test", []byte(msg), now.Add(time.Minute)))
		is.Equal(r.Status, 200)
		is.Equal(r.data()["queued"], 0.0)
		is.Equal(queued(), 1)

		// Other events are accepted and ignored.
		read := `{"id":"e3","created_at":"2026-11-02T09:15:00Z","account_id":"acc_ann","type":"message.receipt.read","payload":{}}`
		r = post(read, unipile.Sign("whsec-test", []byte(read), now))
		is.Equal(r.Status, 200)
		is.Equal(r.data()["reports"], 0.0)

		// The account's disconnection reaches the sender's health through
		// the queue.
		gone := unipileEvent(t, "webhook_account_disconnected.json")
		is.Equal(post(gone, unipile.Sign("whsec-test", []byte(gone), now)).data()["queued"], 1.0)
		_, err = e.pl.Runner().Tick(ctx)
		is.NoErr(err)
		s, err := e.srv.senders.ByName(ctx, w.ID, "max-li")
		is.NoErr(err)
		is.Equal(s.Health, senders.Disconnected)
	})
}
