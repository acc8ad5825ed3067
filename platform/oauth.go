package platform

import (
	"context"
	"slices"

	"github.com/leadline/leadline/senders"
)

// AccountConnected records that sender id's mailbox account was connected
// (or connected again) with its provider: a sender that waited for it
// (auth_failed, credentials_missing) is usable again at once, as when
// its transport reports it recovered. It returns the sender.
func (p *Platform) AccountConnected(ctx context.Context, id string) (*senders.Sender, error) {
	s, err := p.Senders.Sender(ctx, id)
	if err != nil {
		return nil, err
	}
	waiting := slices.ContainsFunc(s.HealthReasons, func(r senders.HealthReason) bool {
		return r.Code == senders.SignalAuthFailed || r.Code == senders.SignalCredentialsMissing
	})
	if waiting {
		if err := p.Senders.Signal(ctx, s, senders.SignalRecovered, ""); err != nil {
			return nil, err
		}
	}
	return s, nil
}
