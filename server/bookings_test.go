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
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/workspace"
)

func hexSig(secret, msg string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

func TestInboundBookings(t *testing.T) {
	t.Parallel()
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
		var r *resp
		is.NoErr(e.srv.Flush(context.Background())) // no flush of the rate counts under way while the recorder joins
		queries := dbtest.Record(e.db).During(func() { r = e.call("POST", path, "", cal, "X-Cal-Signature-256", hexSig("cal-secret", cal)) })
		// The request's reads (the secret, the lead, a replay) go through
		// their indexes.
		dbtest.AssertNoScan(t, e.db, "bookings", "", queries)
		dbtest.AssertNoScan(t, e.db, "booking_secrets", "", queries)
		is.Equal(r.Status, 200)
		is.Equal(r.data()["booked"], true)
		is.Equal(r.data()["lead_id"], ann)
		is.Equal(r.data()["new"], true)
		// Queued in the request, booked by a worker.
		tick := func() {
			_, err := e.pl.Runner().Tick(ctx)
			is.NoErr(err)
		}
		tick()
		// The provider retries, before and after the worker booked it:
		// booked once, and the answer says nothing new was recorded.
		r = e.call("POST", path, "", cal, "X-Cal-Signature-256", hexSig("cal-secret", cal))
		is.Equal(r.Status, 200)
		is.Equal(r.data()["new"], false)
		tick()
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
		is.Equal(r.data()["new"], true)
		r = e.call("POST", "/inbound/calendly/"+w.ID, "", cly, "Calendly-Webhook-Signature", sig)
		is.Equal(r.data()["new"], false) // already queued
		tick()
		var kept int
		is.NoErr(e.db.NewSelect().Table("bookings").ColumnExpr("count(*)").Where("workspace_id = ?", w.ID).Scan(ctx, &kept))
		is.Equal(kept, 2)
		old := fmt.Sprint(e.clock.Now().Add(-10 * time.Minute).Unix())
		assertEnvelope(t, e.call("POST", "/inbound/calendly/"+w.ID, "", cly, "Calendly-Webhook-Signature", "t="+old+",v1="+hexSig("cly-secret", old+"."+cly)), 401, "E_UNAUTHORIZED")
		assertEnvelope(t, e.call("POST", "/inbound/calendly/"+w.ID, "", cly), 401, "E_UNAUTHORIZED")
	})
}

// TestInboundBookingsRefuseBadInputCleanly: a signed webhook whose values
// no booking can hold answers 422 in the envelope, never 500 (which a
// provider would retry forever), and a suspended workspace records nothing
// (402), as its /v1 calls do.
func TestInboundBookingsRefuseBadInputCleanly(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := context.Background()
		w, _ := e.ws.ByName(ctx, "acme")
		_, err := e.srv.bookings.SetSecrets(ctx, w.ID, bookings.Secrets{CalCom: "cal-secret"})
		is.NoErr(err)
		spec := workspace.WorkspaceSpec{Name: "acme"}
		path := "/inbound/calcom/" + w.ID
		for name, body := range map[string]string{
			"NUL in uid":     `{"triggerEvent":"BOOKING_CREATED","payload":{"uid":"bk\u0000","startTime":"2026-11-05T14:00:00Z","attendees":[{"email":"a@b.test"}]}}`,
			"far start":      `{"triggerEvent":"BOOKING_CREATED","payload":{"uid":"bk-9","startTime":"2999-01-01T00:00:00Z","attendees":[{"email":"a@b.test"}]}}`,
			"not UTF-8":      "{\"triggerEvent\":\"BOOKING_CREATED\",\"payload\":{\"uid\":\"bk-\xff\",\"startTime\":\"2026-11-05T14:00:00Z\",\"attendees\":[{\"email\":\"a@b.test\"}]}}",
			"CR LF in email": `{"triggerEvent":"BOOKING_CREATED","payload":{"uid":"bk-8","startTime":"2026-11-05T14:00:00Z","attendees":[{"email":"a@b.test\r\nBcc: x@evil.test"}]}}`,
		} {
			r := e.call("POST", path, "", body, "X-Cal-Signature-256", hexSig("cal-secret", body))
			if r.Status != 422 {
				t.Errorf("%s: %d %s", name, r.Status, r.Raw)
			}
		}
		n, err := e.db.NewSelect().Table("inbound").Count(ctx)
		is.NoErr(err)
		is.Equal(int(n), 0) // nothing queued

		suspended := true
		spec.Suspended = &suspended
		_, err = e.ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{spec}})
		is.NoErr(err)
		ok := `{"triggerEvent":"BOOKING_CREATED","payload":{"uid":"bk-1","startTime":"2026-11-05T14:00:00Z","attendees":[{"email":"a@b.test"}]}}`
		assertEnvelope(t, e.call("POST", path, "", ok, "X-Cal-Signature-256", hexSig("cal-secret", ok)), 402, "E_PLAN_SUSPENDED")
		n, err = e.db.NewSelect().Table("inbound").Count(ctx)
		is.NoErr(err)
		is.Equal(int(n), 0)
	})
}
