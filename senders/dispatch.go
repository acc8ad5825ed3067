package senders

import (
	"context"
	"time"

	"github.com/leadline/leadline/internal/db"
)

// Outcome is what became of an action a transport was asked to perform:
// one reading of the transport's answer that the runner and a member's
// reply share.
type Outcome string

// The outcomes of an action.
const (
	// OutcomeSent: the transport performed it.
	OutcomeSent Outcome = "sent"
	// OutcomeRefused: it cannot succeed for this lead (Permanent); the
	// sender goes on with everyone else.
	OutcomeRefused Outcome = "refused"
	// OutcomeSenderTrouble: the sender's account is in trouble
	// (SenderLevel); the sender takes the signal.
	OutcomeSenderTrouble Outcome = "sender"
	// OutcomeRetry: not performed, and worth trying again later
	// (Transient).
	OutcomeRetry Outcome = "retry"
	// OutcomeUnknown: the transport gave no answer and its lookup found
	// nothing yet: it may have been performed. Never read as not sent.
	OutcomeUnknown Outcome = "unknown"
)

// Classify reads a transport's error (nil: sent).
func Classify(err error) Outcome {
	if err == nil {
		return OutcomeSent
	}
	te, ok := AsTransportError(err)
	switch {
	case !ok:
		return OutcomeUnknown
	case te.Kind == Permanent:
		return OutcomeRefused
	case te.Kind == SenderLevel:
		return OutcomeSenderTrouble
	}
	return OutcomeRetry
}

// Send performs req through t, once per key. When the answer never came
// (an error that is no *TransportError), it asks the transport at once
// whether the action happened (Lookup): found, it is sent; not found (or
// the lookup failing too), the first error is returned and the outcome
// stays unknown, for the caller to keep the action's budget and look
// again later, never to send it again blindly.
func Send(ctx context.Context, t Transport, req Request) (Result, error) {
	res, err := t.Perform(ctx, req)
	if Classify(err) != OutcomeUnknown {
		return res, err
	}
	if found, ok, lerr := t.Lookup(ctx, req); lerr == nil && ok {
		return found, nil
	}
	return res, err
}

// Settle records, in the transaction ctx carries, what the outcome of one
// of s's actions means for s: an action refused or to be retried gives
// back the unit Reserve took at reservedAt; a sender-level error also
// signals s with the provider's words, lapsing at its retry hint
// (TransportError.RetryAfter) when it gave one. A sent action and an
// unknown outcome keep the unit: it may have been spent. s is changed in
// place (its health), as Signal changes it.
func (svc *Service) Settle(ctx context.Context, s *Sender, a Action, reservedAt time.Time, perr error) error {
	switch Classify(perr) {
	case OutcomeSent, OutcomeUnknown:
		return nil
	}
	if err := svc.GiveBack(ctx, s, a, reservedAt); err != nil {
		return err
	}
	te, _ := AsTransportError(perr)
	if te.Kind != SenderLevel {
		return nil
	}
	var until time.Time
	if te.RetryAfter > 0 {
		until = db.Now(ctx, svc.clock).Add(te.RetryAfter)
	}
	return svc.SignalUntil(ctx, s, te.Signal, te.Message, until)
}
