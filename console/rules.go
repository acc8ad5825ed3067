package console

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/sequences"
)

// The builder's rules: what each reply intent, and a booked meeting, do
// to the lead beyond stopping its enrollments (docs/SEQUENCES.md, Replies
// that move leads on). They are part of the builder's form, saved with
// the steps through sequences.Service.Apply, so that the same checks
// refuse the same rules as `leadline apply` does.

// ruleForm is one rule as the builder shows it: the intent (or
// meeting_booked) and its fields as typed.
type ruleForm struct {
	Key, Label                              string
	Stage, Tag, Assign, Task, Enroll, After string
	Replacement                             string
	// Replaces: the rule may enrol the person a reply names instead
	// (wrong_person).
	Replaces bool
}

// ruleChoices are what the rules' selects offer: the workspace's stages
// and tags, its active members' emails and the sequences the member
// sees, by name.
type ruleChoices struct {
	Stages, Tags, Members, Sequences []string
}

// ruleKeys are the rules the builder offers, in its order: each reply
// intent, then a booked meeting.
var ruleKeys = append(slices.Clone(sequences.ReplyIntents), sequences.MeetingBooked)

// ruleLabels say what each rule answers.
var ruleLabels = map[string]string{
	"interested": "An interested reply", "question": "A question", "not_now": "Not now", "not_interested": "Not interested",
	"ooo": "Out of office", "wrong_person": "Wrong person", "unclear": "Unclear", sequences.MeetingBooked: "A meeting booked",
}

// newRuleForm is the form of rule key holding r.
func newRuleForm(key string, r sequences.Rule) ruleForm {
	f := ruleForm{Key: key, Label: ruleLabels[key], Stage: r.Stage, Tag: r.Tag, Assign: r.Assign, Task: r.Task, Enroll: r.Enroll,
		Replacement: r.EnrollReplacement, Replaces: key == sequences.WrongPerson}
	if r.AfterDays != 0 {
		f.After = strconv.Itoa(r.AfterDays)
	}
	return f
}

// rulesOf are the builder's rules of a stored sequence.
func rulesOf(q *sequences.Sequence) []ruleForm {
	out := make([]ruleForm, 0, len(ruleKeys))
	for _, key := range ruleKeys {
		r, _ := q.RuleFor(key)
		out = append(out, newRuleForm(key, r))
	}
	return out
}

// readRules reads the builder's rules as posted (r.<key>.<field>).
func readRules(f url.Values) []ruleForm {
	out := make([]ruleForm, 0, len(ruleKeys))
	for _, key := range ruleKeys {
		get := func(field string) string { return strings.TrimSpace(f.Get("r." + key + "." + field)) }
		rf := newRuleForm(key, sequences.Rule{Stage: get("stage"), Tag: get("tag"), Assign: get("assign"), Task: get("task"),
			Enroll: get("enroll"), EnrollReplacement: get("enroll_replacement")})
		rf.After = get("after_days")
		out = append(out, rf)
	}
	return out
}

// specRules are the rules of the form as a Spec holds them, or an error
// naming an after_days that is not a whole number. A rule left empty is
// no rule.
func specRules(rs []ruleForm) (map[string]sequences.Rule, *sequences.Rule, error) {
	onReply := map[string]sequences.Rule{}
	var booked *sequences.Rule
	for _, rf := range rs {
		r := sequences.Rule{Stage: rf.Stage, Tag: rf.Tag, Assign: rf.Assign, Task: rf.Task, Enroll: rf.Enroll, EnrollReplacement: rf.Replacement}
		if rf.After != "" {
			n, err := strconv.Atoi(rf.After)
			if err != nil {
				return nil, nil, apikit.Invalid(fmt.Sprintf("%s: after days %q is not a whole number.", rf.Label, rf.After),
					fmt.Sprintf("Type 0 to %d days, or leave it empty.", sequences.MaxAfterDays))
			}
			r.AfterDays = n
		}
		if r == (sequences.Rule{}) {
			continue
		}
		if rf.Key == sequences.MeetingBooked {
			booked = &r
		} else {
			onReply[rf.Key] = r
		}
	}
	return onReply, booked, nil
}

// ruleChoices reads what the rules' selects offer the member.
func (c *Console) ruleChoices(rq *Request) (*ruleChoices, error) {
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	rc := &ruleChoices{}
	for _, n := range cat.Stages {
		rc.Stages = append(rc.Stages, n.Name)
	}
	for _, n := range cat.Tags {
		rc.Tags = append(rc.Tags, n.Name)
	}
	ms, err := c.pl.Workspaces.MemberList(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.Active {
			rc.Members = append(rc.Members, m.Email)
		}
	}
	qs, err := c.pl.Sequences.List(rq.Ctx, rq.P, sequences.Filter{Limit: apikit.MaxLimit})
	if err != nil {
		return nil, err
	}
	for _, q := range qs.Data {
		rc.Sequences = append(rc.Sequences, q.Name)
	}
	return rc, nil
}

// ruleRun is what a rule did on a thread, as its page shows it.
type ruleRun struct {
	sequences.RuleRun
	Sequence string
}

// ruleRuns names the runs' sequences.
func ruleRuns(runs []sequences.RuleRun, sequenceNames map[string]string) []ruleRun {
	out := make([]ruleRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, ruleRun{RuleRun: r, Sequence: sequenceNames[r.SequenceID]})
	}
	return out
}

// Summary is what the rule does, in words ("" for nothing).
func (rf ruleForm) Summary() string {
	var parts []string
	add := func(format, value string) {
		if value != "" {
			parts = append(parts, fmt.Sprintf(format, value))
		}
	}
	add("stage %s", rf.Stage)
	add("tag %s", rf.Tag)
	add("assign to %s", rf.Assign)
	add("task %q", rf.Task)
	if rf.Enroll != "" && rf.After != "" && rf.After != "0" {
		parts = append(parts, fmt.Sprintf("enrol in %s after %s days", rf.Enroll, rf.After))
	} else {
		add("enrol in %s", rf.Enroll)
	}
	add("enrol the person named instead in %s", rf.Replacement)
	return strings.Join(parts, "; ")
}

// HasRules reports whether any rule of the form does something.
func (bf builderForm) HasRules() bool {
	return slices.ContainsFunc(bf.Rules, func(rf ruleForm) bool { return rf.Summary() != "" })
}
