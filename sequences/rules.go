package sequences

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/workspace"
)

// Replies that move leads on: a sequence declares what each reply intent
// does beyond reply-stop (OnReply) and what a booked meeting does
// (OnMeetingBooked). This file holds the rules' shape and their checks at
// save time; the rules package runs them (docs/SEQUENCES.md).

// ReplyIntents are the intents the inbox reads a reply as, the keys of
// OnReply (the inbox's Intents, in its order).
var ReplyIntents = []string{"interested", "question", "not_now", "not_interested", "ooo", "wrong_person", "unclear"}

// WrongPerson is the intent whose rule may enrol the person the reply
// names instead of the lead (EnrollReplacement).
const WrongPerson = "wrong_person"

// MeetingBooked names the rule of a booked meeting where a rule's intent
// is named (a run's Rule, an event's rule).
const MeetingBooked = "meeting_booked"

// MaxAfterDays bounds a rule's after_days.
const MaxAfterDays = 365

// Rule is what a sequence does, beyond reply-stop, when a lead replies
// with one intent or books a meeting. Each field is optional; a rule sets
// at least one.
type Rule struct {
	Stage             string `json:"stage,omitempty" yaml:"stage" doc:"A stage of the workspace's pipeline (by name) the lead moves to."`
	Tag               string `json:"tag,omitempty" yaml:"tag" doc:"A tag of the workspace (by name) the lead gets."`
	Assign            string `json:"assign,omitempty" yaml:"assign" doc:"A member's email: the lead's conversation (the reply's thread; for a meeting the lead's latest thread) is assigned to that member, who owns the lead from then on."`
	Task              string `json:"task,omitempty" yaml:"task" doc:"The title of a task opened for the lead, due at once, for the member of assign, else for the lead's owner (the thread's assignee, else the member who enrolled the lead)."`
	Enroll            string `json:"enroll,omitempty" yaml:"enroll" doc:"A sequence of the workspace (by name, not this one) the lead is enrolled in, through every check of an enrolment."`
	AfterDays         int    `json:"after_days,omitempty" yaml:"after_days" doc:"With enroll: the enrolment starts that many days later (0 to 365); until then it waits (starts_later)."`
	EnrollReplacement string `json:"enroll_replacement,omitempty" yaml:"enroll_replacement" doc:"wrong_person only: a sequence (by name) the person the reply names instead of the lead is enrolled in, as a lead of the lead's company and client, matched by email or LinkedIn profile or created."`
}

// empty reports whether the rule does nothing.
func (r Rule) empty() bool { return r == Rule{} }

// RuleFor returns q's rule for a reply read as intent, or for a booked
// meeting when intent is MeetingBooked; false when q has none.
func (q *Sequence) RuleFor(intent string) (Rule, bool) {
	if intent == MeetingBooked {
		if q.OnMeetingBooked == nil || q.OnMeetingBooked.empty() {
			return Rule{}, false
		}
		return *q.OnMeetingBooked, true
	}
	r, ok := q.OnReply[intent]
	return r, ok && !r.empty()
}

// Catalog is what the sequences area needs of the workspace area to check
// a sequence's rules.
//
// Both methods return only the database's errors.
type Catalog interface {
	// NamedByName returns the workspace's entries of kind among names; a
	// name it does not have is left out.
	NamedByName(ctx context.Context, workspaceID string, kind workspace.Kind, names []string) ([]workspace.Named, error)
	// ActiveMemberID returns the id of the workspace's active member with
	// email, or "" for none.
	ActiveMemberID(ctx context.Context, workspaceID, email string) (string, error)
}

// checkRules checks q's rules against the workspace as it is in the
// transaction ctx carries (its stages, tags, members and sequences, those
// of the same setup file included): E_PAYLOAD_INVALID naming the first
// problem, with its remedy.
func (svc *Service) checkRules(ctx context.Context, q *Sequence) error {
	intents := make([]string, 0, len(q.OnReply))
	for intent := range q.OnReply {
		intents = append(intents, intent)
	}
	slices.Sort(intents)
	for _, intent := range intents {
		where := "on_reply " + intent
		if !slices.Contains(ReplyIntents, intent) {
			return ruleInvalid(q, where, fmt.Sprintf("%q is not a reply intent", intent),
				"Use one of the inbox's intents: "+strings.Join(ReplyIntents, ", ")+".")
		}
		if err := svc.checkRule(ctx, q, where, q.OnReply[intent], intent == WrongPerson); err != nil {
			return err
		}
	}
	if q.OnMeetingBooked != nil {
		return svc.checkRule(ctx, q, "on_meeting_booked", *q.OnMeetingBooked, false)
	}
	return nil
}

// checkRule checks one rule; replacement: the rule may name
// enroll_replacement.
func (svc *Service) checkRule(ctx context.Context, q *Sequence, where string, r Rule, replacement bool) error {
	if r.empty() {
		return ruleInvalid(q, where, "the rule does nothing", "Give it at least one of stage, tag, assign, task, enroll, or remove it.")
	}
	if svc.catalog == nil {
		return fmt.Errorf("sequences: rules need a catalog to be checked")
	}
	for _, named := range []struct {
		kind  workspace.Kind
		field string
		name  string
	}{{workspace.Stages, "stage", r.Stage}, {workspace.Tags, "tag", r.Tag}} {
		if named.name == "" {
			continue
		}
		found, err := svc.catalog.NamedByName(ctx, q.WorkspaceID, named.kind, []string{named.name})
		if err != nil {
			return err
		}
		if len(found) == 0 {
			return ruleInvalid(q, where, fmt.Sprintf("%s %q is not a %s of the workspace", named.field, named.name, named.field),
				fmt.Sprintf("Use one of the workspace's %s (GET /v1/me lists them), or add it under %s in the setup file.", named.kind, named.kind))
		}
	}
	if r.Assign != "" {
		id, err := svc.catalog.ActiveMemberID(ctx, q.WorkspaceID, r.Assign)
		if err != nil {
			return err
		}
		if id == "" {
			return ruleInvalid(q, where, fmt.Sprintf("assign %q is not the email of an active member of the workspace", r.Assign),
				"Name a member's email, as the setup file's members list it.")
		}
	}
	if r.AfterDays < 0 || r.AfterDays > MaxAfterDays {
		return ruleInvalid(q, where, fmt.Sprintf("after_days %d is out of range", r.AfterDays), fmt.Sprintf("Use 0 to %d days.", MaxAfterDays))
	}
	if r.AfterDays != 0 && r.Enroll == "" {
		return ruleInvalid(q, where, "after_days applies only with enroll", "Name the sequence to enrol the lead in (enroll), or remove after_days.")
	}
	if r.Enroll != "" {
		if r.Enroll == q.Name {
			return ruleInvalid(q, where, "enroll names the sequence itself: a lead is never enrolled twice in one sequence",
				"Name another sequence, or remove enroll.")
		}
		if err := svc.checkTarget(ctx, q, where, "enroll", r.Enroll); err != nil {
			return err
		}
	}
	if r.EnrollReplacement != "" {
		if !replacement {
			return ruleInvalid(q, where, "enroll_replacement applies only to on_reply wrong_person",
				"Move it to the wrong_person rule, or remove it.")
		}
		if err := svc.checkTarget(ctx, q, where, "enroll_replacement", r.EnrollReplacement); err != nil {
			return err
		}
	}
	return nil
}

// checkTarget checks a sequence a rule enrols into: one of the workspace,
// usable by the leads of q's client.
func (svc *Service) checkTarget(ctx context.Context, q *Sequence, where, field, name string) error {
	t, err := svc.store.ByName(ctx, q.WorkspaceID, name)
	if db.IsNoRows(err) {
		return ruleInvalid(q, where, fmt.Sprintf("%s %q is not a sequence of the workspace", field, name),
			"Name a sequence of the workspace (it may be listed in the same setup file).")
	} else if err != nil {
		return err
	}
	if q.ClientID != nil && t.ClientID != nil && *q.ClientID != *t.ClientID {
		return ruleInvalid(q, where, fmt.Sprintf("%s %q works for another client than this sequence, so none of its leads could be enrolled", field, name),
			"Name a sequence of the same client, or one of the whole workspace (no client).")
	}
	return nil
}

// ruleInvalid is the E_PAYLOAD_INVALID error of a rule's problem.
func ruleInvalid(q *Sequence, where, problem, remedy string) error {
	return apikit.Invalid(fmt.Sprintf("Sequence %q, %s: %s.", q.Name, where, problem), remedy)
}

// sameRules compares two sequences' rules as they are stored.
func sameRules(a, b *Sequence) bool {
	return sameJSON(a.OnReply, b.OnReply) && sameJSON(a.OnMeetingBooked, b.OnMeetingBooked)
}
