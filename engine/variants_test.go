package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

const variantSequences = `
      - name: Test
        client: Globex
        senders: [mail]
        steps:
          - id: hi
            type: email
            variants:
              - {id: a, subject: "A for {{company|you}}", body: "Hello A"}
              - {id: b, subject: "B for {{company|you}}", body: "Hello B", weight: 2}
            pick_winner: {metric: reply_rate, min_sends: 2, confidence: 0.9}
      - name: Mostly A
        client: Globex
        senders: [mail]
        steps:
          - id: hi
            type: email
            variants:
              - {id: a, subject: "A for {{company|you}}", body: "Hello A", weight: 100}
              - {id: b, subject: "B for {{company|you}}", body: "Hello B"}
`

// TestVariantsSend: each enrollment gets the variant its hash chooses by
// weight, recorded on the action, the action.sent event, the thread's
// message and the step's numbers; a manager's pick sends the winner to
// every later enrollment, and undoing it splits the traffic again.
func TestVariantsSend(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, variantSequences)
		e.activate("Test")
		var ids []string
		for _, n := range []string{"Ann Lee", "Bob Roe", "Cy Poe", "Di Dee", "Ed Eng"} {
			ids = append(ids, e.lead(n, nil))
		}
		is.Equal(e.enrol("Test", ids...).Enrolled, 5)
		e.clock.Set(monday.Add(2 * time.Hour))
		rec := e.recordTick()
		is.Equal(len(rec.performed), 5)

		q, err := e.seqs.ByID(ctx, e.p.WorkspaceID, e.ids["Test"])
		is.NoErr(err)
		step := q.Steps[0]
		bySubject := map[string]string{"A for you": "a", "B for you": "b"}
		for _, r := range rec.performed {
			en := e.enrollment(r.Lead.LeadID)
			want := step.Choose(en.ID, nil)
			is.Equal(bySubject[r.Subject], want) // the hash's variant was sent
			var rows []struct {
				Variant string `bun:"variant_id"`
			}
			is.NoErr(d.NewRaw(`SELECT variant_id FROM actions WHERE enrollment_id = ? AND status = 'sent'
				UNION ALL SELECT CAST(data AS TEXT) FROM events WHERE enrollment_id = ? AND kind = 'action.sent'
				UNION ALL SELECT m.variant_id FROM messages AS m JOIN threads AS th ON th.id = m.thread_id WHERE th.lead_id = ?`,
				en.ID, en.ID, r.Lead.LeadID).Scan(ctx, &rows))
			is.Equal(len(rows), 3)
			is.Equal(rows[0].Variant, want) // on the action
			var data map[string]any
			is.NoErr(json.Unmarshal([]byte(rows[1].Variant), &data))
			is.Equal(data["variant_id"], want) // on its event
			is.Equal(rows[2].Variant, want)    // on the thread's message
		}
		st, err := e.svc.Stats(ctx, e.p, e.ids["Test"])
		is.NoErr(err)
		vs := st.Steps[0].Variants
		is.Equal(len(vs), 2)
		is.Equal(vs[0].Sent+vs[1].Sent, 5) // the variants add up to the step
		is.Equal(vs[0].Weight, 1)
		is.Equal(vs[1].Weight, 2)

		// A manager picks b: every later enrollment gets it.
		mgr := e.p
		_, err = e.seqs.Pick(ctx, mgr, e.ids["Test"], "hi", sequences.PickInput{VariantID: "b"})
		is.NoErr(err)
		_, err = e.seqs.Pick(ctx, mgr, e.ids["Test"], "hi", sequences.PickInput{VariantID: "zz"})
		is.True(err != nil) // an unknown variant changes nothing
		var later []string
		for _, n := range []string{"Fa Foe", "Gi Gee", "Ho Hoe", "Io Ivy", "Ju Jay"} {
			later = append(later, e.lead(n, nil))
		}
		is.Equal(e.enrol("Test", later...).Enrolled, 5)
		e.clock.Set(monday.Add(26 * time.Hour))
		rec = e.recordTick()
		is.Equal(len(rec.performed), 5)
		for _, r := range rec.performed {
			is.Equal(r.Subject, "B for you")
		}
		st, err = e.svc.Stats(ctx, e.p, e.ids["Test"])
		is.NoErr(err)
		is.True(st.Steps[0].Variants[1].Won)
		var kinds []string
		is.NoErr(d.NewSelect().Table("events").Column("kind").Where("sequence_id = ? AND kind LIKE 'sequence.variant%'", e.ids["Test"]).Scan(ctx, &kinds))
		is.Equal(kinds, []string{sequences.EventVariantWon})

		// Undone: the hash chooses again.
		v, err := e.seqs.Undo(ctx, mgr, e.ids["Test"], "hi")
		is.NoErr(err)
		is.True(v.Winners["hi"].UndoneAt != nil)
		q, err = e.seqs.ByID(ctx, e.p.WorkspaceID, e.ids["Test"])
		is.NoErr(err)
		is.Equal(q.Steps[0].Choose("x", q.WinnerOf("hi")), q.Steps[0].Choose("x", nil))
	})
}

// TestVariantRetryKeepsChoice: a retry of a variant step sends the
// variant its first attempt was recorded with, though a winner was
// picked in between.
func TestVariantRetryKeepsChoice(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, variantSequences)
		e.activate("Mostly A")
		// A lead whose hash chooses a, so that a pick of b would change it.
		q, err := e.seqs.ByID(ctx, e.p.WorkspaceID, e.ids["Mostly A"])
		is.NoErr(err)
		var leadIDs []string
		for i := 0; ; i++ {
			lead := e.lead("Retry "+string(rune('A'+i)), nil)
			e.enrol("Mostly A", lead)
			leadIDs = append(leadIDs, lead)
			if q.Steps[0].Choose(e.enrollment(lead).ID, nil) == "a" {
				break
			}
			is.True(i < 20)
		}
		e.clock.Set(monday.Add(2 * time.Hour))
		for range leadIDs {
			e.net.FailNext(e.ids["mail"], &senders.TransportError{Kind: senders.Transient, Code: "timeout", Message: "try again"})
		}
		_, err = e.runner.Tick(ctx)
		is.NoErr(err)
		_, err = e.seqs.Pick(ctx, e.p, e.ids["Mostly A"], "hi", sequences.PickInput{VariantID: "b"})
		is.NoErr(err)
		e.clock.Set(monday.Add(5 * time.Hour))
		rec := e.recordTick()
		is.Equal(len(rec.performed), len(leadIDs))
		for _, r := range rec.performed {
			want := map[string]string{"a": "A for you", "b": "B for you"}[q.Steps[0].Choose(e.enrollment(r.Lead.LeadID).ID, nil)]
			is.Equal(r.Subject, want) // the first attempt's variant, a included
		}
	})
}

// TestVariantWinsByEvidence: the runner's checks pick the variant whose
// evidence reached the step's confidence, once every variant has
// min_sends, with its sequence.variant_won event; enrollments that reach
// the step later get it.
func TestVariantWinsByEvidence(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, variantSequences)
		e.activate("Test")
		seq, sender := e.ids["Test"], e.ids["mail"]
		// The outcomes of earlier sends, as the activity log tells them.
		var evs []events.Event
		send := func(variant string, replied bool) {
			en, lead := apikit.NewID(), apikit.NewID()
			evs = append(evs, events.Event{WorkspaceID: e.p.WorkspaceID, SequenceID: seq, EnrollmentID: en, LeadID: lead, SenderID: sender, StepID: "hi",
				Kind: "action.sent", Data: map[string]any{"action": "email", "variant_id": variant}})
			if replied {
				evs = append(evs, events.Event{WorkspaceID: e.p.WorkspaceID, SequenceID: seq, EnrollmentID: en, LeadID: lead, Kind: "enrollment.replied"})
			}
		}
		send("a", false)
		is.NoErr(e.pl.Log.EmitMany(ctx, evs))
		is.NoErr(e.seqs.PickWinners(ctx, monday))
		q, err := e.seqs.ByID(ctx, e.p.WorkspaceID, seq)
		is.NoErr(err)
		is.True(q.WinnerOf("hi") == nil) // b has no sends yet

		evs = nil
		for i := range 20 {
			send("a", i < 1)
			send("b", i < 12)
		}
		is.NoErr(e.pl.Log.EmitMany(ctx, evs))
		is.NoErr(e.seqs.PickWinners(ctx, monday))
		is.NoErr(e.seqs.PickWinners(ctx, monday)) // once
		q, err = e.seqs.ByID(ctx, e.p.WorkspaceID, seq)
		is.NoErr(err)
		w := q.WinnerOf("hi")
		is.True(w != nil)
		is.Equal(w.VariantID, "b")
		is.Equal(w.By, sequences.ByEvidence)
		is.True(w.Probability >= 0.9)
		var won []events.Event
		is.NoErr(d.NewSelect().Model(&won).Where("sequence_id = ? AND kind = ?", seq, sequences.EventVariantWon).Scan(ctx))
		is.Equal(len(won), 1)
		is.Equal(won[0].Data["variant_id"], "b")
		is.Equal(won[0].Data["metric"], "reply_rate")

		st, err := e.svc.Stats(ctx, e.p, seq)
		is.NoErr(err)
		vs := st.Steps[0].Variants
		is.Equal(vs[0].Sent, 21)
		is.Equal(vs[0].Replied, 1)
		is.Equal(vs[1].Sent, 20)
		is.Equal(vs[1].Replied, 12)
		is.True(vs[1].Won && *vs[1].ProbabilityBest > 0.9)

		// Every later enrollment gets b.
		var later []string
		for _, n := range []string{"Fa Foe", "Gi Gee", "Ho Hoe", "Io Ivy", "Ju Jay"} {
			later = append(later, e.lead(n, nil))
		}
		e.enrol("Test", later...)
		e.clock.Set(monday.Add(2 * time.Hour))
		rec := e.recordTick()
		is.Equal(len(rec.performed), 5)
		for _, r := range rec.performed {
			is.Equal(r.Subject, "B for you")
		}
	})
}

// TestVariantEditRenews: editing a variant's text on a paused sequence
// gives it a new id, so its numbers start afresh, and drops the step's
// pick; applying the same file again changes nothing. A draft's variant
// keeps its id.
func TestVariantEditRenews(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, variantSequences)
		o := sequences.Owner{WorkspaceID: e.p.WorkspaceID, Clients: map[string]string{"Globex": e.ids["Globex"]}}
		spec := func(bBody string) []sequences.Spec {
			return []sequences.Spec{{Name: "Test", Client: "Globex", Senders: []string{"mail"}, Steps: []sequences.Step{{ID: "hi", Type: "email",
				Variants:   []sequences.Variant{{ID: "a", Subject: "A for {{company|you}}", Body: "Hello A"}, {ID: "b", Subject: "B for {{company|you}}", Body: bBody, Weight: 2}},
				PickWinner: &sequences.PickWinner{Metric: "reply_rate", MinSends: 2, Confidence: 0.9}}}}}
		}
		ids := func() []string {
			q, err := e.seqs.ByID(ctx, e.p.WorkspaceID, e.ids["Test"])
			is.NoErr(err)
			return []string{q.Steps[0].Variants[0].ID, q.Steps[0].Variants[1].ID}
		}
		// A draft: edits keep the id.
		_, err := e.seqs.Apply(ctx, o, spec("Hello again"))
		is.NoErr(err)
		is.Equal(ids(), []string{"a", "b"})

		e.activate("Test")
		_, err = e.seqs.Pick(ctx, e.p, e.ids["Test"], "hi", sequences.PickInput{VariantID: "b"})
		is.NoErr(err)
		_, err = e.seqs.Apply(ctx, o, spec("Hello B, edited"))
		is.True(err != nil) // an active sequence's steps do not change
		_, err = e.seqs.Pause(ctx, e.p, e.ids["Test"])
		is.NoErr(err)
		lines, err := e.seqs.Apply(ctx, o, spec("Hello B, edited"))
		is.NoErr(err)
		is.Equal(len(lines), 1)
		is.Equal(ids(), []string{"a", "b.2"})
		q, err := e.seqs.ByID(ctx, e.p.WorkspaceID, e.ids["Test"])
		is.NoErr(err)
		is.True(q.WinnerOf("hi") == nil) // the pick was of the old b
		lines, err = e.seqs.Apply(ctx, o, spec("Hello B, edited"))
		is.NoErr(err)
		is.Equal(len(lines), 0) // the same file again: nothing changes
		_, err = e.seqs.Apply(ctx, o, spec("Third text"))
		is.NoErr(err)
		is.Equal(ids(), []string{"a", "b.3"})
	})
}

// recordTick runs one tick of a runner whose sends are recorded.
func (e *rig) recordTick() *recording {
	e.t.Helper()
	rec := &recording{Network: e.net}
	if _, err := e.pl.NewRunner(map[string]senders.Transport{senders.TransportSandbox: rec}).Tick(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	return rec
}

// TestVariantQueriesUseIndexes: the queries variants add to the runner
// (a retry's earlier variant), to the activity log's writes (what came of
// each variant) and to the stats and the checks read indexes, on both
// engines.
func TestVariantQueriesUseIndexes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, variantSequences)
		e.activate("Test")
		var ids []string
		for _, n := range []string{"Ann Lee", "Bob Roe", "Cy Poe"} {
			ids = append(ids, e.lead(n, nil))
		}
		e.enrol("Test", ids...)
		e.clock.Set(monday.Add(2 * time.Hour))
		queries := dbtest.Record(d).During(func() {
			e.net.FailNext(e.ids["mail"], &senders.TransportError{Kind: senders.Transient, Code: "timeout", Message: "try again"})
			_, err := e.runner.Tick(ctx)
			is.NoErr(err)
			e.clock.Set(monday.Add(5 * time.Hour))
			_, err = e.runner.Tick(ctx)
			is.NoErr(err)
			en := e.enrollment(ids[0])
			is.NoErr(e.pl.Log.EmitMany(ctx, []events.Event{
				{WorkspaceID: e.p.WorkspaceID, SequenceID: en.SequenceID, EnrollmentID: en.ID, LeadID: ids[0], SenderID: e.ids["mail"], Kind: "invite.accepted"},
				{WorkspaceID: e.p.WorkspaceID, SequenceID: en.SequenceID, EnrollmentID: en.ID, LeadID: ids[0], Kind: "enrollment.replied"},
				{WorkspaceID: e.p.WorkspaceID, SequenceID: en.SequenceID, EnrollmentID: en.ID, LeadID: ids[0], Kind: "message.classified",
					Data: map[string]any{"intent": "interested", "message_id": apikit.NewID()}},
				{WorkspaceID: e.p.WorkspaceID, LeadID: ids[0], Kind: "meeting.booked"},
			}))
			_, err = e.svc.Stats(ctx, e.p, e.ids["Test"])
			is.NoErr(err)
			is.NoErr(e.seqs.PickWinners(ctx, e.clock.Now()))
			_, err = e.seqs.VariantCountsSent(ctx, e.ids["Test"], monday, monday.AddDate(0, 0, 7)) // a sequence's report
			is.NoErr(err)
		})
		st, err := e.svc.Stats(ctx, e.p, e.ids["Test"])
		is.NoErr(err)
		sent, won := 0, 0
		for _, v := range st.Steps[0].Variants {
			sent += v.Sent
			won += v.Replied + v.Positive + v.Meetings
		}
		is.Equal(sent, 3)
		is.Equal(won, 3) // Ann's reply, positive, meeting
		dbtest.AssertNoScan(t, d, "variant_sends", "", queries)
		dbtest.AssertNoScan(t, d, "actions", "", queries)
	})
}
