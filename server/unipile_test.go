package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
			{Name: "max-li", Channel: senders.LinkedIn, Transport: unipile.Name,
				Sections: (&unipile.Account{AccountID: "acc_ann", APIKeyEnv: "UNIPILE_API_KEY", WebhookSecretEnv: "LEADLINE_TEST_UNIPILE_WEBHOOK"}).Sections()},
			{Name: "no-secret", Channel: senders.LinkedIn, Transport: unipile.Name,
				Sections: (&unipile.Account{AccountID: "acc_bare", APIKeyEnv: "UNIPILE_API_KEY"}).Sections()},
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

		// Unsigned, signed with another secret, stale, a body changed, a
		// sender without a secret, an account nobody has, a body over
		// 1 MiB: one answer for all, naming nothing; nothing queued.
		bare := `{"id":"e1","created_at":"2026-11-02T09:15:00Z","account_id":"acc_bare","type":"account.status.running","payload":{}}`
		big := `{"account_id":"acc_ann","pad":"` + strings.Repeat("x", 1<<20) + `"}`
		first := post(msg, "")
		assertEnvelope(t, first, 401, "E_UNAUTHORIZED")
		for _, r := range []*resp{
			post(msg, unipile.Sign("another", []byte(msg), now)),
			post(msg, unipile.Sign("whsec-test", []byte(msg), now.Add(-10*time.Minute))),
			post(msg+" ", unipile.Sign("whsec-test", []byte(msg), now)),
			post(bare, unipile.Sign("", []byte(bare), now)),
			post(big, unipile.Sign("whsec-test", []byte(big), now)),
			post("[]", "t=1,v0=00"),
		} {
			is.Equal(r.Status, first.Status)
			is.Equal(r.Body["error"].(map[string]any)["message"], first.Body["error"].(map[string]any)["message"])
			is.Equal(r.Body["error"].(map[string]any)["remedy"], first.Body["error"].(map[string]any)["remedy"])
			is.Equal(len(r.Body["error"].(map[string]any)), len(first.Body["error"].(map[string]any)))
		}
		for _, name := range []string{"max-li", "acc_ann", "acme", "whsec", "LEADLINE_TEST"} {
			is.True(!strings.Contains(string(first.Raw), name))
		}
		// Verified, about an account no sender has: acknowledged, so that
		// Unipile stops sending it.
		other := `{"id":"e2","created_at":"2026-11-02T09:15:00Z","account_id":"acc_other","type":"message.new","payload":{}}`
		r := post(other, unipile.Sign("whsec-test", []byte(other), now))
		is.Equal(r.Status, 200)
		is.Equal(r.data()["queued"], 0.0)
		// Verified, but no event, or values no lead can hold: 422.
		assertEnvelope(t, post("[]", unipile.Sign("whsec-test", []byte("[]"), now)), 422, "E_PAYLOAD_INVALID")
		for _, bad := range []string{
			strings.Replace(msg, `"sender_id": "ACo`, `"sender_id": "\u0000ACo`, 1),
			strings.Replace(msg, `"chat_id": "chat-ann-1"`, `"chat_id": "chat\nann"`, 1),
			strings.Replace(msg, `"id": "msg-ann-3"`, `"id": "`+strings.Repeat("m", 201)+`"`, 1),
			strings.Replace(msg, `"text": "Thanks`, `"text": "\u0000Thanks`, 1),
			strings.Replace(msg, `"account_id": "acc_ann"`, `"account_id": "acc_ann\u0000"`, 1),
		} {
			is.True(bad != msg)
			assertEnvelope(t, post(bad, unipile.Sign("whsec-test", []byte(bad), now)), 422, "E_PAYLOAD_INVALID")
		}
		is.Equal(queued(), 0)

		// Signed: queued once, however often Unipile delivers it.
		r = post(msg, unipile.Sign("whsec-test", []byte(msg), now))
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
