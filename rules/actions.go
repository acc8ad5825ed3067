package rules

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/workspace"
)

// What each field of a rule does. Each returns the field's outcome, or
// the database's error.

// named returns the workspace's entry of kind with name, or a refusal
// (the rule was checked when saved; the entry may have gone since).
func (svc *Service) named(ctx context.Context, r *run, kind workspace.Kind, name string) (string, *sequences.Outcome, error) {
	found, err := svc.catalog.NamedByName(ctx, r.q.WorkspaceID, kind, []string{name})
	if err != nil || len(found) > 0 {
		if len(found) > 0 {
			return found[0].ID, nil, err
		}
		return "", nil, err
	}
	what := map[workspace.Kind]string{workspace.Stages: "stage", workspace.Tags: "tag"}[kind]
	o := refused("unknown_"+what, fmt.Sprintf("The workspace has no %s named %q any more.", what, name))
	return "", &o, nil
}

// stage moves the lead to the rule's stage (lead.stage_changed).
func (svc *Service) stage(ctx context.Context, r *run) (sequences.Outcome, error) {
	id, no, err := svc.named(ctx, r, workspace.Stages, r.rule.Stage)
	if err != nil || no != nil {
		return deref(no), err
	}
	if apikit.Deref(r.lead.StageID) == id {
		return unchanged("The lead was at this stage already."), nil
	}
	if _, err := svc.leads.SetStage(ctx, r.p, r.lead.ID, &id); err != nil {
		return refusedBy(err)
	}
	r.lead.StageID = &id
	return done("", ""), nil
}

// tag tags the lead (lead.tagged, when it did not have the tag).
func (svc *Service) tag(ctx context.Context, r *run) (sequences.Outcome, error) {
	id, no, err := svc.named(ctx, r, workspace.Tags, r.rule.Tag)
	if err != nil || no != nil {
		return deref(no), err
	}
	if _, err := svc.leads.AddTags(ctx, r.p, r.lead.ID, []string{id}); err != nil {
		return refusedBy(err)
	}
	return done("", ""), nil
}

// member returns the id of the rule's assign member, or a refusal.
func (svc *Service) member(ctx context.Context, r *run) (string, *sequences.Outcome, error) {
	id, err := svc.catalog.ActiveMemberID(ctx, r.q.WorkspaceID, r.rule.Assign)
	if err != nil || id != "" {
		return id, nil, err
	}
	o := refused("unknown_member", fmt.Sprintf("No active member of the workspace has the email %q.", r.rule.Assign))
	return "", &o, nil
}

// assign gives the lead's conversation (its thread) to the member
// (thread.assigned): the thread's assignee owns the lead.
func (svc *Service) assign(ctx context.Context, r *run) (sequences.Outcome, error) {
	id, no, err := svc.member(ctx, r)
	if err != nil || no != nil {
		return deref(no), err
	}
	if r.thread == nil {
		return refused("no_thread", "The lead has no conversation to assign."), nil
	}
	if apikit.Deref(r.thread.AssigneeID) == id {
		return unchanged("The conversation was the member's already."), nil
	}
	th, err := svc.inbox.SetAssignee(ctx, r.p, r.thread.ID, &id)
	if err != nil {
		return refusedBy(err)
	}
	r.thread = th
	return done("", ""), nil
}

// stopped returns why nothing may reach the lead (do-not-contact, a
// blacklist entry), "" when something may.
func (svc *Service) stopped(ctx context.Context, l *leads.Lead) (string, string, error) {
	if l.DoNotContact {
		return "do_not_contact", "The lead is marked do-not-contact.", nil
	}
	hits, err := svc.catalog.BlacklistHits(ctx, l.WorkspaceID, []workspace.Person{l.Person()})
	if err != nil || hits[0] == "" {
		return "", "", err
	}
	return "blacklisted", "The lead matches the workspace blacklist entry " + hits[0] + ".", nil
}

// task opens a task for the lead, due at once, for the rule's assign
// member, else for the lead's owner (task.created). It belongs to the
// lead's enrollment in the sequence, as a task step's does, under the
// step id "rule:" and the rule's name.
func (svc *Service) task(ctx context.Context, r *run) (sequences.Outcome, error) {
	if reason, detail, err := svc.stopped(ctx, r.lead); err != nil || reason != "" {
		return refused(reason, detail), err
	}
	var assignee *string
	if r.rule.Assign != "" {
		id, no, err := svc.member(ctx, r)
		if err != nil || no != nil {
			return deref(no), err
		}
		assignee = &id
	}
	es, err := svc.enrollments.ForLead(ctx, r.q.WorkspaceID, r.lead.ID)
	if err != nil {
		return sequences.Outcome{}, err
	}
	i := slices.IndexFunc(es, func(e enrollments.Enrollment) bool { return e.ID == r.enrollmentID && e.SequenceID == r.q.ID })
	if i < 0 {
		i = slices.IndexFunc(es, func(e enrollments.Enrollment) bool { return e.SequenceID == r.q.ID })
	}
	if i < 0 {
		return refused("no_enrollment", "The lead has no enrollment in the sequence for the task to belong to."), nil
	}
	e := es[i]
	t, err := svc.tasks.Open(ctx, tasks.Task{WorkspaceID: e.WorkspaceID, ClientID: e.ClientID, LeadID: e.LeadID, EnrollmentID: e.ID,
		SequenceID: e.SequenceID, StepID: "rule:" + r.rec.Rule, StepStartedAt: r.now, Title: r.rule.Task, DueAt: r.now, AssigneeID: assignee})
	if err != nil {
		return sequences.Outcome{}, err
	}
	return done("", t.ID), nil
}

// enroll enrols the lead in the rule's sequence, now or after_days later.
func (svc *Service) enroll(ctx context.Context, r *run) (sequences.Outcome, error) {
	return svc.enrollIn(ctx, r, r.lead, r.rule.Enroll, r.rule.AfterDays)
}

// enrollIn enrols lead in the workspace's sequence named name through
// every check of a commit (do-not-contact, blacklist, the lead's client,
// a live enrollment, an earlier one in that sequence, what the sequence
// needs of the lead), within the rules' bound on moving a lead.
func (svc *Service) enrollIn(ctx context.Context, r *run, lead *leads.Lead, name string, afterDays int) (sequences.Outcome, error) {
	target, err := svc.sequences.ByName(ctx, r.q.WorkspaceID, name)
	if db.IsNoRows(err) {
		return refused("unknown_sequence", fmt.Sprintf("The workspace has no sequence named %q any more.", name)), nil
	} else if err != nil {
		return sequences.Outcome{}, err
	}
	es, err := svc.enrollments.ForLead(ctx, r.q.WorkspaceID, lead.ID)
	if err != nil {
		return sequences.Outcome{}, err
	}
	moves := 0
	for _, e := range es {
		if e.RuleOf == nil {
			continue
		}
		moves++
		if *e.RuleOf == target.ID {
			return refused("moved_out_before", fmt.Sprintf("A rule moved the lead out of sequence %q before; rules never move a lead back.", name)), nil
		}
	}
	if moves >= MaxMoves {
		return refused("moved_too_often", fmt.Sprintf("Rules have enrolled the lead %d times; they enrol a lead at most %d times.", moves, MaxMoves)), nil
	}
	// The reply's reply-stop, held back for the transaction's batch, is
	// written first: the enrolment must find the ended enrollments ended.
	if err := svc.enrollments.FlushReplyStops(ctx); err != nil {
		return sequences.Outcome{}, err
	}
	opt := enrollments.CommitOptions{RuleOf: r.q.ID}
	if afterDays > 0 {
		opt.StartAt = r.now.Add(time.Duration(afterDays) * 24 * time.Hour)
	}
	res, err := svc.enrollments.CommitWith(ctx, r.p, enrollments.EnrollInput{SequenceID: target.ID, LeadIDs: []string{lead.ID}, Confirm: true}, opt)
	if err != nil {
		o, err := refusedBy(err)
		if o.Reason == apikit.EGraphInvalid {
			o.Reason = "sequence_invalid"
		}
		return o, err
	}
	if res.Enrolled == 0 {
		if len(res.Excluded) > 0 {
			return refused(res.Excluded[0].Reason, res.Excluded[0].Detail), nil
		}
		return refused("not_enrolled", "The enrolment enrolled nobody."), nil
	}
	detail := ""
	if !opt.StartAt.IsZero() {
		detail = "Starts " + opt.StartAt.UTC().Format(time.RFC3339) + "."
	}
	if target.Status != sequences.Active {
		detail = fmt.Sprintf("%s The sequence is %s: the enrollment waits until it is activated.", detail, target.Status)
	}
	return done(strings.TrimSpace(detail), res.EnrollmentIDs[0]), nil
}

func deref(o *sequences.Outcome) sequences.Outcome {
	if o == nil {
		return sequences.Outcome{}
	}
	return *o
}
