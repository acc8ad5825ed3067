package sequences

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Variant is one of a step's texts under test: an action step that sends
// a text (an invitation's note, a message, an InMail or an email) may take
// 2 to 5 of them instead of one text. Each enrollment gets one, chosen
// once by weight (Step.Choose).
type Variant struct {
	ID      string `json:"id" yaml:"id" doc:"Unique in the step (letters, digits, - and _). Editing a variant's text on a paused sequence gives it a new id (the id, a dot and a revision: a.2), so its numbers start afresh."`
	Weight  int    `json:"weight,omitempty" yaml:"weight" doc:"The variant's share of the traffic against the others' weights; 1 when left out."`
	Note    string `json:"note,omitempty" yaml:"note" text:"multiline" doc:"invite: the note, a template."`
	Subject string `json:"subject,omitempty" yaml:"subject" doc:"inmail and email: the subject, a template."`
	Body    string `json:"body,omitempty" yaml:"body" text:"multiline" doc:"message, inmail and email: the text, a template."`
}

// PickWinner makes leadline pick a step's best variant by evidence: once
// every variant was sent min_sends times, the variant whose posterior
// probability of being the best on the metric reaches confidence wins.
type PickWinner struct {
	Metric     string  `json:"metric" yaml:"metric" enum:"reply_rate,positive_reply_rate,acceptance_rate,meeting_rate" doc:"What the variants are compared on; acceptance_rate only for an invite step."`
	MinSends   int     `json:"min_sends" yaml:"min_sends" doc:"Sends every variant needs before a winner can be picked (1 to 1,000,000)."`
	Confidence float64 `json:"confidence" yaml:"confidence" doc:"The probability of being the best a variant needs to win, above 0.5 and below 1 (0.95 is usual)."`
}

// The metrics a test compares variants on.
const (
	MetricReplyRate         = "reply_rate"
	MetricPositiveReplyRate = "positive_reply_rate"
	MetricAcceptanceRate    = "acceptance_rate"
	MetricMeetingRate       = "meeting_rate"
)

// Metrics are the metrics of pick_winner, in the order messages list them.
var Metrics = []string{MetricReplyRate, MetricPositiveReplyRate, MetricAcceptanceRate, MetricMeetingRate}

// How a winner was picked.
const (
	ByEvidence = "evidence"
	ByManager  = "manual"
)

// Winner is the variant a step sends to every enrollment that reaches it
// from the pick on, with why it won.
type Winner struct {
	VariantID   string          `json:"variant_id"`
	By          string          `json:"by" enum:"evidence,manual" doc:"evidence: its probability of being the best reached the step's confidence; manual: a manager picked it."`
	Metric      string          `json:"metric,omitempty" doc:"evidence: the metric compared."`
	Probability float64         `json:"probability,omitempty" doc:"evidence: the winner's posterior probability of being the best."`
	Counts      []VariantCounts `json:"counts,omitempty" doc:"The variants' numbers when the pick was made."`
	MemberID    string          `json:"member_id,omitempty" format:"uuid" doc:"manual: the manager who picked it."`
	At          time.Time       `json:"at"`
	UndoneAt    *time.Time      `json:"undone_at,omitempty" doc:"Set when a manager undid the pick: the step splits its traffic by weight again, and evidence picks no winner for it until its variants change."`
}

// Active reports whether w is a winner that steers the step's traffic.
func (w *Winner) Active() bool { return w != nil && w.VariantID != "" && w.UndoneAt == nil }

// VariantCounts are one variant's numbers: the enrollments it was sent to
// and, of those, how many accepted the invitation, replied, replied
// interested or with a question, and booked a meeting.
type VariantCounts struct {
	VariantID string `json:"variant_id"`
	Sent      int    `json:"sent"`
	Accepted  int    `json:"accepted"`
	Replied   int    `json:"replied"`
	Positive  int    `json:"positive_replies"`
	Meetings  int    `json:"meetings"`
}

// Successes are the counts' successes on metric.
func (c VariantCounts) Successes(metric string) int {
	switch metric {
	case MetricPositiveReplyRate:
		return c.Positive
	case MetricAcceptanceRate:
		return c.Accepted
	case MetricMeetingRate:
		return c.Meetings
	}
	return c.Replied
}

// variantID is a variant's id as written (letters, digits, - and _) with
// an optional revision leadline adds when its text changes (.2, .3, …).
var variantID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}(\.[0-9]{1,6})?$`)

// Variant limits.
const (
	MinVariants = 2
	MaxVariants = 5
	MaxWeight   = 100
)

// weight is v's weight, 1 when left out.
func (v Variant) weight() int {
	if v.Weight == 0 {
		return 1
	}
	return v.Weight
}

// Text returns the value of one of a variant's template fields.
func (v Variant) Text(field string) string {
	return Step{Note: v.Note, Subject: v.Subject, Body: v.Body}.Text(field)
}

// VariantByID returns the step's variant with id, and false for none.
func (s Step) VariantByID(id string) (Variant, bool) {
	i := slices.IndexFunc(s.Variants, func(v Variant) bool { return v.ID == id })
	if i < 0 {
		return Variant{}, false
	}
	return s.Variants[i], true
}

// Choose returns the id of the variant the enrollment with id
// enrollmentID gets at the step: the winner when w is one that steers
// the step, otherwise one chosen by weight from a hash of the enrollment
// and the step, so that a retry, a recovery and any replica choose the
// same. "" for a step without variants.
func (s Step) Choose(enrollmentID string, w *Winner) string {
	if len(s.Variants) == 0 {
		return ""
	}
	if w.Active() {
		if _, ok := s.VariantByID(w.VariantID); ok {
			return w.VariantID
		}
	}
	total := 0
	for _, v := range s.Variants {
		total += v.weight()
	}
	h := fnv.New64a()
	h.Write([]byte(enrollmentID + "\x00" + s.ID))
	n := int(h.Sum64() % uint64(total))
	for _, v := range s.Variants {
		if n < v.weight() {
			return v.ID
		}
		n -= v.weight()
	}
	return s.Variants[len(s.Variants)-1].ID
}

// WithVariant returns the step as it is sent with the variant with id:
// the variant's texts in the step's. The step is returned unchanged for
// "" or an id it does not have.
func (s Step) WithVariant(id string) Step {
	v, ok := s.VariantByID(id)
	if !ok {
		return s
	}
	s.Note, s.Subject, s.Body = v.Note, v.Subject, v.Body
	s.Variants, s.PickWinner = nil, nil
	return s
}

// variantProblems are the problems of a step's variants and pick_winner;
// before are the steps listed before it (an email variant without a
// subject follows up an earlier email).
func variantProblems(s Step, spec StepSpec, before []Step) []Problem {
	var out []Problem
	add := func(code, format string, args ...any) {
		out = append(out, Problem{Code: code, StepID: s.ID, Message: fmt.Sprintf(format, args...)})
	}
	if len(s.Variants) == 0 {
		if s.PickWinner != nil {
			add("bad_value", "Step %q: pick_winner needs variants to pick from.", s.ID)
		}
		return out
	}
	if n := len(s.Variants); n < MinVariants || n > MaxVariants {
		add("bad_value", "Step %q has %d variant(s); a test takes %d to %d.", s.ID, n, MinVariants, MaxVariants)
	}
	for _, f := range spec.Templates {
		if s.Text(f) != "" {
			add("unknown_field", "Step %q: with variants, each variant has its own %s; take it off the step.", s.ID, f)
		}
	}
	seen := map[string]bool{}
	for i, v := range s.Variants {
		name := fmt.Sprintf("variant %q", v.ID)
		switch {
		case v.ID == "":
			add("missing_id", "Step %q: variant %d has no id.", s.ID, i+1)
			name = fmt.Sprintf("variant %d", i+1)
		case !variantID.MatchString(v.ID):
			add("bad_value", "Step %q: variant id %q may hold only letters, digits, - and _ (at most 40).", s.ID, v.ID)
		case seen[v.ID]:
			add("duplicate_id", "Step %q: two variants have the id %q.", s.ID, v.ID)
		}
		seen[v.ID] = true
		if v.Weight < 0 || v.Weight > MaxWeight {
			add("bad_value", "Step %q, %s: weight is 1 to %d (1 when left out), not %d.", s.ID, name, MaxWeight, v.Weight)
		}
		for _, f := range []string{"note", "subject", "body"} {
			if v.Text(f) != "" && !slices.Contains(spec.Templates, f) {
				add("unknown_field", "Step %q, %s: %s is not a field of a %s step.", s.ID, name, f, s.Type)
			}
		}
		var missing []string
		for _, f := range spec.Required {
			if v.Text(f) == "" && !(f == "subject" && s.Type == TypeEmail && followsEmail(before)) {
				missing = append(missing, "a "+f)
			}
		}
		if len(missing) > 0 {
			add("missing_field", "Step %q, %s: %s %s step needs %s.", s.ID, name, article(s.Type), s.Type, strings.Join(missing, " and "))
		}
		for _, f := range spec.Templates {
			if err := checkTemplate(v.Text(f)); err != nil {
				add("template_error", "Step %q, %s, %s: %v.", s.ID, name, f, err)
			}
		}
		if n := utf8.RuneCountInString(v.Note); s.Type == TypeInvite && n > MaxNoteLength {
			add("note_too_long", "Step %q, %s: the note has %d characters; LinkedIn takes at most %d.", s.ID, name, n, MaxNoteLength)
		}
	}
	if pw := s.PickWinner; pw != nil {
		switch {
		case !slices.Contains(Metrics, pw.Metric):
			add("bad_value", "Step %q: pick_winner's metric is reply_rate, positive_reply_rate, acceptance_rate or meeting_rate, not %q.", s.ID, pw.Metric)
		case pw.Metric == MetricAcceptanceRate && s.Type != TypeInvite:
			add("bad_value", "Step %q: acceptance_rate compares invitations; a %s step is compared on reply_rate, positive_reply_rate or meeting_rate.", s.ID, s.Type)
		}
		if pw.MinSends < 1 || pw.MinSends > 1000000 {
			add("bad_value", "Step %q: pick_winner's min_sends is 1 to 1,000,000, not %d.", s.ID, pw.MinSends)
		}
		if !(pw.Confidence > 0.5 && pw.Confidence < 1) {
			add("bad_value", "Step %q: pick_winner's confidence is above 0.5 and below 1 (0.95 is usual), not %v.", s.ID, pw.Confidence)
		}
	}
	return out
}

// baseID is a variant id without the revision leadline added.
func baseID(id string) (string, int) {
	base, rev, ok := strings.Cut(id, ".")
	if !ok {
		return id, 1
	}
	n, err := strconv.Atoi(rev)
	if err != nil {
		return id, 1
	}
	return base, n
}

// carryVariants gives the variants of steps, as a setup file or the
// builder writes them, the ids they have in old, the stored steps: a
// variant keeps its id while its texts stay the same. When renew is set
// (a sequence that ran), a variant whose texts changed gets a new
// revision of its id, so that its numbers start afresh and the evidence
// of two texts is never mixed.
func carryVariants(old, steps []Step, renew bool) []Step {
	out := slices.Clone(steps)
	for i, s := range out {
		if len(s.Variants) == 0 {
			continue
		}
		prev, _ := (&Sequence{Steps: old}).StepByID(s.ID)
		vs := slices.Clone(s.Variants)
		for j, v := range vs {
			base, _ := baseID(v.ID)
			k := slices.IndexFunc(prev.Variants, func(o Variant) bool { b, _ := baseID(o.ID); return b == base })
			if k < 0 {
				continue
			}
			o := prev.Variants[k]
			switch {
			case o.Note == v.Note && o.Subject == v.Subject && o.Body == v.Body:
				vs[j].ID = o.ID
			case renew:
				_, rev := baseID(o.ID)
				vs[j].ID = base + "." + strconv.Itoa(rev+1)
			default:
				vs[j].ID = o.ID
			}
		}
		out[i].Variants = vs
	}
	return out
}

// keptWinners are the winners of old that still hold for steps: a pick
// (or its undoing) stays while its step's variants are the same ones.
func keptWinners(winners map[string]Winner, old, steps []Step) map[string]Winner {
	out := map[string]Winner{}
	for id, w := range winners {
		was, _ := (&Sequence{Steps: old}).StepByID(id)
		now, ok := (&Sequence{Steps: steps}).StepByID(id)
		if !ok || !slices.Equal(variantIDs(was), variantIDs(now)) {
			continue
		}
		out[id] = w
	}
	return out
}

func variantIDs(s Step) []string {
	out := make([]string, 0, len(s.Variants))
	for _, v := range s.Variants {
		out = append(out, v.ID)
	}
	return out
}
