package simulate

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/sequences"
)

// VariantLine is one variant's numbers at the end of a simulation, as the
// sequence's stats give them, and whether (and when) it won.
type VariantLine struct {
	Sequence, Step string
	sequences.VariantCounts
	WonAt *time.Time
}

// variantAudit reads the numbers of every step with variants and checks
// them against the actions the runner recorded and the sandbox received:
// each variant's sends are the enrollments the step sent it to, they add
// up to the step's, the sandbox saw each of them, and no first send of a
// step after its winner was picked went out with another variant. What
// breaks a rule is a violation (variant_numbers, variant_after_win).
func variantAudit(ctx context.Context, d *db.DB, svc *sequences.Service, workspaceID string, performed []sandbox.Performed) ([]VariantLine, []sandbox.Violation, error) {
	var qs []sequences.Sequence
	if err := d.NewSelect().Model(&qs).Where("workspace_id = ?", workspaceID).Order("name").Scan(ctx); err != nil {
		return nil, nil, err
	}
	var ids []string
	for _, q := range qs {
		for _, st := range q.Steps {
			if len(st.Variants) > 0 {
				ids = append(ids, q.ID)
				break
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil, nil
	}
	counts, err := svc.VariantCountsOf(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	var sent []struct {
		SequenceID   string    `bun:"sequence_id"`
		StepID       string    `bun:"step_id"`
		VariantID    string    `bun:"variant_id"`
		EnrollmentID string    `bun:"enrollment_id"`
		SenderID     string    `bun:"sender_id"`
		LeadID       string    `bun:"lead_id"`
		Attempt      int       `bun:"attempt"`
		CreatedAt    time.Time `bun:"created_at"`
	}
	if err := d.NewSelect().Table("actions").Column("sequence_id", "step_id", "variant_id", "enrollment_id", "sender_id", "lead_id", "attempt", "created_at").
		Where("sequence_id IN (?) AND status = 'sent' AND variant_id IS NOT NULL", bun.In(ids)).Scan(ctx, &sent); err != nil {
		return nil, nil, err
	}
	// What the sandbox received, by step and variant (a step id may be
	// shared by two sequences: the check is over their sum).
	received := map[[2]string]int{}
	for _, p := range performed {
		if p.VariantID != "" {
			received[[2]string{p.StepID, p.VariantID}]++
		}
	}
	recorded := map[[2]string]int{}
	enrolled := map[[3]string]map[string]bool{}
	var lines []VariantLine
	var bad []sandbox.Violation
	for _, a := range sent {
		recorded[[2]string{a.StepID, a.VariantID}]++
		k := [3]string{a.SequenceID, a.StepID, a.VariantID}
		if enrolled[k] == nil {
			enrolled[k] = map[string]bool{}
		}
		enrolled[k][a.EnrollmentID] = true
	}
	for _, q := range qs {
		if !slices.Contains(ids, q.ID) {
			continue
		}
		for _, st := range q.Steps {
			if len(st.Variants) == 0 {
				continue
			}
			w := q.WinnerOf(st.ID)
			stepSends, stepEnrolled := 0, map[string]bool{}
			for _, c := range counts[[2]string{q.ID, st.ID}] {
				line := VariantLine{Sequence: q.Name, Step: st.ID, VariantCounts: c}
				if w.Active() && w.VariantID == c.VariantID {
					line.WonAt = &w.At
				}
				lines = append(lines, line)
				stepSends += c.Sent
				got := enrolled[[3]string{q.ID, st.ID, c.VariantID}]
				for id := range got {
					stepEnrolled[id] = true
				}
				if c.Sent != len(got) {
					bad = append(bad, sandbox.Violation{Rule: "variant_numbers", At: time.Time{},
						Detail: fmt.Sprintf("%s/%s/%s: %d sends counted, %d enrollments sent it", q.Name, st.ID, c.VariantID, c.Sent, len(got))})
				}
			}
			if stepSends != len(stepEnrolled) {
				bad = append(bad, sandbox.Violation{Rule: "variant_numbers",
					Detail: fmt.Sprintf("%s/%s: the variants' %d sends do not add up to the step's %d", q.Name, st.ID, stepSends, len(stepEnrolled))})
			}
			if !w.Active() {
				continue
			}
			for _, a := range sent {
				if a.SequenceID == q.ID && a.StepID == st.ID && a.Attempt == 0 && a.CreatedAt.After(w.At) && a.VariantID != w.VariantID {
					bad = append(bad, sandbox.Violation{Rule: "variant_after_win", SenderID: a.SenderID, LeadID: a.LeadID, At: a.CreatedAt,
						Detail: fmt.Sprintf("%s/%s sent variant %s after %s won at %s", q.Name, st.ID, a.VariantID, w.VariantID, w.At.Format(time.RFC3339))})
				}
			}
		}
	}
	for k, n := range recorded {
		if received[k] != n {
			bad = append(bad, sandbox.Violation{Rule: "variant_numbers",
				Detail: fmt.Sprintf("step %s variant %s: %d sends recorded, the sandbox received %d", k[0], k[1], n, received[k])})
		}
	}
	return lines, bad, nil
}

// variantReport prints the variants' numbers.
func variantReport(w io.Writer, lines []VariantLine) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\nVariants (the sequence's stats):\n%-24s %-12s %-8s %8s %8s %8s %8s %8s %10s  %s\n",
		"sequence", "step", "variant", "sent", "accepted", "replied", "positive", "meetings", "reply rate", "won")
	for _, l := range lines {
		rate := 0.0
		if l.Sent > 0 {
			rate = float64(l.Replied) / float64(l.Sent)
		}
		won := ""
		if l.WonAt != nil {
			won = l.WonAt.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%-24s %-12s %-8s %8d %8d %8d %8d %8d %10.3f  %s\n", l.Sequence, l.Step, l.VariantID, l.Sent, l.Accepted, l.Replied, l.Positive,
			l.Meetings, rate, won)
	}
}
