package sandbox

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leadline/leadline/senders"
)

// Withdraw withdraws a sender's pending invitation, as a provider does: the
// person can no longer accept it (an acceptance the network drew for later
// is dropped). The network judges the withdrawal by the sender's
// configuration: one younger than its withdraw_after_days is a violation.
// An invitation the network never received, or one already accepted, is a
// permanent error: nothing is pending to withdraw.
func (n *Network) Withdraw(_ context.Context, s *senders.Sender, inv senders.SentInvitation) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	at := n.clock.Now()
	cfg, known := n.configs[s.ID]
	if !known {
		cfg = *s
	}
	key := s.ID + "|" + inv.LeadID
	sent, ok := n.invited[key]
	if !ok || n.withdrawn[key] {
		return &senders.TransportError{Kind: senders.Permanent, Code: "invitation_not_found", Message: "No pending invitation to this person."}
	}
	if after := cfg.WithdrawAfter(); after <= 0 || at.Sub(sent) < after {
		n.violations = append(n.violations, Violation{Rule: "withdrawal", SenderID: s.ID, LeadID: inv.LeadID, Action: senders.Invite, At: at,
			Detail: fmt.Sprintf("withdrawn %s after it was sent, withdraw_after %s", at.Sub(sent).Round(time.Minute), after)})
	}
	// An acceptance still to come is dropped; one already handed over
	// made a connection, which no withdrawal undoes.
	i := slices.IndexFunc(n.pending, func(in senders.Inbound) bool {
		return in.Kind == senders.InboundAccepted && in.SenderID == s.ID && in.LeadID == inv.LeadID
	})
	if i < 0 && n.accepted[key] {
		return &senders.TransportError{Kind: senders.Permanent, Code: "invitation_accepted", Message: "The invitation was accepted."}
	}
	if i >= 0 {
		n.pending = slices.Delete(n.pending, i, i+1)
	}
	n.withdrawn[key] = true
	n.withdrawals++
	return nil
}

// Withdrawals returns how many invitations the network withdrew.
func (n *Network) Withdrawals() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.withdrawals
}
