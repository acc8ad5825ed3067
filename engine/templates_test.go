package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

const templateSequences = `
      - name: Templates
        client: Globex
        senders: [mail]
        steps:
          - id: hi
            type: email
            subject: "{{#if company}}{{company}} and us{{else}}A quick idea{{/if}}"
            body: |
              {{spin "Hi" "Hello" "Hey"}} {{first_name|there}},
              {{#if company}}
              How is {{company}} doing?
              {{else}}
              How are you doing?
              {{/if}}
              Max
`

// TestTemplatesSend: a step with a condition and spin text sends, through
// the sandbox, each lead the branch its fields choose and the greeting
// the preview shows; a variable in the branch not taken blocks nothing.
func TestTemplatesSend(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, templateSequences)
		e.activate("Templates")
		ann := e.lead("Ann Lee", map[string]any{"company": "Acme"})
		bob := e.lead("Bob Roe", nil)
		is.Equal(e.enrol("Templates", ann, bob).Enrolled, 2)
		e.clock.Set(monday.Add(2 * time.Hour))

		rec := &recording{Network: e.net}
		_, err := e.pl.NewRunner(map[string]senders.Transport{senders.TransportSandbox: rec}).Tick(ctx)
		is.NoErr(err)
		is.Equal(len(rec.performed), 2)
		sent := map[string]senders.Request{}
		for _, r := range rec.performed {
			sent[r.Lead.LeadID] = r
		}
		for lead, want := range map[string]struct{ subject, body string }{
			ann: {"Acme and us", " Ann,\nHow is Acme doing?\nMax\n"},
			bob: {"A quick idea", " Bob,\nHow are you doing?\nMax\n"},
		} {
			r := sent[lead]
			is.Equal(r.Subject, want.subject)
			greeting, rest, _ := strings.Cut(r.Body, " ")
			is.True(slices.Contains([]string{"Hi", "Hello", "Hey"}, greeting))
			is.Equal(" "+rest, want.body)
			// The preview shows what was sent.
			pv, err := e.seqs.Render(ctx, e.p, e.ids["Templates"], lead, varsOfLead(t, e, lead))
			is.NoErr(err)
			is.Equal(pv.Steps[0].Subject, r.Subject)
			is.Equal(pv.Steps[0].Body, r.Body)
		}
	})
}

// varsOfLead are the template variables of the lead with id.
func varsOfLead(t *testing.T, e *rig, id string) sequences.Vars {
	t.Helper()
	l, err := e.leads.Get(context.Background(), e.p, id)
	if err != nil {
		t.Fatal(err)
	}
	return enrollments.VarsOf(&l.Lead)
}
