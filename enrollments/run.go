package enrollments

import (
	"context"
	"time"
)

// The runner's moves. The enrollments area is the one writer of an
// enrollment: besides the state machine (Advance, Fail, End, Wait, WaitOn)
// the runner changes an enrollment only through these methods, and writes
// it only through the Service (Save, Record, Park, Wake, WakeWaiting); no
// other package sets an enrollment's field or calls its store's writes.

// Hold keeps the enrollment out of the due index while its sequence is
// not running; activation releases it (SequenceStatusChanged).
func (e *Enrollment) Hold() { e.Held = true }

// Release ends the hold (the lease) a run took on the enrollment.
func (e *Enrollment) Release() { e.LeaseUntil = nil }

// Sending marks the enrollment's action as out with its transport: it
// waits for the outcome, under no sender's limit.
func (e *Enrollment) Sending(now time.Time) {
	sending := WaitSending
	e.WaitingFor, e.WaitingUntil, e.WaitingSenderID, e.WaitingAction, e.UpdatedAt = &sending, nil, nil, nil, now
}

// RunAgain makes the enrollment's step due again at once: its action was
// never performed.
func (e *Enrollment) RunAgain(now time.Time) {
	e.NextRunAt, e.WaitingFor, e.UpdatedAt = &now, nil, now
}

// Contacted marks the enrollment's first contact of its lead at now (reports
// count the lead contacted and time its reply from here) and reports
// whether this was the first.
func (e *Enrollment) Contacted(now time.Time) bool {
	if e.ContactedAt != nil {
		return false
	}
	e.ContactedAt = &now
	return true
}

// SentAside settles an enrollment whose action went out while the
// enrollment was paused, ended or moved on: it stays where it is, no
// longer waiting for the outcome.
func (e *Enrollment) SentAside() {
	if deref(e.WaitingFor) == WaitSending {
		e.WaitingFor = nil
	}
	e.LeaseUntil = nil
}

// Errored records the error of the enrollment's last attempt, for the
// retry or the failure that follows.
func (e *Enrollment) Errored(code, message string) {
	e.LastErrorCode, e.LastError = &code, &message
}

// Retried counts one more attempt of the step and returns how many were
// made.
func (e *Enrollment) Retried() int {
	e.Attempt++
	return e.Attempt
}

// DueAgain reports whether the enrollment is active and due at now: the
// run of its next step then goes on at once.
func (e *Enrollment) DueAgain(now time.Time) bool {
	return e.Status == Active && e.NextRunAt != nil && !e.NextRunAt.After(now)
}

// Save writes e, in the transaction ctx carries (a runner's transaction
// queues it for the commit; see Batched).
func (svc *Service) Save(ctx context.Context, e *Enrollment) error { return svc.store.Save(ctx, e) }

// Park releases e's lease and writes it: a run leaves it until it is due.
func (svc *Service) Park(ctx context.Context, e *Enrollment) error {
	e.Release()
	return svc.store.Save(ctx, e)
}

// Record settles e after a step at now: when it is due again at once it
// is left unsaved, for the run of its next step to save with that step's
// changes (or the caller, if it stops there), and Record reports true;
// otherwise its lease is released and it is written.
func (svc *Service) Record(ctx context.Context, e *Enrollment, now time.Time) (again bool, err error) {
	e.UpdatedAt = now
	if e.DueAgain(now) {
		return true, nil
	}
	return false, svc.Park(ctx, e)
}

// Wake makes the lead's enrollments waiting for reason due at now.
func (svc *Service) Wake(ctx context.Context, workspaceID, leadID, reason string, now time.Time) error {
	return svc.store.Wake(ctx, workspaceID, leadID, reason, now)
}

// WakeWaiting makes the sender's enrollments waiting for one of reasons
// due at now (a sender that recovered).
func (svc *Service) WakeWaiting(ctx context.Context, workspaceID, senderID string, reasons []string, now time.Time) error {
	return svc.store.WakeWaiting(ctx, workspaceID, senderID, reasons, now)
}
