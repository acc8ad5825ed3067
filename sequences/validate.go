package sequences

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/leadline/leadline/senders"
)

// setFields returns the type-specific fields s sets.
func (s Step) setFields() []string {
	var out []string
	add := func(name string, set bool) {
		if set {
			out = append(out, name)
		}
	}
	add("note", s.Note != "")
	add("note_fallback", s.NoteFallback != "")
	add("subject", s.Subject != "")
	add("body", s.Body != "")
	add("days", s.Days != 0)
	add("hours", s.Hours != 0)
	add("working_days", s.WorkingDays)
	add("if", s.If != "")
	add("within_days", s.WithinDays != 0)
	add("then", s.Then != "")
	add("else", s.Else != "")
	add("payload", s.Payload != nil)
	add("title", s.Title != "")
	add("due_in_days", s.DueInDays != 0)
	add("variants", len(s.Variants) > 0)
	add("pick_winner", s.PickWinner != nil)
	return out
}

// targets returns the step ids s may go to next, given the default next.
func (s Step) targets(def string) []string {
	if s.Type == TypeCondition {
		return []string{s.Then, s.Else}
	}
	if s.Next != "" {
		return []string{s.Next}
	}
	return []string{def}
}

// Validate returns every problem of q's graph, given the channels of its
// senders; none means it can run.
func Validate(q *Sequence, channels []senders.Channel) []Problem {
	var out []Problem
	add := func(code, step, format string, args ...any) {
		out = append(out, Problem{Code: code, StepID: step, Message: fmt.Sprintf(format, args...)})
	}
	if len(q.Steps) == 0 {
		add("no_steps", "", "The sequence has no steps.")
		return out
	}
	ids := map[string]int{}
	for i, s := range q.Steps {
		switch {
		case s.ID == "":
			add("missing_id", "", "Step %d has no id.", i+1)
		case s.ID == End:
			add("reserved_id", s.ID, "The id %q is reserved: next, then and else use it to end the sequence.", End)
		default:
			if _, dup := ids[s.ID]; dup {
				add("duplicate_id", s.ID, "Two steps have the id %q.", s.ID)
			} else {
				ids[s.ID] = i
			}
		}
	}
	hasChannel := func(c senders.Channel) bool { return slices.Contains(channels, c) }
	for i, s := range q.Steps {
		spec, known := SpecOf(s.Type)
		if !known {
			add("unknown_type", s.ID, "Step %q has unknown type %q; use %s.", s.ID, s.Type, senders.Listing(StepTypes()))
			continue
		}
		for _, f := range s.setFields() {
			if !slices.Contains(spec.Fields, f) {
				add("unknown_field", s.ID, "Step %q: %s is not a field of a %s step.", s.ID, f, s.Type)
			}
		}
		if s.Type == TypeCondition && s.Next != "" {
			add("unknown_field", s.ID, "Step %q: a condition goes on with then and else, not next.", s.ID)
		}
		def := End
		if i+1 < len(q.Steps) {
			def = q.Steps[i+1].ID
		}
		for _, t := range s.targets(def) {
			if t == "" {
				add("missing_field", s.ID, "Condition %q needs both then and else (a step id, or %s).", s.ID, End)
				continue
			}
			if _, ok := ids[t]; !ok && t != End {
				add("dangling_target", s.ID, "Step %q goes to %q, which is not a step of the sequence.", s.ID, t)
			}
		}
		if len(s.Variants) > 0 || s.PickWinner != nil {
			// The texts are the variants' (a type that takes none was
			// told so above).
			if slices.Contains(spec.Fields, "variants") {
				out = append(out, variantProblems(s, spec, q.Steps[:i])...)
			}
		} else {
			var missing []string
			for _, f := range spec.Required {
				if s.Text(f) == "" && !(f == "subject" && s.Type == TypeEmail && followsEmail(q.Steps[:i])) {
					missing = append(missing, "a "+f)
				}
			}
			if len(missing) > 0 {
				add("missing_field", s.ID, "Step %q: %s %s step needs %s.", s.ID, article(s.Type), s.Type, senders.Listing(missing))
			}
			for _, f := range spec.Templates {
				if err := checkTemplate(s.Text(f)); err != nil {
					add("template_error", s.ID, "Step %q, %s: %v.", s.ID, f, err)
				}
			}
		}
		switch s.Type {
		case TypeInvite:
			if n := utf8.RuneCountInString(s.Note); n > MaxNoteLength {
				add("note_too_long", s.ID, "Step %q: the note has %d characters; LinkedIn takes at most %d.", s.ID, n, MaxNoteLength)
			}
			if s.NoteFallback != "" && s.NoteFallback != NoteFallbackWithoutNote && s.NoteFallback != "wait" {
				add("bad_value", s.ID, "Step %q: note_fallback is without_note or wait, not %q.", s.ID, s.NoteFallback)
			}
		case TypeWait:
			if s.Days < 0 || s.Hours < 0 || s.Days+s.Hours == 0 {
				add("bad_value", s.ID, "Step %q: a wait needs days or hours above 0.", s.ID)
			}
		case TypeCondition:
			switch s.If {
			case IfConnected, IfHasEmail, IfHasLinkedIn:
				if s.WithinDays != 0 {
					add("unknown_field", s.ID, "Step %q: within_days applies only to if: invite_accepted.", s.ID)
				}
			case IfInviteAccepted:
				if s.WithinDays <= 0 {
					add("bad_value", s.ID, "Step %q: invite_accepted needs within_days above 0: how long to wait for the acceptance.", s.ID)
				}
			default:
				add("unknown_condition", s.ID, "Step %q: if %q is not connected, invite_accepted, has_email or has_linkedin.", s.ID, s.If)
			}
		case TypeTask:
			if s.DueInDays < 0 {
				add("bad_value", s.ID, "Step %q: due_in_days must be 0 or more.", s.ID)
			}
		}
		if c := s.Channel(); c != "" && !hasChannel(c) {
			code := "no_linkedin_sender"
			if c == senders.Email {
				code = "no_email_sender"
			}
			add(code, s.ID, "Step %q needs a %s sender, and the sequence has none.", s.ID, c)
		}
	}
	if len(out) > 0 {
		// The graph checks below need every step and target known.
		return out
	}
	out = append(out, graphProblems(q)...)
	return out
}

// guarded reports for each step whether every path to it from the first
// step passed the then-branch of a condition whose kind is one of conds
// (a must-analysis, iterated to its fixpoint).
func guarded(q *Sequence, succ [][]int, seen []bool, conds ...string) []bool {
	n := len(q.Steps)
	out := make([]bool, n)
	for i := range out {
		out[i] = i != 0
	}
	for changed := true; changed; {
		changed = false
		in := make([]bool, n)
		for i := range in {
			in[i] = i != 0
		}
		for i, s := range q.Steps {
			if !seen[i] {
				continue
			}
			for k, j := range succ[i] {
				v := out[i]
				if s.Type == TypeCondition && k == 0 && slices.Contains(conds, s.If) && q.Steps[j].ID == s.Then {
					v = true
				}
				in[j] = in[j] && v
			}
		}
		for i := range in {
			if seen[i] && in[i] != out[i] {
				out[i], changed = in[i], true
			}
		}
	}
	return out
}

// edges returns each step's successors (by index) and which steps can be
// reached from the first. Targets that are not steps (end, or unknown) are
// left out.
func edges(q *Sequence) (succ [][]int, seen []bool) {
	n := len(q.Steps)
	index := map[string]int{}
	for i, s := range q.Steps {
		index[s.ID] = i
	}
	succ = make([][]int, n)
	for i, s := range q.Steps {
		def := End
		if i+1 < n {
			def = q.Steps[i+1].ID
		}
		for _, t := range s.targets(def) {
			if j, ok := index[t]; ok {
				succ[i] = append(succ[i], j)
			}
		}
	}
	seen = make([]bool, n)
	if n == 0 {
		return succ, seen
	}
	stack := []int{0}
	seen[0] = true
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, j := range succ[i] {
			if !seen[j] {
				seen[j] = true
				stack = append(stack, j)
			}
		}
	}
	return succ, seen
}

// Needs reports which of a lead's ways of being reached q needs: LinkedIn
// when a LinkedIn step can be reached without passing a has_linkedin check,
// email when an email step can be reached without a has_email check.
func Needs(q *Sequence) (linkedin, email bool) {
	succ, seen := edges(q)
	hasLI := guarded(q, succ, seen, IfHasLinkedIn)
	hasEmail := guarded(q, succ, seen, IfHasEmail)
	for i, s := range q.Steps {
		if !seen[i] {
			continue
		}
		switch s.Channel() {
		case senders.LinkedIn:
			linkedin = linkedin || !hasLI[i]
		case senders.Email:
			email = email || !hasEmail[i]
		}
	}
	return linkedin, email
}

// graphProblems finds unreachable steps, loops without a wait and LinkedIn
// messages that can be reached without a connection.
func graphProblems(q *Sequence) []Problem {
	var out []Problem
	n := len(q.Steps)
	succ, seen := edges(q)
	for i, s := range q.Steps {
		if !seen[i] {
			out = append(out, Problem{Code: "unreachable", StepID: s.ID, Message: fmt.Sprintf("Step %q can never be reached from the first step.", s.ID)})
		}
	}
	// A loop must pass a wait, or the runner would spin through it at once.
	state := make([]int, n) // 0 new, 1 on the path, 2 done
	var visit func(i int) bool
	visit = func(i int) bool {
		state[i] = 1
		for _, j := range succ[i] {
			if q.Steps[j].Type == TypeWait {
				continue
			}
			if state[j] == 1 || (state[j] == 0 && visit(j)) {
				return true
			}
		}
		state[i] = 2
		return false
	}
	for i, s := range q.Steps {
		if s.Type != TypeWait && state[i] == 0 && visit(i) {
			out = append(out, Problem{Code: "loop_without_wait", StepID: s.ID, Message: fmt.Sprintf("Step %q is on a loop that has no wait step; add a wait to the loop.", s.ID)})
			break
		}
	}
	connected := guarded(q, succ, seen, IfConnected, IfInviteAccepted)
	for i, s := range q.Steps {
		if seen[i] && s.Type == TypeMessage && !connected[i] {
			out = append(out, Problem{Code: "message_needs_connection", StepID: s.ID,
				Message: fmt.Sprintf("Message %q can be reached without an accepted invitation; LinkedIn lets you message only connections. Put it on the then-branch of an invite_accepted or connected condition, or use an inmail.", s.ID)})
		}
	}
	return out
}

// article is "a" or "an" before word.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// Unsupported returns a problem for each step whose action a sender of
// the sequence, on its step's channel, cannot perform on its transport
// (senders.TransportKind.Actions): the runner may pick any of them, so
// every one must be able to.
func Unsupported(q *Sequence, ss []senders.Sender) []Problem {
	var out []Problem
	for _, st := range q.Steps {
		a, ok := st.Action()
		if !ok {
			continue
		}
		for _, s := range ss {
			kind, known := senders.KindOf(s.Transport)
			if s.Channel != a.Channel() || !known || kind.Can(a) {
				continue
			}
			out = append(out, Problem{Code: "unsupported_action", StepID: st.ID, Message: fmt.Sprintf(
				"Step %q is a %s, which sender %q cannot perform on its %s transport; remove the step, or take the sender out of the sequence (its senders list).",
				st.ID, a, s.Name, s.Transport)})
		}
	}
	return out
}

// followsEmail reports whether an email step comes before: an email step
// without a subject of its own follows up in its thread, as "Re: " and the
// first email's subject.
func followsEmail(before []Step) bool {
	return slices.ContainsFunc(before, func(s Step) bool {
		return s.Type == TypeEmail && (s.Subject != "" || slices.ContainsFunc(s.Variants, func(v Variant) bool { return v.Subject != "" }))
	})
}
