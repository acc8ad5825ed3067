package bookings_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/workspace"
)

var now = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// bundle is a workspace with Cal.com and Calendly secrets and one lead.
type bundle struct {
	svc   *bookings.Service
	ws    string
	lead  string
	clock *apikit.FakeClock
}

func setup(t *testing.T, d *db.DB) *bundle {
	t.Helper()
	ctx := context.Background()
	clock := apikit.NewFakeClock(now)
	log := events.NewLog(d, clock)
	wss := workspace.NewService(d, clock)
	if _, err := wss.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{Name: "acme",
		Members: []workspace.MemberSpec{{Email: "owner@acme.test", Role: apikit.RoleOwner}}}}}); err != nil {
		t.Fatal(err)
	}
	w, err := wss.ByName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	ls := leads.NewService(d, clock, wss, log)
	name, email := "Ann Lee", "ann@example.test"
	res, err := ls.Upsert(ctx, apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}, leads.LeadInput{Name: &name, EmailWork: &email})
	if err != nil {
		t.Fatal(err)
	}
	svc := bookings.NewService(d, clock, ls, nil, log, secret.TestKey())
	if _, err := svc.SetSecrets(ctx, w.ID, bookings.Secrets{CalCom: "cal-secret", Calendly: "cly-secret"}); err != nil {
		t.Fatal(err)
	}
	return &bundle{svc: svc, ws: w.ID, lead: res.Lead.ID, clock: clock}
}

func calcom(uid, start, email string) string {
	return fmt.Sprintf(`{"triggerEvent":"BOOKING_CREATED","payload":{"uid":%q,"startTime":%q,"attendees":[{"email":%q}]}}`, uid, start, email)
}

func signed(secret, body string) http.Header {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return http.Header{"X-Cal-Signature-256": {hex.EncodeToString(m.Sum(nil))}}
}

// TestVerifyRefusesWhatNoBookingHolds: a signed body with a control
// character, an id over its bound or a start years away is unreadable
// (422 for the route), never an error of the database (500).
func TestVerifyRefusesWhatNoBookingHolds(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d)
		ctx := context.Background()
		ok := calcom("bk-1", "2026-11-05T14:00:00Z", "ANN@example.test")
		got, err := b.svc.Verify(ctx, bookings.CalCom, b.ws, signed("cal-secret", ok), []byte(ok))
		is.NoErr(err)
		is.Equal(got.BookingID, "bk-1")
		is.Equal(got.WorkspaceID, b.ws)
		_, err = b.svc.Verify(ctx, bookings.CalCom, b.ws, signed("wrong", ok), []byte(ok))
		is.True(errors.Is(err, bookings.ErrBadSignature))
		_, err = b.svc.Verify(ctx, bookings.CalCom, "not-an-id", signed("cal-secret", ok), []byte(ok))
		is.True(errors.Is(err, bookings.ErrUnknownWorkspace))
		for name, body := range map[string]string{
			"NUL in uid":       calcom("bk\u0000", "2026-11-05T14:00:00Z", "ann@example.test"),
			"CR LF in email":   calcom("bk-2", "2026-11-05T14:00:00Z", "ann@example.test\r\nBcc: x@evil.test"),
			"long uid":         calcom(strings.Repeat("x", bookings.MaxBookingIDLength+1), "2026-11-05T14:00:00Z", "ann@example.test"),
			"start in 2031":    calcom("bk-3", "2031-01-01T00:00:00Z", "ann@example.test"),
			"start in 1999":    calcom("bk-4", "1999-01-01T00:00:00Z", "ann@example.test"),
			"not a booking":    `{"triggerEvent":"BOOKING_CREATED","payload":{}}`,
			"not JSON":         `nope`,
			"invalid UTF-8 id": strings.Replace(calcom("bk-5", "2026-11-05T14:00:00Z", "a@b.test"), "bk-5", "bk-\xff", 1),
		} {
			_, err := b.svc.Verify(ctx, bookings.CalCom, b.ws, signed("cal-secret", body), []byte(body))
			if !errors.Is(err, bookings.ErrUnreadable) {
				t.Errorf("%s: got %v", name, err)
			}
		}
		// Other triggers are accepted and ignored.
		other := `{"triggerEvent":"BOOKING_CANCELLED","payload":{"uid":"bk-1"}}`
		got, err = b.svc.Verify(ctx, bookings.CalCom, b.ws, signed("cal-secret", other), []byte(other))
		is.NoErr(err)
		is.True(got == nil)
	})
}

// TestBookOnce: a booking is recorded once per provider booking id, and
// only a lead's writes meeting.booked; Seen tells both beforehand.
func TestBookOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d)
		ctx := context.Background()
		bk := &bookings.Booking{WorkspaceID: b.ws, Provider: bookings.CalCom, BookingID: "bk-1", InviteeEmail: "Ann@Example.test", StartsAt: now.Add(72 * time.Hour)}
		lead, recorded, err := b.svc.Seen(ctx, bk)
		is.NoErr(err)
		is.Equal(*lead, b.lead)
		is.True(!recorded)
		added, err := b.svc.Book(ctx, bk)
		is.NoErr(err)
		is.True(added)
		is.Equal(*bk.LeadID, b.lead)
		again := &bookings.Booking{WorkspaceID: b.ws, Provider: bookings.CalCom, BookingID: "bk-1", InviteeEmail: "ann@example.test", StartsAt: now}
		_, recorded, err = b.svc.Seen(ctx, again)
		is.NoErr(err)
		is.True(recorded)
		added, err = b.svc.Book(ctx, again)
		is.NoErr(err)
		is.True(!added)
		n, err := d.NewSelect().Table("events").Where("kind = ? AND lead_id = ?", bookings.EventBooked, b.lead).Count(ctx)
		is.NoErr(err)
		is.Equal(int(n), 1)
		// Nobody's booking is kept, with no event.
		nobody := &bookings.Booking{WorkspaceID: b.ws, Provider: bookings.Calendly, BookingID: "u-1", InviteeEmail: "nobody@example.test", StartsAt: now}
		lead, _, err = b.svc.Seen(ctx, nobody)
		is.NoErr(err)
		is.True(lead == nil)
		added, err = b.svc.Book(ctx, nobody)
		is.NoErr(err)
		is.True(added)
		n, err = d.NewSelect().Table("events").Where("kind = ?", bookings.EventBooked).Count(ctx)
		is.NoErr(err)
		is.Equal(int(n), 1)
	})
}
