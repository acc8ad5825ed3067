package enrollments_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/sequences"
)

// reply applies a person's reply from leadID as the inbox does, in ctx's
// transaction: the lead's live enrollments end as replied, with their
// events.
func (b *bundle) reply(ctx context.Context, leadID string) *enrollments.ReplyStop {
	b.t.Helper()
	rs, err := b.svc.ForReply(ctx, b.p.WorkspaceID, leadID)
	if err != nil {
		b.t.Fatal(err)
	}
	now := b.clock.Now()
	if err := b.pl.Log.EmitMany(ctx, rs.Ending(now)); err != nil {
		b.t.Fatal(err)
	}
	if err := rs.Replied(ctx, now); err != nil {
		b.t.Fatal(err)
	}
	return rs
}

// replied reports whether the lead is marked replied.
func (b *bundle) replied(leadID string) bool {
	b.t.Helper()
	l, err := b.pl.Leads.Get(b.ctx, b.p, leadID)
	if err != nil {
		b.t.Fatal(err)
	}
	return l.Replied
}

// TestReplyStop: a person's reply ends the lead's live enrollment, active
// or paused, as replied with enrollment.replied, marks the lead replied
// and leaves its ended enrollments alone; the reply answers the
// enrollment its sender works for. A lead with no live enrollment is
// marked replied all the same.
func TestReplyStop(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann, ben, cy, _ := b.people()
		old := b.enrol("Other", ann)[ann]
		_, err := b.svc.Exit(b.ctx, b.p, old.ID)
		is.NoErr(err)
		es := b.enrol("Visit", ann, ben)
		_, err = b.svc.Pause(b.ctx, b.p, es[ben].ID)
		is.NoErr(err)
		now := b.later(time.Hour)

		is.NoErr(b.pl.DB.InTx(b.ctx, func(ctx context.Context) error {
			rs := b.reply(ctx, ann)
			seq, id := rs.Answers(b.ids["anna"])
			is.Equal([]string{seq, id}, []string{b.ids["Visit"], es[ann].ID})
			seq, id = rs.Answers(b.ids["mail"])
			is.Equal([]string{seq, id}, []string{"", ""})
			b.reply(ctx, ben)
			b.reply(ctx, cy)
			return nil
		}))
		for _, lead := range []string{ann, ben} {
			e := b.get(es[lead].ID)
			is.Equal(e.Status, enrollments.Replied)
			is.True(same(e.EndedAt, now))
			is.True(e.NextRunAt == nil)
			is.Equal(b.last(lead, enrollments.EventReplied).EnrollmentID, e.ID)
			is.True(b.replied(lead))
		}
		is.Equal(b.get(old.ID).Status, enrollments.Exited)
		is.True(same(b.get(old.ID).EndedAt, monday))
		is.Equal(b.kinds(ann), []string{enrollments.EventCreated, enrollments.EventExited, enrollments.EventCreated, enrollments.EventReplied})
		is.True(b.replied(cy))
		is.Equal(len(b.kinds(cy)), 0)
	})
}

// TestAutoReplied: an out-of-office answer with a return date delays the
// lead's active enrollment due before then until then, waiting for
// out_of_office, which why-not-sending counts among the waits that end
// by themselves; it leaves a paused one and one due after the return
// alone, and the lead is not marked replied.
func TestAutoReplied(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann, ben, cy, _ := b.people()
		es := b.enrol("Visit", ann, ben, cy)
		_, err := b.svc.Pause(b.ctx, b.p, es[ben].ID)
		is.NoErr(err)
		back, after := monday.Add(72*time.Hour), monday.Add(96*time.Hour)
		b.change(es[cy].ID, func(_ context.Context, e *enrollments.Enrollment, _ *sequences.Sequence, _ time.Time) error {
			e.Wait("wait_step", &after)
			return nil
		})
		is.NoErr(b.pl.DB.InTx(b.ctx, func(ctx context.Context) error {
			for _, lead := range []string{ann, ben, cy} {
				rs, err := b.svc.ForReply(ctx, b.p.WorkspaceID, lead)
				if err != nil {
					return err
				}
				if err := rs.AutoReplied(ctx, back, b.clock.Now()); err != nil {
					return err
				}
			}
			return nil
		}))
		e := b.get(es[ann].ID)
		is.Equal(e.Status, enrollments.Active)
		is.Equal(*e.WaitingFor, "out_of_office")
		is.True(same(e.NextRunAt, back) && same(e.WaitingUntil, back))
		e = b.get(es[ben].ID)
		is.Equal(e.Status, enrollments.Paused)
		is.True(e.WaitingFor == nil && same(e.NextRunAt, monday))
		e = b.get(es[cy].ID)
		is.Equal(*e.WaitingFor, "wait_step")
		is.True(same(e.NextRunAt, after))
		is.True(!b.replied(ann))

		w, why := b.why("Visit")
		is.Equal(len(why), 1)
		is.Equal(*why["all_waiting"].Count, 2)
		is.True(same(why["all_waiting"].Until, back))
		is.True(w.Sending)
	})
}

// TestBatchReplyStops: in a transaction that batches reply-stops, the
// replies' writes wait, visible as pending (and as the lead's), until
// FlushReplyStops writes them all, after which none is pending; a lead
// that did not reply is untouched. Outside a transaction there is no
// batch.
func TestBatchReplyStops(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann, ben, cy, _ := b.people()
		es := b.enrol("Visit", ann, ben, cy)
		now := b.later(time.Hour)
		st := b.svc.Store()
		status := func(ctx context.Context, lead string) enrollments.Status {
			e, err := st.ByID(ctx, b.p.WorkspaceID, es[lead].ID)
			is.NoErr(err)
			return e.Status
		}
		pending := func(ctx context.Context, lead string) []bool {
			p, l := b.svc.ReplyStopsPending(ctx, lead)
			return []bool{p, l}
		}
		is.NoErr(b.pl.DB.InTx(b.ctx, func(ctx context.Context) error {
			b.svc.BatchReplyStops(ctx, now)
			is.Equal(pending(ctx, ann), []bool{false, false})
			is.NoErr(b.svc.PrefetchLive(ctx, b.p.WorkspaceID, []string{ann, ben}))
			b.reply(ctx, ann)
			b.reply(ctx, ben)
			is.Equal(pending(ctx, ann), []bool{true, true})
			is.Equal(pending(ctx, cy), []bool{true, false})
			is.Equal(status(ctx, ann), enrollments.Active) // not written yet

			is.NoErr(b.svc.FlushReplyStops(ctx))
			is.Equal(pending(ctx, ann), []bool{false, false})
			is.Equal(status(ctx, ann), enrollments.Replied)
			is.NoErr(b.svc.FlushReplyStops(ctx)) // nothing left
			return nil
		}))
		for _, lead := range []string{ann, ben} {
			e := b.get(es[lead].ID)
			is.Equal(e.Status, enrollments.Replied)
			is.True(same(e.EndedAt, now))
			is.True(e.NextRunAt == nil && e.WaitingFor == nil)
			is.True(b.replied(lead))
			is.Equal(b.kinds(lead), []string{enrollments.EventCreated, enrollments.EventReplied})
		}
		is.Equal(b.get(es[cy].ID).Status, enrollments.Active)
		is.True(!b.replied(cy))

		b.svc.BatchReplyStops(b.ctx, now) // no transaction: no batch
		is.Equal(pending(b.ctx, cy), []bool{false, false})
	})
}

// TestUnflushedReplyStopsAreWrittenAtCommit: the batch belongs to its
// transaction, which writes what nobody flushed before it commits.
func TestUnflushedReplyStopsAreWrittenAtCommit(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann, ben, _, _ := b.people()
		es := b.enrol("Visit", ann, ben)
		now := b.later(time.Hour)
		is.NoErr(b.pl.DB.InTx(b.ctx, func(ctx context.Context) error {
			b.svc.BatchReplyStops(ctx, now)
			b.reply(ctx, ann)
			return nil // no FlushReplyStops
		}))
		is.Equal(b.get(es[ann].ID).Status, enrollments.Replied)
		is.True(b.replied(ann))
		is.Equal(b.get(es[ben].ID).Status, enrollments.Active)
	})
}
