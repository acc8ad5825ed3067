package sequences_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

// TestStepRegistry: every capped action is a step type that performs it,
// the steps that send nothing perform none, and each type is declared
// once.
func TestStepRegistry(t *testing.T) {
	is := is.New(t)
	seen := map[string]bool{}
	for _, spec := range sequences.Steps {
		is.True(!seen[spec.Type]) // declared once
		seen[spec.Type] = true
		a, ok := sequences.Step{Type: spec.Type}.Action()
		is.Equal(ok, spec.Action != "")
		is.Equal(a, spec.Action)
		for _, f := range spec.Required {
			is.True(len(f) > 0)
		}
	}
	for _, a := range senders.Specs {
		is.True(seen[string(a.Action)]) // every action is a step type
	}
	for _, typ := range []string{sequences.TypeWait, sequences.TypeCondition, sequences.TypeWebhook, sequences.TypeTask} {
		is.True(seen[typ])
	}
	is.Equal(len(sequences.StepTypes()), len(senders.Specs)+4)
	_, ok := sequences.SpecOf("poke")
	is.True(!ok)
}

// TestActionRegistry: the caps, ceilings, channels and contact effects the
// senders area uses are the registry's.
func TestActionRegistry(t *testing.T) {
	is := is.New(t)
	is.Equal(len(senders.Actions), len(senders.Specs))
	for _, s := range senders.Specs {
		is.True(s.Action.Valid())
		is.Equal(senders.Ceilings[s.Action], s.Ceiling)
		is.Equal(senders.Defaults[s.Action], s.Default)
		is.True(s.Default <= s.Ceiling)
		is.Equal(s.Action.Channel(), s.Channel)
		is.Equal(s.Action.Contacts(), s.Contacts)
		is.True(s.Delivered != "")
	}
	is.Equal(senders.SendEmail.Channel(), senders.Email)
	is.True(!senders.ProfileView.Contacts())
	is.True(senders.Invite.Contacts())
}
