package unipile_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/senders"
)

// TestWithdraw: a stale invitation is cancelled by its id under the
// account's relation requests; one Unipile no longer has pending, or one
// leadline knows no id of, is a permanent error (recorded withdrawn all
// the same).
func TestWithdraw(t *testing.T) {
	is := is.New(t)
	b := setup(t, false)
	ctx := context.Background()
	inv := senders.SentInvitation{LeadID: "lead-ann", Invitation: "inv-7300000000000000001", MemberID: annID, SentAt: t0}
	is.NoErr(b.tr.Withdraw(ctx, b.sender, inv))
	is.Equal(routes(b.fake.calls()), []string{"POST /v2/acc_ann/users/me/relation-requests/inv-7300000000000000001/cancel"})

	b.fake.script("POST /v2/acc_ann/users/me/relation-requests/inv-7300000000000000001/cancel",
		answer{status: 404, body: problemBody(404, "provider/resource_not_found", "No pending invitation.")})
	te := transportError(t, b.tr.Withdraw(ctx, b.sender, inv))
	is.Equal(te.Kind, senders.Permanent)

	inv.Invitation = ""
	te = transportError(t, b.tr.Withdraw(ctx, b.sender, inv))
	is.Equal(te.Kind, senders.Permanent)
	is.Equal(te.Code, "invitation_unknown")
}
