package enrollments_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/sequences"
)

// fail is a change that fails the enrollment at its step.
func (b *bundle) fail(ctx context.Context, e *enrollments.Enrollment, _ *sequences.Sequence, now time.Time) error {
	return b.svc.Fail(ctx, e, "profile_not_found", "LinkedIn has no such profile.", now)
}

// TestPauseResumeExit: an active enrollment pauses where it is; a paused
// one resumes due at once, its wait forgotten; a live or failed one
// exits, and an ended one does nothing more. Each writes its event; a
// move from the wrong status is E_CONFLICT and an enrollment of another
// workspace is E_NOT_FOUND.
func TestPauseResumeExit(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann, ben, _, _ := b.people()
		es := b.enrol("Visit", ann, ben)
		id := es[ann].ID
		type move = func(context.Context, apikit.Principal, string) (*enrollments.Enrollment, error)
		// to makes the move on id an hour later and returns the
		// enrollment as read back, which must have status.
		to := func(m move, id string, status enrollments.Status) *enrollments.Enrollment {
			b.later(time.Hour)
			_, err := m(b.ctx, b.p, id)
			is.NoErr(err)
			e := b.get(id)
			is.Equal(e.Status, status)
			return e
		}
		refused := func(id string, ms ...move) {
			for _, m := range ms {
				_, err := m(b.ctx, b.p, id)
				is.Equal(apikit.ErrorCode(err), apikit.EConflict)
			}
		}
		refused(id, b.svc.Resume)

		wake := monday.Add(24 * time.Hour)
		b.change(id, func(_ context.Context, e *enrollments.Enrollment, _ *sequences.Sequence, _ time.Time) error {
			e.Wait("wait_step", &wake)
			return nil
		})
		e := to(b.svc.Pause, id, enrollments.Paused)
		is.Equal(e.StepID, "visit")
		refused(id, b.svc.Pause)
		is.Equal(b.last(ann, enrollments.EventPaused).Data["status"], "paused")

		e = to(b.svc.Resume, id, enrollments.Active)
		is.True(same(e.NextRunAt, b.clock.Now()))
		is.True(e.WaitingFor == nil && e.WaitingUntil == nil)

		e = to(b.svc.Exit, id, enrollments.Exited)
		is.True(same(e.EndedAt, b.clock.Now()))
		is.True(e.NextRunAt == nil)
		refused(id, b.svc.Pause, b.svc.Resume, b.svc.Exit)
		is.Equal(b.kinds(ann), []string{enrollments.EventCreated, enrollments.EventPaused, enrollments.EventResumed, enrollments.EventExited})

		// A failed enrollment can be exited, not paused.
		b.change(es[ben].ID, b.fail)
		refused(es[ben].ID, b.svc.Pause, b.svc.Resume)
		to(b.svc.Exit, es[ben].ID, enrollments.Exited)

		other := apikit.Principal{WorkspaceID: apikit.NewID(), Role: apikit.RoleOwner}
		_, err := b.svc.Pause(b.ctx, other, es[ben].ID)
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
		_, err = b.svc.Exit(b.ctx, b.p, apikit.NewID())
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
	})
}

// TestRecover: recovering a sequence's failed enrollments runs their
// failed step again at once, with the attempt counted and the failure's
// code in enrollment.recovered; one whose lead is live elsewhere stays
// failed; named ids recover those alone, held while the sequence is
// paused.
func TestRecover(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann, ben, cy, _ := b.people()
		es := b.enrol("Visit", ann, ben, cy)
		for _, e := range es {
			b.change(e.ID, b.fail)
		}
		elsewhere := b.enrol("Other", ben)[ben]
		b.later(time.Hour)

		n, err := b.svc.Recover(b.ctx, b.p, enrollments.RecoverInput{SequenceID: b.ids["Visit"], EnrollmentIDs: []string{es[ann].ID, es[ben].ID}})
		is.NoErr(err)
		is.Equal(n, 1) // ann; ben is live in Other
		e := b.get(es[ann].ID)
		is.Equal([]any{e.Status, e.StepID, e.Attempt, e.Held}, []any{enrollments.Active, "visit", 1, false})
		is.True(same(e.NextRunAt, b.clock.Now()))
		is.True(e.FailedAt == nil)
		ev := b.last(ann, enrollments.EventRecovered)
		is.Equal([]any{ev.EnrollmentID, ev.StepID, ev.Data["code"]}, []any{e.ID, "visit", "profile_not_found"})
		is.Equal(b.get(es[ben].ID).Status, enrollments.Failed)
		is.Equal(b.get(es[cy].ID).Status, enrollments.Failed) // not named

		// Every failed one of a paused sequence: they come back held.
		_, err = b.svc.Exit(b.ctx, b.p, elsewhere.ID)
		is.NoErr(err)
		_, err = b.pl.Sequences.Pause(b.ctx, b.p, b.ids["Visit"])
		is.NoErr(err)
		n, err = b.svc.Recover(b.ctx, b.p, enrollments.RecoverInput{SequenceID: b.ids["Visit"]})
		is.NoErr(err)
		is.Equal(n, 2)
		for _, lead := range []string{ben, cy} {
			e := b.get(es[lead].ID)
			is.Equal(e.Status, enrollments.Active)
			is.True(e.Held)
		}
		n, err = b.svc.Recover(b.ctx, b.p, enrollments.RecoverInput{SequenceID: b.ids["Visit"]})
		is.NoErr(err)
		is.Equal(n, 0)

		_, err = b.svc.Recover(b.ctx, b.p, enrollments.RecoverInput{SequenceID: b.ids["Visit"], EnrollmentIDs: make([]string, enrollments.MaxLeadIDs+1)})
		is.Equal(apikit.ErrorCode(err), apikit.ETooMany)
		_, err = b.svc.Recover(b.ctx, b.p, enrollments.RecoverInput{SequenceID: apikit.NewID()})
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
	})
}

// TestDoNotContactStops: a lead marked do-not-contact stops its live
// enrollment at once with the reason, and why-not-sending counts it.
func TestDoNotContactStops(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann := b.lead("Ann Lee", "")
		id := b.enrol("Visit", ann)[ann].ID
		_, err := b.pl.Leads.Suppress(b.ctx, b.p, ann)
		is.NoErr(err)
		e := b.get(id)
		is.Equal(e.Status, enrollments.Stopped)
		is.Equal(*e.LastErrorCode, "do_not_contact")
		is.True(e.NextRunAt == nil && same(e.EndedAt, monday))
		is.Equal(b.last(ann, enrollments.EventStopped).Data["reason"], "do_not_contact")
		_, why := b.why("Visit")
		is.Equal(*why["leads_do_not_contact"].Count, 1)
		is.True(why["no_active_enrollments"].Code != "")
	})
}
