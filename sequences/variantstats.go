package sequences

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// Activity-log kinds of a test's winner.
const (
	EventVariantWon    = "sequence.variant_won"
	EventWinnerUndone  = "sequence.variant_winner_undone"
	variantSendsTable  = "variant_sends"
	kindActionSent     = "action.sent"        // enrollments.EventActionSent
	kindInviteAccepted = "invite.accepted"    // enrollments.EventInviteAccepted
	kindReplied        = "enrollment.replied" // enrollments.EventReplied
	kindClassified     = "message.classified" // inbox.EventClassified
	kindBooked         = "meeting.booked"     // bookings.EventBooked
)

// positiveIntents are the intents positive_reply_rate counts.
var positiveIntents = []string{"interested", "question"}

// CountVariants is the variants' hook on the activity log
// (events.Log.OnEmit): in the events' transaction it records each
// enrollment a variant was sent to (an action.sent that names one), and
// what came of it: the invitation accepted, a reply, a reply read as
// interested or a question, a meeting booked.
func (svc *Service) CountVariants(ctx context.Context, evs []events.Event) error {
	idb := svc.db.IDB(ctx)
	for _, e := range evs {
		var err error
		switch e.Kind {
		case kindActionSent:
			v, _ := e.Data["variant_id"].(string)
			if v == "" || e.EnrollmentID == "" {
				continue
			}
			action, _ := e.Data["action"].(string)
			_, err = idb.NewRaw(`INSERT INTO variant_sends (enrollment_id, step_id, workspace_id, sequence_id, variant_id, lead_id, sender_id, action, sent_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (enrollment_id, step_id) DO NOTHING`,
				e.EnrollmentID, e.StepID, e.WorkspaceID, e.SequenceID, v, e.LeadID, e.SenderID, action, e.CreatedAt).Exec(ctx)
		case kindInviteAccepted:
			if e.LeadID == "" || e.SenderID == "" {
				continue
			}
			_, err = idb.NewRaw(`UPDATE variant_sends SET accepted = 1 WHERE lead_id = ? AND sender_id = ? AND action = 'invite'`, e.LeadID, e.SenderID).Exec(ctx)
		case kindReplied:
			if e.EnrollmentID == "" {
				continue
			}
			_, err = idb.NewRaw(`UPDATE variant_sends SET replied = 1 WHERE enrollment_id = ?`, e.EnrollmentID).Exec(ctx)
		case kindClassified:
			intent, _ := e.Data["intent"].(string)
			if e.EnrollmentID == "" || intent == "" {
				continue
			}
			// The thread's intent now: a member who corrects it moves
			// the reply in or out of the positive ones.
			positive := 0
			if slices.Contains(positiveIntents, intent) {
				positive = 1
			}
			if msg, _ := e.Data["message_id"].(string); msg != "" && intent != "ooo" {
				_, err = idb.NewRaw(`UPDATE variant_sends SET replied = 1, positive = ? WHERE enrollment_id = ?`, positive, e.EnrollmentID).Exec(ctx)
			} else {
				_, err = idb.NewRaw(`UPDATE variant_sends SET positive = ? WHERE enrollment_id = ? AND replied = 1`, positive, e.EnrollmentID).Exec(ctx)
			}
		case kindBooked:
			if e.LeadID == "" {
				continue
			}
			_, err = idb.NewRaw(`UPDATE variant_sends SET meeting = 1 WHERE lead_id = ?`, e.LeadID).Exec(ctx)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// VariantCountsOf returns the numbers of the variants of the sequences
// with ids, by sequence and step id, each step's variants by id.
func (svc *Service) VariantCountsOf(ctx context.Context, ids []string) (map[[2]string][]VariantCounts, error) {
	return svc.variantCounts(ctx, ids, time.Time{}, time.Time{})
}

// VariantCountsSent returns the numbers of the sequence's variants over
// the enrollments first sent one in [from, to), by step id: a report's
// period, the cohort sent then and what came of it.
func (svc *Service) VariantCountsSent(ctx context.Context, id string, from, to time.Time) (map[string][]VariantCounts, error) {
	all, err := svc.variantCounts(ctx, []string{id}, from, to)
	out := map[string][]VariantCounts{}
	for k, v := range all {
		out[k[1]] = v
	}
	return out, err
}

// variantCounts sums variant_sends of the sequences with ids, those sent
// in [from, to) when from is set.
func (svc *Service) variantCounts(ctx context.Context, ids []string, from, to time.Time) (map[[2]string][]VariantCounts, error) {
	out := map[[2]string][]VariantCounts{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		SequenceID string `bun:"sequence_id"`
		StepID     string `bun:"step_id"`
		VariantCounts
	}
	period, args := "", []any{bun.In(ids)}
	if !from.IsZero() {
		period, args = " AND sent_at >= ? AND sent_at < ?", append(args, from.UTC(), to.UTC())
	}
	if err := svc.db.IDB(ctx).NewRaw(`SELECT sequence_id, step_id, variant_id, count(*) AS sent, sum(accepted) AS accepted,
		sum(replied) AS replied, sum(positive) AS positive, sum(meeting) AS meetings
		FROM variant_sends WHERE sequence_id IN (?)`+period+` GROUP BY sequence_id, step_id, variant_id ORDER BY variant_id`,
		args...).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	for _, r := range rows {
		k := [2]string{r.SequenceID, r.StepID}
		out[k] = append(out[k], r.VariantCounts)
	}
	return out, nil
}

// VariantStats are one variant's numbers in a sequence's stats.
type VariantStats struct {
	VariantCounts
	Weight            int      `json:"weight"`
	AcceptanceRate    *float64 `json:"acceptance_rate" doc:"accepted / sent; null before a send (invite steps)."`
	ReplyRate         *float64 `json:"reply_rate" doc:"replied / sent."`
	PositiveReplyRate *float64 `json:"positive_reply_rate" doc:"Replies read as interested or a question / sent."`
	MeetingRate       *float64 `json:"meeting_rate" doc:"meetings / sent."`
	Share             *float64 `json:"share" doc:"This variant's part of the step's variant sends."`
	ProbabilityBest   *float64 `json:"probability_best" doc:"With pick_winner, once every variant has min_sends: the posterior probability that this variant is the best on the metric."`
	Won               bool     `json:"won" doc:"The step sends this variant to every enrollment that reaches it now."`
	Retired           bool     `json:"retired" doc:"No longer one of the step's variants (its text was edited, or it was removed); its numbers are kept."`
}

// StepVariants returns the numbers of step's variants from counts: every
// variant of the step in its order, then those it no longer has.
func StepVariants(q *Sequence, step Step, counts []VariantCounts) []VariantStats {
	if len(step.Variants) == 0 && len(counts) == 0 {
		return nil
	}
	by := map[string]VariantCounts{}
	total := 0
	for _, c := range counts {
		by[c.VariantID] = c
		total += c.Sent
	}
	ev := Judge(step, counts)
	w := q.WinnerOf(step.ID)
	rate := func(a, b int) *float64 {
		if b == 0 {
			return nil
		}
		r := float64(a) / float64(b)
		return &r
	}
	view := func(c VariantCounts, weight int, retired bool) VariantStats {
		v := VariantStats{VariantCounts: c, Weight: weight, Retired: retired,
			AcceptanceRate: rate(c.Accepted, c.Sent), ReplyRate: rate(c.Replied, c.Sent), PositiveReplyRate: rate(c.Positive, c.Sent),
			MeetingRate: rate(c.Meetings, c.Sent), Share: rate(c.Sent, total), Won: w.Active() && w.VariantID == c.VariantID}
		if p, ok := ev.Probability[c.VariantID]; ok {
			v.ProbabilityBest = &p
		}
		return v
	}
	out := []VariantStats{}
	for _, v := range step.Variants {
		c := by[v.ID]
		c.VariantID = v.ID
		out = append(out, view(c, v.weight(), false))
		delete(by, v.ID)
	}
	for _, id := range slices.Sorted(maps.Keys(by)) {
		out = append(out, view(by[id], 0, true))
	}
	return out
}

// PickWinners is the runner's periodic check of the tests: for every step
// of a running sequence with pick_winner and no pick yet, the variant
// whose evidence reached the confidence wins (a sequence.variant_won
// event); every enrollment that reaches the step from then on gets it.
func (svc *Service) PickWinners(ctx context.Context, now time.Time) error {
	qs, err := svc.Running(ctx)
	if err != nil {
		return err
	}
	var ids []string
	for _, q := range qs {
		if slices.ContainsFunc(q.Steps, func(s Step) bool { _, picked := q.Winners[s.ID]; return s.PickWinner != nil && !picked }) {
			ids = append(ids, q.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	counts, err := svc.VariantCountsOf(ctx, ids)
	if err != nil {
		return err
	}
	for _, q := range qs {
		for _, s := range q.Steps {
			if _, picked := q.Winners[s.ID]; picked || s.PickWinner == nil {
				continue
			}
			c := counts[[2]string{q.ID, s.ID}]
			ev := Judge(s, c)
			if ev.Winner == "" {
				continue
			}
			w := Winner{VariantID: ev.Winner, By: ByEvidence, Metric: s.PickWinner.Metric, Probability: ev.Probability[ev.Winner], Counts: c}
			if err := svc.setWinner(ctx, q.WorkspaceID, q.ID, s.ID, func(old *Winner) (*Winner, error) {
				if old != nil {
					return nil, nil // picked meanwhile, or undone by hand
				}
				return &w, nil
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// PickInput names the variant a manager picks.
type PickInput struct {
	VariantID string `json:"variant_id" doc:"The step's variant that every enrollment reaching the step gets from now on."`
}

// Pick makes a manager's choice of variant the winner of a step's test
// (replacing a pick by evidence, or one undone), with its
// sequence.variant_won event. Enrollments past the step are not touched.
// Returns E_NOT_FOUND if the sequence is not visible to the principal, or
// has no step step_id; E_PAYLOAD_INVALID if the step has no variant with
// that id.
func (svc *Service) Pick(ctx context.Context, p apikit.Principal, id, stepID string, in PickInput) (*SequenceView, error) {
	q, step, err := svc.variantStep(ctx, p, id, stepID)
	if err != nil {
		return nil, err
	}
	if _, ok := step.VariantByID(in.VariantID); !ok {
		return nil, apikit.Invalid(fmt.Sprintf("Step %q of sequence %q has no variant %q.", stepID, q.Name, in.VariantID),
			fmt.Sprintf("Pick one of its variants: %s.", strings.Join(variantIDs(step), ", ")))
	}
	err = svc.setWinner(ctx, q.WorkspaceID, q.ID, stepID, func(old *Winner) (*Winner, error) {
		if old.Active() && old.VariantID == in.VariantID && old.By == ByManager {
			return nil, nil
		}
		return &Winner{VariantID: in.VariantID, By: ByManager, MemberID: p.MemberID}, nil
	})
	if err != nil {
		return nil, err
	}
	return svc.viewByID(ctx, p, id)
}

// Undo undoes the pick of a step's winner (by evidence or by hand): the
// step splits its traffic by weight again, and evidence picks no winner
// for it until its variants change. Undoing with no pick changes nothing.
// Returns E_NOT_FOUND if the sequence is not visible to the principal or
// has no step step_id with variants.
func (svc *Service) Undo(ctx context.Context, p apikit.Principal, id, stepID string) (*SequenceView, error) {
	q, _, err := svc.variantStep(ctx, p, id, stepID)
	if err != nil {
		return nil, err
	}
	err = svc.setWinner(ctx, q.WorkspaceID, q.ID, stepID, func(old *Winner) (*Winner, error) {
		if !old.Active() {
			return nil, nil
		}
		undone := *old
		undone.UndoneAt = ptrTime(db.Now(ctx, svc.clock))
		return &undone, nil
	})
	if err != nil {
		return nil, err
	}
	return svc.viewByID(ctx, p, id)
}

func (svc *Service) viewByID(ctx context.Context, p apikit.Principal, id string) (*SequenceView, error) {
	q, err := svc.Visible(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return svc.View(ctx, q)
}

// variantStep returns the visible sequence with id and its step stepID,
// which must have variants.
func (svc *Service) variantStep(ctx context.Context, p apikit.Principal, id, stepID string) (*Sequence, Step, error) {
	q, err := svc.Visible(ctx, p, id)
	if err != nil {
		return nil, Step{}, err
	}
	step, ok := q.StepByID(stepID)
	if !ok || len(step.Variants) == 0 {
		return nil, Step{}, apikit.NotFound(fmt.Sprintf("Step %q with variants in sequence %s", stepID, id))
	}
	return q, step, nil
}

// setWinner changes the winner of a step in its own transaction, with the
// sequence's row locked (so that two replicas' checks pick once): change
// gets the current winner (nil for none) and returns the new one, or nil
// to change nothing. A new active winner writes sequence.variant_won, an
// undone one sequence.variant_winner_undone.
func (svc *Service) setWinner(ctx context.Context, workspaceID, id, stepID string, change func(old *Winner) (*Winner, error)) error {
	return svc.db.InTx(ctx, func(ctx context.Context) error {
		q := new(Sequence)
		sel := svc.db.IDB(ctx).NewSelect().Model(q).Where("q.workspace_id = ? AND q.id = ?", workspaceID, id)
		if svc.db.Engine == db.Postgres {
			sel = sel.For("UPDATE")
		}
		if err := sel.Scan(ctx); err != nil {
			return err
		}
		w, err := change(q.WinnerOf(stepID))
		if err != nil || w == nil {
			return err
		}
		now := db.Now(ctx, svc.clock)
		kind := EventWinnerUndone
		if w.UndoneAt == nil {
			w.At, kind = now, EventVariantWon
		}
		if q.Winners == nil {
			q.Winners = map[string]Winner{}
		}
		q.Winners[stepID] = *w
		if _, err := svc.db.IDB(ctx).NewUpdate().Model(q).Column("variant_winners").WherePK().Exec(ctx); err != nil {
			return err
		}
		data := map[string]any{"sequence_id": q.ID, "name": q.Name, "step_id": stepID, "variant_id": w.VariantID, "by": w.By}
		if w.By == ByEvidence {
			data["metric"], data["probability"], data["counts"] = w.Metric, w.Probability, w.Counts
		}
		return svc.log.EmitMany(ctx, []events.Event{{WorkspaceID: q.WorkspaceID, SequenceID: q.ID, StepID: stepID, ClientID: deref(q.ClientID),
			Kind: kind, Data: data}})
	})
}

func ptrTime(t time.Time) *time.Time { return &t }
