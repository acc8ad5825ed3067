package unipile

import (
	"context"
	"net/http"

	"github.com/leadline/leadline/senders"
)

// Withdraw cancels a sender's pending invitation through Unipile's "Cancel
// or Refuse a Relation request": POST
// /{account_id}/users/me/relation-requests/{request_id}/cancel, which
// cancels a request the account's owner sent (docs/TRANSPORTS.md). An
// invitation leadline knows no provider id of cannot be named, and one
// Unipile no longer has pending (accepted, expired, withdrawn by hand)
// is a permanent error: either way it is recorded withdrawn.
func (t *Transport) Withdraw(ctx context.Context, s *senders.Sender, inv senders.SentInvitation) error {
	if inv.Invitation == "" {
		return &senders.TransportError{Kind: senders.Permanent, Code: "invitation_unknown",
			Message: "The invitation was sent before leadline kept Unipile's id of it: it cannot be named to withdraw it."}
	}
	err := t.call(ctx, s, http.MethodPost, accountPath(s, "users", "me", "relation-requests", inv.Invitation, "cancel"), nil, nil, nil)
	if te, ok := senders.AsTransportError(err); ok && te.Kind != senders.SenderLevel && te.Kind != senders.Transient {
		// Unipile has no such pending invitation any more.
		return &senders.TransportError{Kind: senders.Permanent, Code: "invitation_not_pending", Message: te.Message}
	}
	return err
}

var _ senders.Withdrawer = (*Transport)(nil)
