package simulate

import (
	"context"
	"fmt"
	"time"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/rules"
	"github.com/leadline/leadline/sandbox"
)

// RuleCounts are what the sequences' rules did in a simulation: the runs
// (one per reply or booking a rule answered) and the enrollments they made.
type RuleCounts struct {
	Runs, Enrolled int
}

// ruleAudit checks every enrollment a sequence's rule made (enrollments.
// rule_of, docs/SEQUENCES.md): none of a lead that was do-not-contact or
// blacklisted when it was made, no lead moved by rules more than
// rules.MaxMoves times, and none moved twice into one sequence (no loop).
// What breaks a rule is a violation (rule_do_not_contact, rule_blacklist,
// rule_loop).
func ruleAudit(ctx context.Context, d *db.DB, workspaceID string, blacklisted []string) (RuleCounts, []sandbox.Violation, error) {
	var c RuleCounts
	runs, err := d.NewSelect().Table("rule_runs").Where("workspace_id = ?", workspaceID).Count(ctx)
	if err != nil {
		return c, nil, err
	}
	c.Runs = int(runs)
	var made []struct {
		LeadID     string     `bun:"lead_id"`
		SequenceID string     `bun:"sequence_id"`
		CreatedAt  time.Time  `bun:"created_at"`
		DNCAt      *time.Time `bun:"do_not_contact_at"`
		Company    *string    `bun:"company"`
	}
	if err := d.NewSelect().TableExpr("enrollments AS e").Join("JOIN leads AS l ON l.id = e.lead_id").
		ColumnExpr("e.lead_id, e.sequence_id, e.created_at, l.do_not_contact_at, l.company").
		Where("e.workspace_id = ? AND e.rule_of IS NOT NULL", workspaceID).Order("e.created_at").Scan(ctx, &made); err != nil {
		return c, nil, err
	}
	c.Enrolled = len(made)
	var bad []sandbox.Violation
	add := func(rule, lead string, at time.Time, detail string) {
		bad = append(bad, sandbox.Violation{Rule: rule, LeadID: lead, At: at, Detail: detail})
	}
	moves := map[string]int{}
	into := map[[2]string]bool{}
	for _, m := range made {
		if m.DNCAt != nil && !m.DNCAt.After(m.CreatedAt) {
			add("rule_do_not_contact", m.LeadID, m.CreatedAt, "a rule enrolled a lead do-not-contact since "+m.DNCAt.Format(time.RFC3339))
		}
		for _, b := range blacklisted {
			if m.Company != nil && *m.Company == b {
				add("rule_blacklist", m.LeadID, m.CreatedAt, "a rule enrolled a lead of the blacklisted company "+b)
			}
		}
		moves[m.LeadID]++
		if moves[m.LeadID] > rules.MaxMoves {
			add("rule_loop", m.LeadID, m.CreatedAt, fmt.Sprintf("rules moved the lead %d times, the bound is %d", moves[m.LeadID], rules.MaxMoves))
		}
		k := [2]string{m.LeadID, m.SequenceID}
		if into[k] {
			add("rule_loop", m.LeadID, m.CreatedAt, "rules moved the lead into the same sequence twice")
		}
		into[k] = true
	}
	return c, bad, nil
}
