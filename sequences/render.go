package sequences

import (
	"context"
	"fmt"
	"slices"

	"github.com/leadline/leadline/apikit"
)

// RenderedStep is one step's texts rendered for one lead, as the runner
// sends them.
type RenderedStep struct {
	StepID    string   `json:"step_id"`
	VariantID string   `json:"variant_id,omitempty" doc:"A step with variants is rendered once per variant."`
	Type      string   `json:"type"`
	Note      string   `json:"note,omitempty" doc:"invite: the note."`
	Subject   string   `json:"subject,omitempty" doc:"inmail and email: the subject, on one line. An email step without one follows up in the thread of the email before it."`
	Body      string   `json:"body,omitempty" doc:"message, inmail and email: the text."`
	Missing   []string `json:"missing" doc:"The variables, in the branches this lead takes, that the lead has no value for and whose placeholders give no fallback."`
	Problem   string   `json:"problem,omitempty" doc:"Why the runner would not send this step to the lead (a missing variable, or a template that does not parse); the enrollment would fail at it with missing_variable."`
}

// RenderStep renders step's templates (its type's: the note, subject and
// body it sends) for the lead with id leadID and its variables. Spin text
// is chosen by the lead, the step and the field, so every rendering of
// the step for the lead is the same. A subject goes out on one line: a
// lead's value can carry a line break into it. The error is the first
// field the lead does not fill (or that does not parse); the runner does
// not send the step then.
func RenderStep(step Step, leadID string, vars Vars) (RenderedStep, error) {
	out := RenderedStep{StepID: step.ID, Type: step.Type, Missing: []string{}}
	var first error
	spec, _ := SpecOf(step.Type)
	for _, field := range spec.Templates {
		text, missing, err := RenderFor(step.Text(field), vars, leadID+"\x00"+step.ID+"\x00"+field)
		switch {
		case err != nil:
			err = fmt.Errorf("Step %q, %s: %v.", step.ID, field, err)
		case len(missing) > 0:
			err = fmt.Errorf("Step %q, %s: the lead has no value for {{%v}} and the template gives no fallback.", step.ID, field, missing)
		}
		if err != nil && first == nil {
			first = err
		}
		for _, m := range missing {
			if !slices.Contains(out.Missing, m) {
				out.Missing = append(out.Missing, m)
			}
		}
		if field == "subject" && apikit.OneLine(field, text) != nil {
			text = apikit.Flatten(text)
		}
		switch field {
		case "note":
			out.Note = text
		case "subject":
			out.Subject = text
		case "body":
			out.Body = text
		}
	}
	if first != nil {
		out.Problem = first.Error()
	}
	return out, first
}

// Texts are the rendered step's texts by field name, as the runner's
// request takes them.
func (r RenderedStep) Texts() map[string]string {
	return map[string]string{"note": r.Note, "subject": r.Subject, "body": r.Body}
}

// RenderInput names the lead a sequence's steps are rendered for.
type RenderInput struct {
	LeadID string `json:"lead_id" format:"uuid" doc:"The lead to render every step for; one the key sees."`
}

// Rendering is every step of a sequence that sends a text, rendered for
// one lead.
type Rendering struct {
	SequenceID string         `json:"sequence_id" format:"uuid"`
	LeadID     string         `json:"lead_id" format:"uuid"`
	Steps      []RenderedStep `json:"steps" doc:"The steps that send a text (invite, message, inmail, email), in the sequence's order."`
}

// Render renders, for the lead with id leadID and its variables, every
// step of the sequence with id that sends a text: what the runner would
// send the lead at each step. It changes nothing.
// Returns E_NOT_FOUND if the sequence is not visible to the principal.
func (svc *Service) Render(ctx context.Context, p apikit.Principal, id, leadID string, vars Vars) (*Rendering, error) {
	q, err := svc.Visible(ctx, p, id)
	if err != nil {
		return nil, err
	}
	out := &Rendering{SequenceID: q.ID, LeadID: leadID, Steps: []RenderedStep{}}
	for _, s := range q.Steps {
		if spec, _ := SpecOf(s.Type); len(spec.Templates) == 0 {
			continue
		}
		if len(s.Variants) > 0 {
			for _, v := range s.Variants {
				r, _ := RenderStep(s.WithVariant(v.ID), leadID, vars)
				r.VariantID = v.ID
				out.Steps = append(out.Steps, r)
			}
			continue
		}
		r, _ := RenderStep(s, leadID, vars)
		out.Steps = append(out.Steps, r)
	}
	return out, nil
}
