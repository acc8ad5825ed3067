package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/workspace"
)

// maxBookingBody bounds a provider's webhook body.
const maxBookingBody = 1 << 20

// inboundBooking takes a scheduling provider's webhook:
// POST /inbound/{provider}/{workspace_id}, with no API key: the provider's
// signature over the body, with the workspace's secret for it, is the
// credential. The booking is written to the inbound queue in the request;
// a worker books it (once per provider booking id), and a new booking of a
// known lead writes meeting.booked.
func (s *Server) inboundBooking(w http.ResponseWriter, r *http.Request) {
	provider, workspaceID := r.PathValue("provider"), r.PathValue("workspace")
	if provider != bookings.CalCom && provider != bookings.Calendly {
		writeNotFound(w, "Booking provider "+provider, "Use /inbound/calcom/{workspace_id} or /inbound/calendly/{workspace_id}.")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBookingBody+1))
	if err != nil || len(body) > maxBookingBody {
		writeEnvelope(w, fromAPI(apikit.Invalid("The body could not be read or is over 1 MiB.", "Send the provider's webhook as it is.")))
		return
	}
	ctx := r.Context()
	b, err := s.bookings.Verify(ctx, provider, workspaceID, r.Header, body)
	if err == nil {
		// A suspended workspace records nothing, as its /v1 calls do; the
		// signature is checked first, so that only the provider learns it.
		var ws *workspace.Workspace
		if ws, err = s.workspaces.WorkspaceByID(ctx, workspaceID); err == nil && ws.Suspended {
			writeEnvelope(w, fromAPI(apikit.PlanSuspended()))
			return
		}
	}
	var leadID *string
	fresh := false
	if err == nil && b != nil {
		// What the booking will come to is read now, for the answer; the
		// booking itself is queued in this request and booked by a worker.
		var recorded bool
		if leadID, recorded, err = s.bookings.Seen(ctx, b); err == nil {
			fresh, err = s.inbound.Push(ctx, workspaceID, provider, b.BookingID, engine.Event{Booking: b})
			fresh = fresh && !recorded
		}
	}
	switch {
	case errors.Is(err, bookings.ErrUnknownWorkspace):
		writeNotFound(w, "Workspace "+workspaceID, "Set the provider's signing secret for the workspace in the setup file (bookings:) and apply it.")
	case errors.Is(err, bookings.ErrBadSignature):
		writeEnvelope(w, fromAPI(apikit.Errorf(apikit.EUnauthorized, "Check that the provider's signing secret matches the one in the setup file.",
			"The %s signature of the webhook does not match.", provider)))
	case errors.Is(err, bookings.ErrUnreadable):
		writeEnvelope(w, fromAPI(apikit.Invalid(strings.TrimPrefix(err.Error(), "bookings: ")+".",
			"Subscribe the provider's webhook to new bookings (BOOKING_CREATED, invitee.created) and send its body as it is.")))
	case err != nil:
		s.logger.Error("bookings: inbound", "provider", provider, "error", err)
		writeEnvelope(w, fromAPI(apikit.Errorf(apikit.EInternal, "Try again; the provider retries on its own.", "The booking could not be recorded.")))
	default:
		w.Header().Set("Content-Type", "application/json")
		var out bookingReceived
		out.Data.Booked = b != nil
		if b != nil {
			out.Data.BookingID, out.Data.LeadID, out.Data.New = b.BookingID, leadID, &fresh
		}
		_ = json.NewEncoder(w).Encode(out)
	}
}
