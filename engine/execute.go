package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// next loads the enrollment (unless e is given) and runs its due steps
// until one is an action, which it returns reserved, or until it waits.
func (r *Runner) next(ctx context.Context, workspaceID, id string, e *enrollments.Enrollment) (*call, error) {
	for range maxStepsPerRun {
		if e == nil {
			var err error
			if e, err = r.enrollment(ctx, workspaceID, id); err != nil {
				return nil, err
			}
		}
		now := db.Now(ctx, r.svc.clock)
		if e.Status != enrollments.Active || e.Held || e.NextRunAt == nil || e.NextRunAt.After(now) {
			// Saves what an earlier step left unsaved, if anything.
			return nil, r.svc.enrollments.Park(ctx, e)
		}
		if apikit.Deref(e.WaitingFor) == enrollments.WaitSending {
			a, err := r.svc.store.SendingAction(ctx, e.ID)
			if err != nil {
				return nil, err
			}
			if a != nil {
				return r.recovering(ctx, e, a)
			}
		}
		c, again, err := r.prepare(ctx, e, now)
		if err != nil || c != nil || !again {
			return c, err
		}
	}
	return nil, r.svc.enrollments.Save(ctx, e)
}

// perform calls the transport for c: the action, or for a recovered one
// the lookup of its key.
func (r *Runner) perform(ctx context.Context, c *call) (senders.Result, error, error) {
	t := r.transports[c.sender.Transport]
	if c.recover {
		res, found, err := t.Lookup(ctx, c.req)
		if err != nil {
			return res, nil, err
		}
		if !found {
			return res, errNotPerformed, nil
		}
		return res, nil, nil
	}
	res, perr := senders.Send(ctx, t, c.req)
	te, ok := senders.AsTransportError(perr)
	if perr != nil && !ok {
		// The outcome is unknown, and the lookup right after found
		// nothing: keep the action as sending and the lease; the next run
		// after the lease asks the transport again.
		r.observer.TransportError(c.sender.Transport, OutcomeUnknown)
		r.observer.Step(c.action.Action, OutcomeUnknown)
		return res, nil, fmt.Errorf("transport: %w", perr)
	}
	if perr != nil {
		r.observer.TransportError(c.sender.Transport, string(te.Kind))
	}
	return res, perr, nil
}

// actionKey is the idempotency key of an action: the enrollment, the step,
// when the enrollment entered the step (a step on a loop is entered more
// than once) and the attempt.
func actionKey(e *enrollments.Enrollment, stepID string) string {
	return fmt.Sprintf("%s:%s:%d:%d", e.ID, stepID, e.StepStartedAt.UnixMicro(), e.Attempt)
}

// errNotPerformed is a recovered action the transport never performed.
var errNotPerformed = errors.New("not performed")

// recovering prepares the outcome lookup of an action an earlier run
// recorded as sending: the request is built again as that run built it,
// so that a transport can look for what it would have sent.
func (r *Runner) recovering(ctx context.Context, e *enrollments.Enrollment, a *enrollments.ActionRecord) (*call, error) {
	q, err := r.sequence(ctx, e.WorkspaceID, e.SequenceID)
	if err != nil {
		return nil, err
	}
	s, err := r.sender(ctx, e.WorkspaceID, a.SenderID)
	if err != nil {
		return nil, err
	}
	lead, err := r.lead(ctx, e)
	if err != nil {
		return nil, err
	}
	step, _ := q.StepByID(a.StepID)
	req, err := r.request(ctx, e, step, s, lead, a)
	if err != nil && !errors.As(err, new(*templateError)) {
		return nil, err
	}
	// A template the lead no longer fills leaves the texts empty: the key,
	// the sender and the lead still name the action.
	return &call{e: e, q: q, step: step, sender: s, action: a, req: req, leadClient: lead.ClientID, recover: true}, nil
}

// prepare is phase one: it checks every rule for the enrollment's step at
// this moment. Steps that send nothing are done here; an action is
// reserved and recorded as sending and returned for its transport.
// again reports that the enrollment is due again at once; it is then left
// unsaved, for the run of its next step to save with that step's changes
// (or for the caller to save, if it stops there).
func (r *Runner) prepare(ctx context.Context, e *enrollments.Enrollment, now time.Time) (*call, bool, error) {
	svc := r.svc
	save := func() (*call, bool, error) {
		again, err := svc.enrollments.Record(ctx, e, now)
		return nil, again, err
	}
	ws, err := r.workspace(ctx, e.WorkspaceID)
	if err != nil {
		return nil, false, err
	}
	if ws.Suspended {
		// Suspension is lifted through setup; look again in an hour.
		e.Wait("workspace_suspended", ptr(now.Add(time.Hour)))
		return save()
	}
	q, err := r.sequence(ctx, e.WorkspaceID, e.SequenceID)
	if err != nil {
		return nil, false, err
	}
	if q.Status != sequences.Active {
		e.Hold()
		return save()
	}
	step, ok := q.StepByID(e.StepID)
	if !ok {
		if err := r.svc.enrollments.Fail(ctx, e, "step_removed", fmt.Sprintf("Step %q no longer exists in the sequence.", e.StepID), now); err != nil {
			return nil, false, err
		}
		return save()
	}
	// A sender limit this tick already found spent needs no second look:
	// the enrollment is postponed without reading its lead.
	if a, isAction := step.Action(); isAction {
		if s, err := r.senderFor(ctx, e, a.Channel()); err == nil {
			if b := r.blockedFor(deferKey{sender: s.ID, action: a}); b != nil && b.Until.After(now) {
				until := r.deferTo(s, a, b)
				e.WaitOn(s.ID, a, b.Code, &until)
				return save()
			}
		}
	}
	lead, err := r.lead(ctx, e)
	if err != nil {
		return nil, false, err
	}
	if stop, reason, err := r.stopReason(ctx, e, lead); err != nil {
		return nil, false, err
	} else if stop != "" {
		if err := r.svc.enrollments.End(ctx, e, stop, reason, now); err != nil {
			return nil, false, err
		}
		return save()
	}
	kind, ok := stepKinds[step.Type]
	if !ok {
		return r.prepareAction(ctx, e, q, step, lead, now, save)
	}
	if err := kind(r, ctx, &stepRun{e: e, q: q, step: step, lead: lead, now: now}); err != nil {
		return nil, false, err
	}
	return save()
}

// stepRun is one run of a step that sends nothing: the enrollment, its
// sequence, the step, the lead and the run's time.
type stepRun struct {
	e    *enrollments.Enrollment
	q    *sequences.Sequence
	step sequences.Step
	lead *leads.Lead
	now  time.Time
}

// next moves the enrollment on to the step after this one.
func (s *stepRun) next(ctx context.Context, r *Runner) error {
	return r.svc.enrollments.Advance(ctx, s.e, s.q, s.step, s.q.After(s.step), s.now)
}

// stepKinds is the registry of the step types that send nothing: each
// entry, given the enrollment at its step, moves it on (Advance), makes it
// wait (Wait) or fails it, through the enrollments' state machine; the run
// then saves it, or goes on at once when it is due again. A step type not
// here is an action step: the runner checks its sender's rules, reserves
// its budget and sends it (prepareAction), as its action's spec says
// (senders.ActionSpec). A new step type that sends nothing is one entry
// here and its type in sequences (sequences.SpecOf).
var stepKinds = map[string]func(r *Runner, ctx context.Context, s *stepRun) error{
	sequences.TypeWait: func(r *Runner, ctx context.Context, s *stepRun) error {
		snd, _ := r.senderFor(ctx, s.e, senders.LinkedIn)
		if due := waitUntil(s.e.StepStartedAt, s.step, snd); due.After(s.now) {
			s.e.Wait("wait_step", &due)
			return nil
		}
		return s.next(ctx, r)
	},
	sequences.TypeCondition: func(r *Runner, ctx context.Context, s *stepRun) error {
		next, err := r.condition(ctx, s.e, s.step, s.lead, s.now)
		if err != nil || next == "" {
			return err // "": waits for an acceptance
		}
		return r.svc.enrollments.Advance(ctx, s.e, s.q, s.step, next, s.now)
	},
	sequences.TypeWebhook: func(r *Runner, ctx context.Context, s *stepRun) error {
		e, step := s.e, s.step
		if err := r.svc.log.EmitMany(ctx, []events.Event{enrollments.EventFor(e, enrollments.EventSequenceWebhook, step.ID, map[string]any{
			"sequence_id": e.SequenceID, "enrollment_id": e.ID, "lead_id": e.LeadID, "step_id": step.ID, "payload": step.Payload})}); err != nil {
			return err
		}
		return s.next(ctx, r)
	},
	sequences.TypeTask: func(r *Runner, ctx context.Context, s *stepRun) error {
		return r.task(ctx, s.e, s.q, s.step, s.lead, s.now)
	},
}

// stopReason says whether the lead may get nothing more: replied (unless a
// rule enrolled it in answer), do-not-contact or blacklisted.
func (r *Runner) stopReason(ctx context.Context, e *enrollments.Enrollment, l *leads.Lead) (enrollments.Status, string, error) {
	if l.Replied && !e.AfterReply() {
		return enrollments.Replied, "replied", nil
	}
	if l.DoNotContact {
		return enrollments.Stopped, "do_not_contact", nil
	}
	// The blacklist is read once a tick per workspace (it changes through
	// setup files); a very large one is checked in the database.
	people := []workspace.Person{l.Person()}
	r.tickMu.Lock()
	bl, read := r.tick.blacklists[l.WorkspaceID]
	r.tickMu.Unlock()
	if !read {
		var err error
		if bl, err = r.svc.catalog.BlacklistSnapshot(ctx, l.WorkspaceID); err != nil {
			return "", "", err
		}
		r.tickMu.Lock()
		r.tick.blacklists[l.WorkspaceID] = bl
		r.tickMu.Unlock()
	}
	var hits []string
	if bl != nil {
		hits = bl.Hits(people)
	} else {
		var err error
		if hits, err = r.svc.catalog.BlacklistHits(ctx, l.WorkspaceID, people); err != nil {
			return "", "", err
		}
	}
	if hits[0] != "" {
		return enrollments.Stopped, "blacklisted: " + hits[0], nil
	}
	return "", "", nil
}

// senderFor returns the enrollment's sender for a channel.
func (r *Runner) senderFor(ctx context.Context, e *enrollments.Enrollment, c senders.Channel) (*senders.Sender, error) {
	id := apikit.Deref(e.SenderID)
	if c == senders.Email && e.EmailSenderID != nil {
		id = *e.EmailSenderID
	}
	if id == "" {
		return nil, errors.New("no sender")
	}
	s, err := r.sender(ctx, e.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if c == senders.Email && s.Channel != senders.Email {
		return nil, errors.New("no email sender")
	}
	return s, nil
}

// waitUntil is when a wait step that started at start ends. Working days
// are the days the sender's schedule has a window on.
func waitUntil(start time.Time, step sequences.Step, s *senders.Sender) time.Time {
	loc := time.UTC
	if s != nil {
		loc = s.Location()
	}
	// Days are local calendar days: a wait over a daylight-saving change
	// ends at the same local time, neither an hour early nor late.
	lt := start.In(loc)
	day := step.Days
	if step.WorkingDays && s != nil {
		counted := 0
		for day = 0; counted < step.Days && day < 3660; {
			day++
			d := time.Date(lt.Year(), lt.Month(), lt.Day()+day, 12, 0, 0, 0, loc)
			if s.Schedule.WorkingDay(d.Year(), d.Month(), d.Day(), loc) {
				counted++
			}
		}
	}
	end := time.Date(lt.Year(), lt.Month(), lt.Day()+day, lt.Hour(), lt.Minute(), lt.Second(), lt.Nanosecond(), loc)
	return end.Add(time.Duration(step.Hours) * time.Hour).UTC()
}

// condition evaluates a condition step: the next step id, or "" when the
// enrollment waits (for an acceptance within the step's days).
func (r *Runner) condition(ctx context.Context, e *enrollments.Enrollment, step sequences.Step, l *leads.Lead, now time.Time) (string, error) {
	branch := func(ok bool) string {
		if ok {
			return step.Then
		}
		return step.Else
	}
	switch step.If {
	case sequences.IfHasEmail:
		return branch(enrollments.HasEmail(l)), nil
	case sequences.IfHasLinkedIn:
		return branch(enrollments.HasLinkedIn(l)), nil
	}
	connected, withdrawn, err := r.svc.senders.Invited(ctx, apikit.Deref(e.SenderID), e.LeadID)
	if err != nil {
		return "", err
	}
	if step.If == sequences.IfConnected || connected {
		return branch(connected), nil
	}
	// A stale invitation withdrawn will not be accepted.
	if withdrawn {
		return step.Else, nil
	}
	deadline := e.StepStartedAt.AddDate(0, 0, step.WithinDays)
	if now.Before(deadline) {
		e.Wait("awaiting_acceptance", &deadline)
		return "", nil
	}
	return step.Else, nil
}

// prepareAction checks an action step's rules and reserves its budget.
func (r *Runner) prepareAction(ctx context.Context, e *enrollments.Enrollment, q *sequences.Sequence, step sequences.Step, lead *leads.Lead,
	now time.Time, save func() (*call, bool, error)) (*call, bool, error) {
	action, _ := step.Action()
	failWith := func(code, msg string) (*call, bool, error) {
		if err := r.svc.enrollments.Fail(ctx, e, code, msg, now); err != nil {
			return nil, false, err
		}
		return save()
	}
	s, err := r.senderFor(ctx, e, action.Channel())
	if err != nil {
		return failWith("no_sender", fmt.Sprintf("The enrollment has no %s sender for step %q.", action.Channel(), step.ID))
	}
	if _, ok := r.transports[s.Transport]; !ok {
		return failWith("no_transport", fmt.Sprintf("Sender %s uses transport %q, which this runner does not have.", s.Name, s.Transport))
	}
	loc := s.Location()
	switch {
	case s.Status == senders.Paused:
		e.WaitOn(s.ID, action, "sender_paused", nil)
		return save()
	case s.Health == senders.Disconnected:
		e.WaitOn(s.ID, action, "sender_disconnected", nil)
		return save()
	case s.Health == senders.Restricted:
		e.WaitOn(s.ID, action, "sender_restricted", ptr(senders.NextMidnight(now, loc)))
		return save()
	}
	if until, limited := s.RateLimitedUntil(now); limited {
		// The provider asked the account to slow down: no lead's action
		// is tried against it before the hint.
		e.WaitOn(s.ID, action, senders.SignalProviderRateLimited, &until)
		return save()
	}
	if !s.Schedule.Open(now, loc) {
		next := r.wakeAt(s, action, now)
		e.WaitOn(s.ID, action, "outside_schedule", &next)
		return save()
	}
	if action.Channel() == senders.LinkedIn && !enrollments.HasLinkedIn(lead) {
		return failWith("missing_linkedin", "The lead has no LinkedIn id, provider id or public identifier.")
	}
	if action.Channel() == senders.Email && !enrollments.HasEmail(lead) {
		return failWith("missing_email", "The lead has no email address.")
	}
	variant, err := r.variantFor(ctx, e, q, step)
	if err != nil {
		return nil, false, err
	}
	step = step.WithVariant(apikit.Deref(variant))
	texts, err := render(step, lead)
	if err != nil {
		return failWith("missing_variable", err.Error())
	}
	// The sender's guards (spacing, hourly cap, holidays, the rate
	// guards' stops: senders/guards.go) before its budget. The action was
	// due when its enrollment was (its slot in the sender's plan):
	// spacing draws the next gap from there.
	due := now
	if e.NextRunAt != nil && e.NextRunAt.Before(now) {
		due = *e.NextRunAt
	}
	held, release, err := r.svc.senders.Guard(ctx, s, action, now, due)
	if err != nil {
		return nil, false, err
	}
	if held != nil {
		return r.held(e, s, action, held, now, save)
	}
	blocked, err := r.svc.senders.Reserve(ctx, s, action, now)
	if err != nil {
		return nil, false, err
	}
	if blocked != nil {
		if err := release(ctx); err != nil {
			return nil, false, err
		}
		r.tickMu.Lock()
		r.tick.blocked[deferKey{sender: s.ID, action: action}] = blocked
		r.tickMu.Unlock()
		until := r.postpone(s, action, blocked.Until)
		e.WaitOn(s.ID, action, blocked.Code, &until)
		return save()
	}
	withNote := false
	if action == senders.Invite && texts["note"] != "" {
		ok, err := r.svc.senders.TakeNote(ctx, s, now)
		if err != nil {
			return nil, false, err
		}
		switch {
		case ok:
			withNote = true
		case step.NoteFallback == sequences.NoteFallbackWithoutNote:
			// Sent without the note: the request carries a note only when
			// the action is recorded with one.
		default:
			if err := r.svc.senders.GiveBack(ctx, s, action, now); err != nil {
				return nil, false, err
			}
			if err := release(ctx); err != nil {
				return nil, false, err
			}
			e.WaitOn(s.ID, action, "note_quota", ptr(senders.NextMonth(now, loc)))
			return save()
		}
	}
	a := &enrollments.ActionRecord{ID: apikit.NewID(), WorkspaceID: e.WorkspaceID, EnrollmentID: e.ID, SequenceID: e.SequenceID, StepID: step.ID,
		Attempt: e.Attempt, SenderID: s.ID, LeadID: e.LeadID, Action: string(action), IdemKey: actionKey(e, step.ID),
		Status: "sending", WithNote: withNote, Day: senders.LocalDate(now, loc), CreatedAt: now, VariantID: variant}
	if err := r.svc.store.InsertAction(ctx, a); err != nil {
		return nil, false, err
	}
	e.Sending(now)
	if err := r.svc.enrollments.Save(ctx, e); err != nil {
		return nil, false, err
	}
	req, err := r.request(ctx, e, step, s, lead, a)
	if err != nil {
		return nil, false, err
	}
	return &call{e: e, q: q, step: step, sender: s, action: a, req: req, leadClient: lead.ClientID}, false, nil
}

// request builds the request of action a, the enrollment's step for lead
// through sender s: the step's texts rendered for the lead (the note only
// when a was recorded with one), and the conversation it continues. The
// run that records a and a later run that recovers it build the same
// request: templates are pure, and a's thread holds nothing of a until its
// outcome is recorded. A template the lead does not fill is a
// *templateError, with the request built without texts.
func (r *Runner) request(ctx context.Context, e *enrollments.Enrollment, step sequences.Step, s *senders.Sender, lead *leads.Lead,
	a *enrollments.ActionRecord) (senders.Request, error) {
	action := senders.Action(a.Action)
	req := senders.Request{Key: a.IdemKey, Sender: s, Action: action, Lead: lead.Recipient(), Purpose: senders.PurposeSequence,
		StepID: step.ID, VariantID: apikit.Deref(a.VariantID)}
	if e.AfterReply() {
		req.RuleAt = e.CreatedAt
	}
	if threads(s, action) {
		var err error
		if req.Thread, err = r.svc.inbox.Earlier(ctx, s, e.LeadID, e.SequenceID); err != nil {
			return req, err
		}
	}
	// The variant the action was recorded with: a recovery sends, and
	// looks for, the same text.
	texts, err := render(step.WithVariant(apikit.Deref(a.VariantID)), lead)
	if err != nil {
		return req, err
	}
	if a.WithNote {
		req.Note = texts["note"]
	}
	req.Subject, req.Body = texts["subject"], texts["body"]
	return req, nil
}

// templateError is a step's template the lead does not fill.
type templateError struct{ msg string }

func (e *templateError) Error() string { return e.msg }

// render fills a step's templates (its type's: the note, subject and
// body it sends) for the lead (sequences.RenderStep: spin text chosen by
// the lead and the step, so that a retry or a recovery renders the same).
func render(step sequences.Step, lead *leads.Lead) (map[string]string, error) {
	r, err := sequences.RenderStep(step, lead.ID, enrollments.VarsOf(lead))
	if err != nil {
		return nil, &templateError{err.Error()}
	}
	return r.Texts(), nil
}

// threads reports whether an action of s continues the lead's
// conversation: one that does (senders.ActionSpec.Continues) through a
// transport that threads.
func threads(s *senders.Sender, a senders.Action) bool {
	spec, _ := a.Spec()
	kind, _ := senders.KindOf(s.Transport)
	return spec.Continues && kind.Threads
}
