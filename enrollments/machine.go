// The enrollment state machine: what moves an enrollment from step to step
// and ends it. The runner (package engine), task completion and reply-stop
// all change enrollments through these.
package enrollments

import (
	"context"
	"strings"
	"time"

	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/sequences"
)

// Activity-log kinds the runner writes.
const (
	EventActionSent      = "action.sent"
	EventInviteAccepted  = "invite.accepted"
	EventEmailBounced    = "email.bounced"
	EventSequenceWebhook = "sequence.webhook"
)

// Advance moves the enrollment from step to next, or finishes it.
func (svc *Service) Advance(ctx context.Context, e *Enrollment, q *sequences.Sequence, step sequences.Step, next string, now time.Time) error {
	if err := svc.store.CountStep(ctx, q.ID, step.ID, "done", 1); err != nil {
		return err
	}
	e.Attempt, e.WaitingFor, e.WaitingUntil, e.WaitingSenderID, e.WaitingAction, e.LastErrorCode, e.LastError = 0, nil, nil, nil, nil, nil, nil
	if next == sequences.End {
		e.Status, e.EndedAt, e.NextRunAt = Finished, &now, nil
		return svc.log.EmitMany(ctx, []events.Event{EventFor(e, EventFinished, step.ID, map[string]any{"sequence_id": e.SequenceID})})
	}
	e.StepID, e.StepStartedAt, e.NextRunAt = next, now, &now
	return svc.store.CountStep(ctx, q.ID, next, "entered", 1)
}

// Fail marks the enrollment failed at its step with a code.
func (svc *Service) Fail(ctx context.Context, e *Enrollment, code, msg string, now time.Time) error {
	e.Status, e.FailedAt, e.LastErrorCode, e.LastError, e.NextRunAt, e.WaitingFor, e.WaitingUntil = Failed, &now, &code, &msg, nil, nil, nil
	if err := svc.store.CountStep(ctx, e.SequenceID, e.StepID, "failed", 1); err != nil {
		return err
	}
	return svc.log.EmitMany(ctx, []events.Event{EventFor(e, EventFailed, e.StepID, map[string]any{"sequence_id": e.SequenceID, "code": code, "message": msg})})
}

// End moves the enrollment to a terminal status.
func (svc *Service) End(ctx context.Context, e *Enrollment, status Status, reason string, now time.Time) error {
	return svc.log.EmitMany(ctx, []events.Event{svc.Ended(e, status, reason, now)})
}

// Ended moves the enrollment to a terminal status and returns the event
// that says so, for the caller to write.
func (svc *Service) Ended(e *Enrollment, status Status, reason string, now time.Time) events.Event {
	e.Status, e.EndedAt, e.NextRunAt, e.WaitingFor, e.WaitingUntil = status, &now, nil, nil, nil
	if status == Stopped {
		code, _, _ := strings.Cut(reason, ":")
		e.LastErrorCode = &code
	}
	kind := EventStopped
	switch status {
	case Replied:
		kind = EventReplied
	case Exited:
		kind = EventExited
	case Finished:
		kind = EventFinished
	}
	return EventFor(e, kind, e.StepID, map[string]any{"sequence_id": e.SequenceID, "reason": reason})
}

// EventFor is an activity-log event about e at a step.
func EventFor(e *Enrollment, kind, stepID string, data map[string]any) events.Event {
	return events.Event{WorkspaceID: e.WorkspaceID, LeadID: e.LeadID, SequenceID: e.SequenceID, EnrollmentID: e.ID,
		SenderID: deref(e.SenderID), ClientID: deref(e.ClientID), StepID: stepID, Kind: kind, Data: data}
}
