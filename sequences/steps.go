package sequences

import (
	"slices"

	"github.com/leadline/leadline/senders"
)

// StepSpec declares one step type, once: validation, the runner, setup
// files, the API's enums and rendering read it from Steps. A step that
// performs an action is declared by its action (senders.Specs), so adding
// an action step is one entry there plus the transports that perform it.
type StepSpec struct {
	Type string
	// Action is the capped action the step performs; "" for a step that
	// sends nothing (wait, condition, webhook, task).
	Action senders.Action
	// Fields are the type-specific fields a step of the type may set (id,
	// type and next always may).
	Fields []string
	// Required are the fields that must not be empty.
	Required []string
	// Templates are the fields rendered with the lead's variables.
	Templates []string
}

// Steps are every step type: one per capped action, in senders.Specs'
// order, then the steps that send nothing.
var Steps = stepSpecs()

func stepSpecs() []StepSpec {
	var out []StepSpec
	for _, a := range senders.Specs {
		fields := slices.Concat(a.Fields, a.Options)
		if len(a.Fields) > 0 {
			// A step that sends a text can test several.
			fields = append(fields, "variants", "pick_winner")
		}
		out = append(out, StepSpec{Type: string(a.Action), Action: a.Action, Fields: fields,
			Required: a.Required, Templates: a.Fields})
	}
	return append(out,
		StepSpec{Type: TypeWait, Fields: []string{"days", "hours", "working_days"}},
		StepSpec{Type: TypeCondition, Fields: []string{"if", "within_days", "then", "else"}},
		StepSpec{Type: TypeWebhook, Fields: []string{"payload"}},
		StepSpec{Type: TypeTask, Fields: []string{"title", "due_in_days"}, Required: []string{"title"}},
	)
}

// SpecOf returns the declaration of a step type, and false for an unknown
// one.
func SpecOf(typ string) (StepSpec, bool) {
	i := slices.IndexFunc(Steps, func(s StepSpec) bool { return s.Type == typ })
	if i < 0 {
		return StepSpec{}, false
	}
	return Steps[i], true
}

// StepTypes are the step types' names in Steps' order, for enums and
// messages.
func StepTypes() []string {
	out := make([]string, len(Steps))
	for i, s := range Steps {
		out[i] = s.Type
	}
	return out
}

// Text returns the value of one of a step's template fields.
func (s Step) Text(field string) string {
	switch field {
	case "note":
		return s.Note
	case "subject":
		return s.Subject
	case "body":
		return s.Body
	case "title":
		return s.Title
	}
	return ""
}
