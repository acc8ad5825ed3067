package senders

import (
	"context"
	"time"

	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// Stale invitations: a LinkedIn invitation still pending withdraw_after_days
// after it was sent is withdrawn through the sender's provider, at most
// withdraw_per_day a local day: LinkedIn limits accounts that leave many
// invitations unanswered, and a withdrawn invitation frees its place. The
// runner's hourly checks withdraw them (engine/guards.go); the
// enrollment waiting at its invite_accepted condition takes the else
// branch.

// EventInviteWithdrawn is the activity-log kind of one stale invitation
// withdrawn.
const EventInviteWithdrawn = "invite.withdrawn"

// withdrawKey is the usage key of a day's withdrawals.
const withdrawKey = "withdraw"

// Withdrawer is a transport that can withdraw an invitation a sender sent
// (Unipile's cancel of a sent invitation; the sandbox). A *TransportError
// of kind Permanent means the provider no longer has it pending (accepted,
// expired or withdrawn by hand): it is recorded withdrawn all the same.
// Any other error leaves it pending for the next check.
type Withdrawer interface {
	Withdraw(ctx context.Context, s *Sender, inv SentInvitation) error
}

// StaleInvitations returns, for each of ss whose invitations are withdrawn
// (LinkedIn, withdraw_after_days above 0), its pending invitations older
// than that at now, oldest first, at most the day's withdrawal cap left.
// Returns only the database's errors.
func (svc *Service) StaleInvitations(ctx context.Context, ss []*Sender, now time.Time) (map[*Sender][]SentInvitation, error) {
	byID := map[string]*Sender{}
	var ids []string
	for _, s := range ss {
		if s.WithdrawAfter() > 0 && s.Status == Active {
			byID[s.ID] = s
			ids = append(ids, s.ID)
		}
	}
	out := map[*Sender][]SentInvitation{}
	if len(ids) == 0 {
		return out, nil
	}
	// Every sender's withdrawals today and its stale invitations: one
	// statement of each for many senders, as the hourly checks read them
	// for every sender of every workspace.
	done, err := svc.store.UsageOn(ctx, ids, withdrawKey, func(id string) string { return LocalDate(now, byID[id].Location()) })
	if err != nil {
		return nil, err
	}
	var of []StaleOf
	for _, id := range ids {
		s := byID[id]
		if left := s.WithdrawPerDayOf() - done[id]; left > 0 {
			of = append(of, StaleOf{SenderID: id, SentBefore: now.Add(-s.WithdrawAfter()), Limit: left})
		}
	}
	stale, err := svc.store.StaleInvitations(ctx, of)
	if err != nil {
		return nil, err
	}
	for id, invs := range stale {
		out[byID[id]] = invs
	}
	return out, nil
}

// Withdrawn records that s's invitation inv was withdrawn at the time of
// the clock, inside the transaction ctx carries: one unit of the day's
// withdrawal cap, the invitation's state and invite.withdrawn. It reports
// false when the invitation was no longer pending (accepted meanwhile).
func (svc *Service) Withdrawn(ctx context.Context, s *Sender, inv SentInvitation) (bool, error) {
	now := db.Now(ctx, svc.clock)
	ok, err := svc.store.MarkWithdrawn(ctx, s.ID, inv.LeadID, now)
	if err != nil || !ok {
		return false, err
	}
	if _, err := svc.store.Take(ctx, s.ID, LocalDate(now, s.Location()), withdrawKey, 1<<30); err != nil {
		return false, err
	}
	return true, svc.log.EmitMany(ctx, []events.Event{{WorkspaceID: s.WorkspaceID, SenderID: s.ID, LeadID: inv.LeadID, Kind: EventInviteWithdrawn,
		Data: map[string]any{"sender_id": s.ID, "invited_at": inv.SentAt.UTC(), "pending_days": int(now.Sub(inv.SentAt).Hours() / 24)}}})
}
