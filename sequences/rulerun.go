package sequences

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// EventRuleApplied is the activity-log kind of a rule that ran: what it
// did and what it refused, and why.
const EventRuleApplied = "sequence.rule_applied"

// What one field of a rule came to (Outcome.Status).
const (
	OutcomeDone      = "done"
	OutcomeUnchanged = "unchanged"
	OutcomeRefused   = "refused"
)

// RuleRun is one run of a sequence's rule: the reply or booking that ran
// it and what each of the rule's fields came to. A rule runs once per
// trigger (a reply's message, a booking).
type RuleRun struct {
	bun.BaseModel `bun:"table:rule_runs,alias:rr"`

	ID          string    `bun:"id,pk" json:"id" format:"uuid"`
	WorkspaceID string    `bun:"workspace_id" json:"-"`
	SequenceID  string    `bun:"sequence_id" json:"sequence_id" format:"uuid" doc:"The sequence whose rule ran."`
	LeadID      string    `bun:"lead_id" json:"lead_id" format:"uuid" doc:"The lead who replied or booked."`
	Trigger     string    `bun:"trigger_key" json:"-"`
	Rule        string    `bun:"rule" json:"rule" doc:"The reply intent whose rule (on_reply) ran, or meeting_booked."`
	ThreadID    *string   `bun:"thread_id" json:"thread_id" format:"uuid" doc:"The reply's thread; for a meeting, the lead's latest thread (null when the lead has none)."`
	MessageID   *string   `bun:"message_id" json:"message_id" format:"uuid" doc:"The reply that ran the rule; null for a meeting."`
	BookingID   *string   `bun:"booking_id" json:"booking_id" format:"uuid" doc:"The booking that ran the rule; null for a reply."`
	Outcomes    []Outcome `bun:"outcomes,type:jsonb" json:"outcomes" doc:"What each field of the rule came to, in the order stage, tag, assign, task, enroll, enroll_replacement."`
	CreatedAt   time.Time `bun:"created_at" json:"created_at"`
}

// Outcome is what one field of a rule came to.
type Outcome struct {
	Field  string `json:"field" enum:"stage,tag,assign,task,enroll,enroll_replacement"`
	Value  string `json:"value" doc:"As the rule names it: the stage, the tag, the member's email, the task's title or the sequence."`
	Status string `json:"status" enum:"done,unchanged,refused" doc:"unchanged: the lead already was so (its stage, its thread's assignee)."`
	// Reason is a refusal's code; Detail says it in words.
	Reason string `json:"reason,omitempty" doc:"refused: why, as a code: an enrolment's exclusion (do_not_contact, blacklisted, already_enrolled, already_in_sequence, client_mismatch, missing_linkedin, missing_email, missing_variable), moved_too_often, moved_out_before, sequence_invalid, unknown_stage, unknown_tag, unknown_member, unknown_sequence, no_thread, no_enrollment, no_replacement, or the code of the error the service gave."`
	Detail string `json:"detail,omitempty" doc:"What happened, in words: for a refusal, why; for a delayed enrolment, when it starts."`
	LeadID string `json:"lead_id,omitempty" format:"uuid" doc:"enroll_replacement: the replacement's lead (found or created)."`
	Ref    string `json:"ref,omitempty" format:"uuid" doc:"What the field made: the enrollment (enroll, enroll_replacement) or the task (task)."`
}

// Refused reports whether the field was refused.
func (o Outcome) Refused() bool { return o.Status == OutcomeRefused }

// StartRun records that run's rule starts, once per sequence and trigger,
// in the transaction ctx carries: false when the trigger ran it before
// (a reply taken in twice, a replica's), and then nothing is to be done.
// Returns only the database's errors.
func (svc *Service) StartRun(ctx context.Context, run *RuleRun) (bool, error) {
	run.ID, run.CreatedAt = apikit.NewID(), db.Now(ctx, svc.clock)
	if run.Outcomes == nil {
		run.Outcomes = []Outcome{}
	}
	return db.InsertIfAbsent(ctx, svc.db.IDB(ctx), run, "workspace_id, sequence_id, trigger_key")
}

// FinishRun records what run's rule did, with its event on the lead's
// timeline (sequence.rule_applied: what it did and what it refused, and
// why), counted for clientID (the lead's). Returns only the database's
// errors.
func (svc *Service) FinishRun(ctx context.Context, q *Sequence, run *RuleRun, clientID string) error {
	if _, err := svc.db.IDB(ctx).NewUpdate().Model(run).Column("outcomes").WherePK().Exec(ctx); err != nil {
		return err
	}
	done, refused := []Outcome{}, []Outcome{}
	for _, o := range run.Outcomes {
		if o.Refused() {
			refused = append(refused, o)
		} else {
			done = append(done, o)
		}
	}
	data := map[string]any{"sequence_id": q.ID, "sequence_name": q.Name, "rule": run.Rule, "lead_id": run.LeadID, "run_id": run.ID,
		"thread_id": run.ThreadID, "message_id": run.MessageID, "booking_id": run.BookingID, "done": done, "refused": refused}
	return svc.log.EmitMany(ctx, []events.Event{{WorkspaceID: q.WorkspaceID, LeadID: run.LeadID, SequenceID: q.ID,
		ClientID: clientID, Kind: EventRuleApplied, Data: data}})
}

// RunsOfThread returns the rules that ran on the workspace's thread, the
// oldest first. Returns only the database's errors.
func (svc *Service) RunsOfThread(ctx context.Context, workspaceID, threadID string) ([]RuleRun, error) {
	out := []RuleRun{}
	err := svc.db.IDB(ctx).NewSelect().Model(&out).Where("rr.thread_id = ? AND rr.workspace_id = ?", threadID, workspaceID).
		OrderExpr("rr.created_at, rr.id").Scan(ctx)
	return out, err
}
