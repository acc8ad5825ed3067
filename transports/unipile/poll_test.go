package unipile_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/unipiletest"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/unipile"
)

// pendingOf is leadline's record of a sender's pending invitations.
type pendingOf []senders.SentInvitation

func (p pendingOf) PendingInvitations(context.Context, string, int) ([]senders.SentInvitation, error) {
	return p, nil
}

// TestPollingComparesPendingInvitations: an invitation that left the
// account's pending list is accepted when its member is now a connection,
// whatever the relations' created_at says; one withdrawn (no connection)
// is not, and its member's profile is read at most once a day.
func TestPollingComparesPendingInvitations(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := apikit.NewFakeClock(t0)
	fake := unipiletest.New(t, clock, apiKey)
	fake.AddAccount("acc_ann")
	ann := unipiletest.Member{ProviderID: annID, PublicIdentifier: "ann-lee-berlin", FirstName: "Ann", LastName: "Lee"}
	bo := unipiletest.Member{ProviderID: "ACoAABo00000000000000000000000000000000", PublicIdentifier: "bo-chen", FirstName: "Bo", LastName: "Chen"}
	fake.AddMember(ann)
	fake.AddMember(bo)
	fake.RelationTimes(false)
	s := &senders.Sender{ID: "snd-ann", WorkspaceID: "ws-1", Name: "max-li", Channel: senders.LinkedIn, Transport: unipile.Name,
		Settings: (&unipile.Account{AccountID: "acc_ann", APIKeyEnv: "UNIPILE_API_KEY", BaseURL: fake.URL}).Settings()}
	var ours pendingOf
	tr := unipile.New(unipile.Config{Credentials: creds{"UNIPILE_API_KEY": apiKey}, Clock: clock, Logger: slog.New(slog.DiscardHandler),
		HTTPClient: fake.Client(), Invitations: &ours})
	for _, m := range []unipiletest.Member{ann, bo} {
		res, err := tr.Perform(ctx, senders.Request{Key: "inv-" + m.PublicIdentifier, Sender: s, Action: senders.Invite,
			Lead: senders.Recipient{LeadID: "lead-" + m.PublicIdentifier, PublicIdentifier: m.PublicIdentifier}})
		is.NoErr(err)
		is.Equal(res.Member.ProviderID, m.ProviderID) // learned from the profile
		ours = append(ours, senders.SentInvitation{LeadID: "lead-" + m.PublicIdentifier, Invitation: res.Invitation, MemberID: res.Member.ProviderID, SentAt: t0})
	}
	fake.Accept("acc_ann", annID, unipiletest.RelationAccept, false)
	fake.Withdraw("acc_ann", bo.ProviderID)
	profileReads := func() int {
		n := 0
		for _, r := range fake.Requests() {
			if r.Method == "GET" && strings.HasSuffix(r.Path, "/users/"+bo.ProviderID) {
				n++
			}
		}
		return n
	}
	fake.Requests()

	clock.Advance(time.Hour)
	got, err := tr.Inbound(ctx, clock.Now())
	is.NoErr(err)
	is.Equal(len(got), 1) // Ann's acceptance, by the comparison alone
	is.Equal(got[0].Kind, senders.InboundAccepted)
	is.Equal(got[0].LeadID, "lead-ann-lee-berlin")
	is.Equal(got[0].Match.ProviderID, annID)
	is.Equal(profileReads(), 1) // Bo's left the list: his profile says no connection

	ours = ours[1:] // Ann's is accepted now
	for range 5 {
		clock.Advance(unipile.DefaultPollEvery)
		got, err = tr.Inbound(ctx, clock.Now())
		is.NoErr(err)
		is.Equal(len(got), 0)
	}
	is.Equal(profileReads(), 0) // not read again within the day
	clock.Advance(24 * time.Hour)
	_, err = tr.Inbound(ctx, clock.Now())
	is.NoErr(err)
	is.Equal(profileReads(), 1)
}
