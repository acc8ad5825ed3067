package platform

import (
	"context"
	"time"

	"github.com/leadline/leadline/senders"
)

// SenderCheck is what checking one sender's connection found.
type SenderCheck struct {
	Sender *senders.Sender
	// NoConnection: the sender's transport connects to nothing (the
	// sandbox), so there is nothing to check.
	NoConnection bool
	Steps        []senders.CheckStep
	OK           bool
}

// CheckTimeout bounds one sender's check.
const CheckTimeout = 2 * time.Minute

// CheckSender connects sender s through its transport in ts (nil: the
// platform's transports, else Transports with its stored secrets) and
// says, step by step, what works: `leadline senders check` prints it, the
// console's "Check connection" button shows it.
func (p *Platform) CheckSender(ctx context.Context, ts map[string]senders.Transport, s *senders.Sender) SenderCheck {
	if ts == nil {
		ts = p.transports
	}
	if ts == nil {
		ts = p.Transports(Outside{Seed: 1})
	}
	out := SenderCheck{Sender: s, OK: true}
	c, ok := ts[s.Transport].(senders.Checker)
	if !ok {
		out.NoConnection = true
		return out
	}
	cctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	out.Steps = c.Check(cctx, s)
	for _, st := range out.Steps {
		out.OK = out.OK && st.OK
	}
	return out
}
