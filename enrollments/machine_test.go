package enrollments_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

// advance is a change that runs Advance from the enrollment's step to the
// step after it.
func (b *bundle) advance(ctx context.Context, e *enrollments.Enrollment, q *sequences.Sequence, now time.Time) error {
	step, ok := q.StepByID(e.StepID)
	if !ok {
		b.t.Fatalf("sequence %s has no step %s", q.Name, e.StepID)
	}
	return b.svc.Advance(ctx, e, q, step, q.After(step), now)
}

// TestAdvance: Advance moves an enrollment to the next step, due at once,
// with its wait, attempt and last error cleared, counting its step done
// and the next entered; from the last step it finishes the enrollment and
// writes enrollment.finished.
func TestAdvance(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann := b.lead("Ann Lee", "")
		e := b.enrol("Visit", ann)[ann]
		is.Equal(e.StepID, "visit")
		now := b.later(time.Hour)
		e = b.change(e.ID, func(ctx context.Context, e *enrollments.Enrollment, q *sequences.Sequence, now time.Time) error {
			later := now.Add(time.Hour)
			e.WaitOn(b.ids["anna"], senders.ProfileView, "daily_cap_reached", &later)
			e.Attempt, e.LastErrorCode, e.LastError = 2, ptr("provider_rate_limited"), ptr("Slow down.")
			return b.advance(ctx, e, q, now)
		})
		is.Equal(e.Status, enrollments.Active)
		is.Equal(e.StepID, "call")
		is.True(e.StepStartedAt.Equal(now))
		is.True(same(e.NextRunAt, now))
		is.Equal(e.Attempt, 0)
		is.True(e.WaitingFor == nil && e.WaitingUntil == nil && e.WaitingSenderID == nil && e.WaitingAction == nil)
		is.True(e.LastErrorCode == nil && e.LastError == nil)
		visit, call := b.step("Visit", "visit"), b.step("Visit", "call")
		is.Equal([]int{visit.Entered, visit.Done, visit.Failed, visit.Waiting}, []int{1, 1, 0, 0})
		is.Equal([]int{call.Entered, call.Done, call.Failed, call.Waiting}, []int{1, 0, 0, 1})
		is.Equal(b.kinds(ann), []string{enrollments.EventCreated}) // a step moved on is no event

		end := b.later(time.Hour)
		e = b.change(e.ID, b.advance)
		is.Equal(e.Status, enrollments.Finished)
		is.Equal(e.StepID, "call") // the step it finished at
		is.True(same(e.EndedAt, end))
		is.True(e.NextRunAt == nil)
		call = b.step("Visit", "call")
		is.Equal([]int{call.Entered, call.Done, call.Waiting}, []int{1, 1, 0})
		ev := b.last(ann, enrollments.EventFinished)
		is.Equal(ev.EnrollmentID, e.ID)
		is.Equal(ev.StepID, "call")
		is.Equal(ev.SenderID, b.ids["anna"])
		is.Equal(ev.Data["sequence_id"], b.ids["Visit"])
		is.Equal(b.kinds(ann), []string{enrollments.EventCreated, enrollments.EventFinished})
	})
}

// TestFail: Fail marks the enrollment failed at its step with the code and
// the message and no wait, counts the step failed and writes
// enrollment.failed; the sequence's failed page and why-not-sending report
// it.
func TestFail(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann := b.lead("Ann Lee", "")
		e := b.enrol("Visit", ann)[ann]
		now := b.later(time.Minute)
		e = b.change(e.ID, func(ctx context.Context, e *enrollments.Enrollment, _ *sequences.Sequence, now time.Time) error {
			later := now.Add(time.Hour)
			e.Wait("retrying", &later)
			return b.svc.Fail(ctx, e, "profile_not_found", "LinkedIn has no such profile.", now)
		})
		is.Equal(e.Status, enrollments.Failed)
		is.Equal(e.StepID, "visit")
		is.True(same(e.FailedAt, now))
		is.Equal(*e.LastErrorCode, "profile_not_found")
		is.Equal(*e.LastError, "LinkedIn has no such profile.")
		is.True(e.NextRunAt == nil && e.WaitingFor == nil && e.WaitingUntil == nil)
		is.True(e.EndedAt == nil) // failed is not ended: it can be recovered
		visit := b.step("Visit", "visit")
		is.Equal([]int{visit.Entered, visit.Done, visit.Failed, visit.Waiting}, []int{1, 0, 1, 0})

		ev := b.last(ann, enrollments.EventFailed)
		is.Equal(ev.EnrollmentID, e.ID)
		is.Equal(ev.StepID, "visit")
		is.Equal(ev.Data["code"], "profile_not_found")
		is.Equal(ev.Data["message"], "LinkedIn has no such profile.")
		is.Equal(ev.Data["sequence_id"], b.ids["Visit"])

		page, err := b.svc.FailedPage(b.ctx, b.p, b.ids["Visit"], 10, 0)
		is.NoErr(err)
		is.Equal(page.Total, 1)
		f := page.Data[0]
		is.Equal([]string{f.EnrollmentID, f.LeadID, f.StepID, f.Code, f.Message}, []string{e.ID, ann, "visit", "profile_not_found", "LinkedIn has no such profile."})
		is.True(f.FailedAt.Equal(now))

		w, why := b.why("Visit")
		is.Equal(*why["failed_enrollments"].Count, 1)
		_, none := why["no_active_enrollments"]
		is.True(none)
		is.True(!w.Sending)
	})
}

// TestEnd: End moves an enrollment to a terminal status with its wait
// cleared and writes its event: replied writes enrollment.replied, stopped
// keeps the reason's code as the last error and writes enrollment.stopped
// with the whole reason; exited ends it too. Ended leaves the writing to
// the caller. An ended enrollment frees its lead.
func TestEnd(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann, ben, cy, dan := b.people()
		es := b.enrol("Visit", ann, ben, cy)
		now := b.later(time.Minute)
		end := func(status enrollments.Status, reason string) func(context.Context, *enrollments.Enrollment, *sequences.Sequence, time.Time) error {
			return func(ctx context.Context, e *enrollments.Enrollment, _ *sequences.Sequence, now time.Time) error {
				later := now.Add(time.Hour)
				e.Wait("wait_step", &later)
				return b.svc.End(ctx, e, status, reason, now)
			}
		}
		replied := b.change(es[ann].ID, end(enrollments.Replied, "replied"))
		stopped := b.change(es[ben].ID, end(enrollments.Stopped, "blacklisted: Umbrella"))
		exited := b.change(es[cy].ID, end(enrollments.Exited, "exited"))
		for _, e := range []*enrollments.Enrollment{replied, stopped, exited} {
			is.True(same(e.EndedAt, now))
			is.True(e.NextRunAt == nil && e.WaitingFor == nil && e.WaitingUntil == nil)
			is.Equal(e.StepID, "visit")
		}
		is.Equal([]enrollments.Status{replied.Status, stopped.Status, exited.Status}, []enrollments.Status{enrollments.Replied, enrollments.Stopped, enrollments.Exited})
		is.True(replied.LastErrorCode == nil)
		is.Equal(*stopped.LastErrorCode, "blacklisted")
		is.True(exited.LastErrorCode == nil)

		ev := b.last(ann, enrollments.EventReplied)
		is.Equal([]any{ev.EnrollmentID, ev.StepID, ev.Data["reason"], ev.Data["sequence_id"]}, []any{replied.ID, "visit", "replied", b.ids["Visit"]})
		ev = b.last(ben, enrollments.EventStopped)
		is.Equal([]any{ev.EnrollmentID, ev.StepID, ev.Data["reason"]}, []any{stopped.ID, "visit", "blacklisted: Umbrella"})
		is.Equal(b.kinds(ann), []string{enrollments.EventCreated, enrollments.EventReplied})
		is.Equal(b.kinds(ben), []string{enrollments.EventCreated, enrollments.EventStopped})
		is.Equal(len(b.kinds(cy)), 2) // created and its end (see TestEndExitedWritesExitedEvent)

		st, err := b.svc.Stats(b.ctx, b.p, b.ids["Visit"])
		is.NoErr(err)
		is.Equal([]int{st.Statuses["replied"], st.Statuses["stopped"], st.Statuses["exited"], st.Statuses["active"]}, []int{1, 1, 1, 0})
		is.Equal(st.RepliedCount, 1)

		// Ended changes the enrollment in memory and writes nothing.
		e := b.enrol("Visit", dan)[dan]
		ev = b.svc.Ended(e, enrollments.Replied, "replied", now)
		is.Equal([]any{ev.Kind, ev.EnrollmentID, ev.LeadID, ev.Data["reason"]}, []any{enrollments.EventReplied, e.ID, dan, "replied"})
		is.Equal(e.Status, enrollments.Replied)
		is.Equal(b.get(e.ID).Status, enrollments.Active)
		is.Equal(b.kinds(dan), []string{enrollments.EventCreated})

		// The ended enrollments hold their leads no more.
		is.Equal(len(b.enrol("Other", ann, ben, cy)), 3)
	})
}

// TestEndExitedWritesExitedEvent: an enrollment End moves to exited
// writes enrollment.exited, as Exit does.
func TestEndExitedWritesExitedEvent(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann := b.lead("Ann Lee", "")
		e := b.enrol("Visit", ann)[ann]
		b.change(e.ID, func(ctx context.Context, e *enrollments.Enrollment, _ *sequences.Sequence, now time.Time) error {
			return b.svc.End(ctx, e, enrollments.Exited, "exited", now)
		})
		is.Equal(b.kinds(ann), []string{enrollments.EventCreated, enrollments.EventExited})
	})
}

// TestWait: Wait parks an enrollment for a reason until a time (or until
// woken) and forgets any sender's limit; WaitOn names the sender and the
// action it waits on. Why-not-sending reads them: a limit that lifts by
// itself and one that needs someone, each with its count, sender, action
// and time; waits that end by themselves as designed make all_waiting;
// a wait whose time has passed is due.
func TestWait(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann, ben, cy, dan := b.people()
		es := b.enrol("Visit", ann, ben, cy, dan)
		w, why := b.why("Visit")
		is.True(w.Sending)
		is.Equal(len(why), 0) // all four due
		is.True(same(w.NextActionAt, monday))

		t1, t2 := monday.Add(24*time.Hour), monday.Add(48*time.Hour)
		anna := b.ids["anna"]
		park := func(id string, fn func(e *enrollments.Enrollment)) *enrollments.Enrollment {
			return b.change(id, func(_ context.Context, e *enrollments.Enrollment, _ *sequences.Sequence, _ time.Time) error {
				fn(e)
				return nil
			})
		}
		e := park(es[ann].ID, func(e *enrollments.Enrollment) { e.WaitOn(anna, senders.ProfileView, "daily_cap_reached", &t1) })
		is.Equal(*e.WaitingFor, "daily_cap_reached")
		is.True(same(e.WaitingUntil, t1) && same(e.NextRunAt, t1))
		is.Equal(*e.WaitingSenderID, anna)
		is.Equal(*e.WaitingAction, "profile_view")
		e = park(es[ben].ID, func(e *enrollments.Enrollment) { e.Wait("wait_step", &t2) })
		is.Equal(*e.WaitingFor, "wait_step")
		is.True(same(e.WaitingUntil, t2) && same(e.NextRunAt, t2))
		e = park(es[cy].ID, func(e *enrollments.Enrollment) { e.Wait(enrollments.WaitTasksPending, nil) })
		is.Equal(*e.WaitingFor, "tasks_pending")
		is.True(e.NextRunAt == nil && e.WaitingUntil == nil)
		e = park(es[dan].ID, func(e *enrollments.Enrollment) {
			e.WaitOn(anna, senders.ProfileView, "warmup_limit", &t1)
			e.Wait("wait_step", &t2) // the later wait is on no sender
		})
		is.Equal(*e.WaitingFor, "wait_step")
		is.True(e.WaitingSenderID == nil && e.WaitingAction == nil)

		waiting, err := b.svc.Store().Waiting(b.ctx, b.ids["Visit"], []string{"daily_cap_reached", "wait_step", "tasks_pending", "warmup_limit"})
		is.NoErr(err)
		is.Equal(waiting, map[string]int{"daily_cap_reached": 1, "wait_step": 2, "tasks_pending": 1})

		w, why = b.why("Visit")
		is.Equal(len(why), 2)
		cap := why["daily_cap_reached"]
		is.Equal(*cap.SenderID, anna)
		is.Equal(cap.Action, "profile_view")
		is.Equal(*cap.Count, 1)
		is.True(same(cap.Until, t1))
		is.Equal(cap.Message, "1 enrollments wait: the sender used today's profile_view budget.")
		tasks := why["tasks_pending"]
		is.Equal(*tasks.Count, 1)
		is.True(tasks.Until == nil && tasks.SenderID == nil)
		is.True(w.Sending) // the cap lifts by itself and two wait for a step's time
		is.True(same(w.NextActionAt, t1))

		// Every wait one that ends as designed: all of them wait.
		park(es[ann].ID, func(e *enrollments.Enrollment) { e.Wait("wait_step", &t2) })
		park(es[cy].ID, func(e *enrollments.Enrollment) { e.Wait("out_of_office", &t2) })
		w, why = b.why("Visit")
		is.Equal(len(why), 1)
		all := why["all_waiting"]
		is.Equal(*all.Count, 4)
		is.True(same(all.Until, t2))
		is.True(w.Sending)
		is.True(same(w.NextActionAt, t2))

		// Past their time the waits are due: the runner looks at its next tick.
		b.clock.Set(t2.Add(time.Minute))
		w, why = b.why("Visit")
		is.Equal(len(why), 0)
		is.True(w.Sending)
		is.True(same(w.NextActionAt, b.clock.Now()))
	})
}
