package platform

import (
	"context"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
)

// ResumeSender lifts the stop of a sender's guard (low_acceptance_rate,
// high_bounce_rate: senders.Service.Resume) and wakes, in the same
// transaction, the enrollments that wait for it: the console's Resume
// button and a Go program both call it.
// Returns E_NOT_FOUND if the sender is not visible to the principal,
// E_FORBIDDEN below the manager role and E_PAYLOAD_INVALID for a code
// that is not a guard's stop.
func (p *Platform) ResumeSender(ctx context.Context, pr apikit.Principal, id, code string) (*senders.Sender, error) {
	var s *senders.Sender
	err := p.DB.InTx(ctx, func(ctx context.Context) error {
		var err error
		if s, err = p.Senders.Resume(ctx, pr, id, code); err != nil {
			return err
		}
		return p.Enrollments.WakeWaiting(ctx, s.WorkspaceID, s.ID, []string{code}, db.Now(ctx, p.Clock))
	})
	return s, err
}
