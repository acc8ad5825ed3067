package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
)

// finish is phase two: it records the transport's answer and moves the
// enrollment on. An enrollment due again at once is returned unsaved, as
// prepare leaves one.
func (r *Runner) finish(ctx context.Context, c *call, res senders.Result, perr error) (*enrollments.Enrollment, bool, error) {
	e, err := r.enrollment(ctx, c.e.WorkspaceID, c.e.ID)
	if err != nil {
		return nil, false, err
	}
	again, err := r.record(ctx, e, c, res, perr)
	return e, again, err
}

// record writes the outcome of c's action on e.
func (r *Runner) record(ctx context.Context, e *enrollments.Enrollment, c *call, res senders.Result, perr error) (bool, error) {
	svc := r.svc
	now := db.Now(ctx, svc.clock)
	a := c.action
	action := senders.Action(a.Action)
	giveBack := func() error { return svc.senders.GiveBack(ctx, c.sender, action, a.CreatedAt) }
	r.observer.Step(a.Action, stepOutcome(perr))
	if errors.Is(perr, errNotPerformed) {
		// Never sent: free the budget and the key, and run the step again.
		if err := giveBack(); err != nil {
			return false, err
		}
		if err := svc.store.DeleteAction(ctx, a); err != nil {
			return false, err
		}
		e.RunAgain(now)
		return true, nil // saved by the step's run again
	}
	if perr == nil {
		a.Status, a.DoneAt = "sent", &now
		if err := svc.store.SaveAction(ctx, a); err != nil {
			return false, err
		}
		data := map[string]any{"action": a.Action, "purpose": senders.PurposeSequence}
		if action.Contacts() && e.Contacted(now) {
			// The enrollment's first contact: reports count the lead
			// contacted, and time its reply from here.
			data["first_contact"] = true
		}
		if action == senders.SendEmail {
			if err := svc.senders.RecordEmail(ctx, c.sender, e.LeadID); err != nil {
				return false, err
			}
		}
		if action == senders.Invite {
			data["with_note"] = a.WithNote
			if err := svc.senders.RecordInvite(ctx, c.sender, e.LeadID, a.WithNote, res.Invitation, memberID(res.Member)); err != nil {
				return false, err
			}
		}
		if res.ProviderMessageID != "" {
			data["provider_message_id"] = res.ProviderMessageID
		}
		if a.VariantID != nil {
			data["variant_id"] = *a.VariantID
		}
		if pid, _ := res.Profile["provider_id"].(string); action == senders.ProfileView && pid != "" {
			// A provider's profile view names the person: the lead keeps
			// the provider's id (later messages and replies match it) and
			// the fields the same answer holds.
			if err := svc.leads.SetProfile(ctx, e.WorkspaceID, e.LeadID, res.Profile); err != nil {
				return false, err
			}
		} else if err := r.keepMember(ctx, e, res.Member); err != nil {
			return false, err
		}
		ev := enrollments.EventFor(e, enrollments.EventActionSent, a.StepID, data)
		ev.SenderID = c.sender.ID
		if err := svc.log.EmitMany(ctx, []events.Event{ev}); err != nil {
			return false, err
		}
		if err := r.toThread(ctx, e, c, res, now); err != nil {
			return false, err
		}
		if e.Status != enrollments.Active || e.StepID != a.StepID {
			// Paused, exited or moved while the action was out: it was
			// sent, and the enrollment stays where it now is.
			e.SentAside()
			return false, r.svc.enrollments.Save(ctx, e)
		}
		if err := r.svc.enrollments.Advance(ctx, e, c.q, c.step, c.q.After(c.step), now); err != nil {
			return false, err
		}
		return r.saveAfter(ctx, e, now)
	}
	te, _ := senders.AsTransportError(perr)
	// The budget and the sender's health read the outcome as every send
	// does (senders.Settle). The tick's workers share the cached sender: a
	// signal changes a copy, which then replaces it.
	s := *c.sender
	if err := svc.senders.Settle(ctx, &s, action, a.CreatedAt, perr); err != nil {
		return false, err
	}
	if err := r.keepMember(ctx, e, te.Member); err != nil {
		return false, err
	}
	a.Status, a.DoneAt, a.ErrorCode = "failed", &now, &te.Code
	if err := svc.store.SaveAction(ctx, a); err != nil {
		return false, err
	}
	e.Errored(te.Code, te.Message)
	switch te.Kind {
	case senders.Transient:
		if e.Retried() >= r.MaxAttempts {
			if err := r.svc.enrollments.Fail(ctx, e, te.Code, fmt.Sprintf("%s (after %d attempts)", te.Message, e.Attempt), now); err != nil {
				return false, err
			}
		} else {
			e.Wait("retrying", ptr(now.Add(max(r.Backoff(e.Attempt), te.RetryAfter))))
		}
	case senders.SenderLevel:
		e.Retried()
		r.tickMu.Lock()
		r.tick.senders[s.ID] = &s
		r.tickMu.Unlock()
		switch {
		case slices.Contains(senders.TransportSignals, te.Signal):
			// It waits under the transport's reason until the transport
			// reports the account usable again.
			e.WaitOn(s.ID, action, te.Signal, nil)
		case te.Signal == senders.SignalProviderRateLimited:
			e.WaitOn(s.ID, action, te.Signal, ptr(now.Add(max(te.RetryAfter, time.Minute))))
		case s.Health == senders.Disconnected:
			e.WaitOn(s.ID, action, "sender_disconnected", nil)
		default:
			e.WaitOn(s.ID, action, "sender_"+string(s.Health), ptr(senders.NextMidnight(now, s.Location())))
		}
	default:
		if te.Code == senders.CodeBounced {
			// The provider refused the address at once: a bounce, as if
			// it had come back later.
			ev := events.Event{WorkspaceID: e.WorkspaceID, LeadID: e.LeadID, SenderID: c.sender.ID, SequenceID: e.SequenceID,
				EnrollmentID: e.ID, ClientID: apikit.Deref(e.ClientID), Kind: enrollments.EventEmailBounced,
				Data: map[string]any{"sender_id": c.sender.ID, "message": te.Message}}
			if err := svc.log.EmitMany(ctx, []events.Event{ev}); err != nil {
				return false, err
			}
			// A refusal counts in the mailbox's bounce rate like a bounce
			// that came back later.
			if err := svc.senders.RecordEmail(ctx, &s, e.LeadID); err != nil {
				return false, err
			}
			if err := svc.senders.RecordBounce(ctx, &s, e.LeadID, te.Message); err != nil {
				return false, err
			}
			r.tickMu.Lock()
			r.tick.senders[s.ID] = &s
			r.tickMu.Unlock()
		}
		if err := r.svc.enrollments.Fail(ctx, e, te.Code, te.Message, now); err != nil {
			return false, err
		}
	}
	return r.saveAfter(ctx, e, now)
}

// keepMember keeps on the enrollment's lead the person the transport
// resolved it to, in the transaction that records the action: what the
// provider later reports about that person (an acceptance, a reply)
// finds the lead by it.
func (r *Runner) keepMember(ctx context.Context, e *enrollments.Enrollment, m *senders.Member) error {
	if m == nil {
		return nil
	}
	if _, err := r.svc.leads.SetMember(ctx, e.WorkspaceID, e.LeadID, m); err != nil {
		return err
	}
	r.svc.inbox.Forget(ctx, e.LeadID)
	return nil
}

// memberID is m's provider id, or "".
func memberID(m *senders.Member) string {
	if m == nil {
		return ""
	}
	return m.ProviderID
}

// saveAfter saves e after its action's outcome, unless it is due again at
// once: the run of its next step then saves it with that step's changes.
func (r *Runner) saveAfter(ctx context.Context, e *enrollments.Enrollment, now time.Time) (bool, error) {
	return r.svc.enrollments.Record(ctx, e, now)
}

// postpone returns when an enrollment whose action's budget is spent should
// look again: not at the reset itself but at the sender's next slot after
// it in the runner's plan (pace.go), spread over the following working
// days by the day's cap, so that a backlog of thousands is not woken all
// at once each day only for most of it to wait again. The budget check at
// that moment decides; this only saves runs.
func (r *Runner) postpone(s *senders.Sender, a senders.Action, from time.Time) time.Time {
	return r.wakeAt(s, a, from)
}

// Inbox is what the runner needs of the inbox: the runner's messages land
// in their threads, and replies are taken in, read and stop enrollments
// there.
type Inbox interface {
	// RecordSent puts a sent message into its thread, in the transaction
	// ctx carries. Returns only the database's errors.
	RecordSent(ctx context.Context, o inbox.Outgoing) error
	// Receive takes a reply in, in the transaction ctx carries. Returns
	// inbox.ErrUnknownLead for a lead the workspace does not have.
	Receive(ctx context.Context, a inbox.Arrived) (*inbox.Received, error)
	// Prefetch reads a batch's leads, threads and live enrollments into
	// the transaction's memo. Returns only the database's errors.
	Prefetch(ctx context.Context, workspaceID string, ss []*senders.Sender, leadIDs []string) error
	// Forget drops what the transaction's memo holds of the lead.
	Forget(ctx context.Context, leadID string)
	// Earlier returns what s sent the lead before in the sequence's
	// conversation (nothing when the conversation is another sequence's).
	Earlier(ctx context.Context, s *senders.Sender, leadID, sequenceID string) (senders.Thread, error)
	// LeadBySent returns the lead whose thread holds one of the
	// workspace's sent messages among ids, or "".
	LeadBySent(ctx context.Context, workspaceID string, ids []string) (string, error)
	// LeadByConversation returns the lead s wrote to in a provider's
	// conversation, or "".
	LeadByConversation(ctx context.Context, s *senders.Sender, conversation string) (string, error)
}

// toThread puts a sent message, InMail or email into its thread, which
// belongs to the lead's client (client scope reads it there). A
// recovered action's request was built again from its step: templates are
// pure, so the text is the one that was sent.
func (r *Runner) toThread(ctx context.Context, e *enrollments.Enrollment, c *call, res senders.Result, now time.Time) error {
	if spec, _ := senders.Action(c.action.Action).Spec(); !spec.Thread {
		return nil
	}
	if c.recover && c.req.Subject == "" && c.req.Body == "" {
		return nil // the lead no longer fills the step's templates
	}
	subject, body, client := c.req.Subject, c.req.Body, c.leadClient
	at := res.At
	if at.IsZero() {
		at = now
	}
	return r.svc.inbox.RecordSent(ctx, inbox.Outgoing{WorkspaceID: e.WorkspaceID, ClientID: client, Sender: c.sender, LeadID: e.LeadID,
		SequenceID: e.SequenceID, EnrollmentID: e.ID, Subject: subject, Body: body, ProviderMessageID: res.ProviderMessageID, At: at,
		VariantID: apikit.Deref(c.action.VariantID)})
}

// stepOutcome names an action's outcome for the runner's Observer.
func stepOutcome(perr error) string {
	if perr == nil {
		return OutcomeSent
	}
	if errors.Is(perr, errNotPerformed) {
		return OutcomeNotPerformed
	}
	te, _ := senders.AsTransportError(perr)
	return failedOutcome(te.Kind)
}
