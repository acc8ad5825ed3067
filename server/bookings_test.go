package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/bookings"
)

func hexSig(secret, msg string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

func TestInboundBookings(t *testing.T) {
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := context.Background()
		w, _ := e.ws.ByName(ctx, "acme")
		_, err := e.srv.bookings.SetSecrets(ctx, w.ID, bookings.Secrets{CalCom: "cal-secret", Calendly: "cly-secret"})
		is.NoErr(err)
		ann := e.lead("member", map[string]any{"name": "Ann Lee", "email_work": "ann@example.test"})["id"].(string)
		// A webhook subscribed to meeting.booked sees the booking.
		is.Equal(e.call("POST", "/v1/webhooks", "manager", map[string]any{"url": "https://127.0.0.1:9/h", "events": []string{"meeting.booked"}}).Status, 201)

		cal := `{"triggerEvent":"BOOKING_CREATED","payload":{"uid":"bk-1","startTime":"2026-11-05T14:00:00Z","attendees":[{"email":"ANN@example.test","name":"Ann"}]}}`
		path := "/inbound/calcom/" + w.ID
		assertEnvelope(t, e.call("POST", path, "", cal, "X-Cal-Signature-256", hexSig("wrong", cal)), 401, "E_UNAUTHORIZED")
		assertEnvelope(t, e.call("POST", "/inbound/calcom/0193a000-0000-7000-8000-000000000000", "", cal, "X-Cal-Signature-256", hexSig("cal-secret", cal)), 404, "E_NOT_FOUND")
		assertEnvelope(t, e.call("POST", "/inbound/zoom/"+w.ID, "", cal), 404, "E_NOT_FOUND")
		r := e.call("POST", path, "", cal, "X-Cal-Signature-256", hexSig("cal-secret", cal))
		is.Equal(r.Status, 200)
		is.Equal(r.data()["booked"], true)
		is.Equal(r.data()["lead_id"], ann)
		// The provider retries: booked once.
		is.Equal(e.call("POST", path, "", cal, "X-Cal-Signature-256", hexSig("cal-secret", cal)).Status, 200)
		var kinds []map[string]any
		for _, ev := range e.call("GET", "/v1/leads/"+ann+"/timeline", "viewer", nil).Body["data"].([]any) {
			if ev.(map[string]any)["kind"] == "meeting.booked" {
				kinds = append(kinds, ev.(map[string]any))
			}
		}
		is.Equal(len(kinds), 1)
		data := kinds[0]["data"].(map[string]any)
		is.Equal(data["provider"], "calcom")
		is.Equal(data["booking_id"], "bk-1")
		is.Equal(data["lead_id"], ann)
		is.Equal(data["starts_at"], "2026-11-05T14:00:00Z")
		ds := e.call("GET", "/v1/webhooks/deliveries", "manager", nil).Body["data"].([]any)
		is.Equal(len(ds), 1)
		is.Equal(ds[0].(map[string]any)["type"], "meeting.booked")

		// Other triggers are accepted and ignored; a broken body is 422.
		other := `{"triggerEvent":"BOOKING_CANCELLED","payload":{"uid":"bk-1"}}`
		r = e.call("POST", path, "", other, "X-Cal-Signature-256", hexSig("cal-secret", other))
		is.Equal(r.Status, 200)
		is.Equal(r.data()["booked"], false)
		assertEnvelope(t, e.call("POST", path, "", "nope", "X-Cal-Signature-256", hexSig("cal-secret", "nope")), 422, "E_PAYLOAD_INVALID")

		// Calendly: t=…,v1=HMAC(t.body), within five minutes.
		cly := `{"event":"invitee.created","payload":{"uri":"https://api.calendly.com/scheduled_events/E1/invitees/I1","email":"nobody@example.test","scheduled_event":{"start_time":"2026-11-06T09:30:00Z"}}}`
		ts := fmt.Sprint(e.clock.Now().Unix())
		sig := "t=" + ts + ",v1=" + hexSig("cly-secret", ts+"."+cly)
		r = e.call("POST", "/inbound/calendly/"+w.ID, "", cly, "Calendly-Webhook-Signature", sig)
		is.Equal(r.Status, 200)
		is.Equal(r.data()["lead_id"], nil) // no lead has that email: kept, no event
		old := fmt.Sprint(e.clock.Now().Add(-10 * time.Minute).Unix())
		assertEnvelope(t, e.call("POST", "/inbound/calendly/"+w.ID, "", cly, "Calendly-Webhook-Signature", "t="+old+",v1="+hexSig("cly-secret", old+"."+cly)), 401, "E_UNAUTHORIZED")
		assertEnvelope(t, e.call("POST", "/inbound/calendly/"+w.ID, "", cly), 401, "E_UNAUTHORIZED")
	})
}
