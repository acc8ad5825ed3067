package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
)

// maxBookingBody bounds a provider's webhook body.
const maxBookingBody = 1 << 20

// inboundBooking takes a scheduling provider's webhook:
// POST /inbound/{provider}/{workspace_id}, with no API key: the provider's
// signature over the body, with the workspace's secret for it, is the
// credential. A new booking of a known lead writes meeting.booked.
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
	b, err := s.bookings.Receive(r.Context(), provider, workspaceID, r.Header, body)
	switch {
	case errors.Is(err, bookings.ErrUnknownWorkspace):
		writeNotFound(w, "Workspace "+workspaceID, "Set the provider's signing secret for the workspace in the setup file (bookings:) and apply it.")
	case errors.Is(err, bookings.ErrBadSignature):
		writeEnvelope(w, fromAPI(apikit.Errorf(apikit.EUnauthorized, "Check that the provider's signing secret matches the one in the setup file.",
			"The %s signature of the webhook does not match.", provider)))
	case errors.Is(err, bookings.ErrUnreadable):
		writeEnvelope(w, fromAPI(apikit.Invalid(err.Error()+".", "Subscribe the provider's webhook to new bookings (BOOKING_CREATED, invitee.created).")))
	case err != nil:
		s.logger.Error("bookings: inbound", "provider", provider, "error", err)
		writeEnvelope(w, fromAPI(apikit.Errorf(apikit.EInternal, "Try again; the provider retries on its own.", "The booking could not be recorded.")))
	default:
		w.Header().Set("Content-Type", "application/json")
		out := map[string]any{"data": map[string]any{"booked": b != nil}}
		if b != nil {
			out["data"].(map[string]any)["booking_id"], out["data"].(map[string]any)["lead_id"] = b.BookingID, b.LeadID
		}
		_ = json.NewEncoder(w).Encode(out)
	}
}
