package sequences_test

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sequences"
)

// varsOf are template variables from a map; a key with an empty value is
// present but blank.
func varsOf(m map[string]string) sequences.Vars {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

func TestTemplateLanguage(t *testing.T) {
	ann := varsOf(map[string]string{"first_name": "Ann", "company": "Acme", "custom.topic": "Go", "custom.city": "  "})
	nobody := varsOf(map[string]string{})
	for _, c := range []struct {
		name, tmpl string
		vars       sequences.Vars
		want       string
		missing    []string
	}{
		{"placeholder", "Hi {{first_name}}", ann, "Hi Ann", nil},
		{"fallback", "Hi {{ first_name | there }}", nobody, "Hi there", nil},
		{"missing", "Hi {{first_name}}", nobody, "Hi ", []string{"first_name"}},
		{"if taken", "Hi{{#if company}} from {{company}}{{/if}}!", ann, "Hi from Acme!", nil},
		{"if not taken", "Hi{{#if company}} from {{company}}{{/if}}!", nobody, "Hi!", nil},
		{"else", "{{#if company}}{{company}}{{else}}your team{{/if}}", nobody, "your team", nil},
		{"else not taken", "{{#if company}}{{company}}{{else}}your team{{/if}}", ann, "Acme", nil},
		{"custom", "{{#if custom.topic}}about {{custom.topic}}{{/if}}", ann, "about Go", nil},
		{"blank is false", "{{#if custom.city}}in {{custom.city}}{{else}}nearby{{/if}}", ann, "nearby", nil},
		{"nested", "{{#if company}}{{#if custom.topic}}{{custom.topic}} at {{company}}{{else}}{{company}}{{/if}}{{/if}}", ann, "Go at Acme", nil},
		{"nested else", "{{#if company}}{{#if headline}}{{headline}}{{else}}{{company}}{{/if}}{{else}}-{{/if}}", ann, "Acme", nil},
		{"missing in the branch taken", "{{#if company}}{{headline}}{{/if}}", ann, "", []string{"headline"}},
		{"fallback in the branch taken", "{{#if company}}{{headline|a leader}} at {{company}}{{/if}}", ann, "a leader at Acme", nil},
		{"fallback in else", "{{#if company}}x{{else}}Hi {{first_name|there}}{{/if}}", nobody, "Hi there", nil},
		{"standalone lines", "Hi,\n{{#if company}}\nI saw {{company}}.\n{{else}}\nI saw you.\n{{/if}}\nBye", ann, "Hi,\nI saw Acme.\nBye", nil},
		{"standalone lines not taken", "Hi,\n  {{#if company}}  \nI saw {{company}}.\n{{/if}}\nBye", nobody, "Hi,\nBye", nil},
		{"spin escapes", `{{spin "say \"hi\"" "say \"hi\""}}`, ann, `say "hi"`, nil},
		{"spin one choice", `{{spin "a" "a" "a"}} {{first_name}}`, ann, "a Ann", nil},
	} {
		got, missing, err := sequences.RenderFor(c.tmpl, c.vars, "lead-1")
		if err != nil || got != c.want || fmt.Sprint(missing) != fmt.Sprint(c.missing) {
			t.Errorf("%s: got %q %v %v, want %q %v", c.name, got, missing, err, c.want, c.missing)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	for tmpl, want := range map[string]string{
		"{{#if company}}x": "without its {{/if}}",
		"x{{/if}}":         "{{/if}} without its {{#if}}",
		"x{{else}}y":       "{{else}} outside any {{#if}}",
		"{{#if company}}a{{else}}b{{else}}c{{/if}}": "two {{else}}",
		"{{#if compny}}x{{/if}}":                    "unknown variable {{compny}}",
		"{{#if custom.}}x{{/if}}":                   "names no custom field",
		"{{#if}}x{{/if}}":                           "names no variable",
		"{{#if company|x}}y{{/if}}":                 "no fallback",
		"{{#each company}}y{{/each}}":               "the blocks are",
		"{{#if name}}{{#if name}}{{#if name}}{{#if name}}{{#if name}}x{{/if}}{{/if}}{{/if}}{{/if}}{{/if}}": "more than 4 deep",
		`{{spin "Hi"}}`:                               "at least 2 options",
		`{{spin}}`:                                    "at least 2 options",
		`{{spin Hi Hello}}`:                           "double-quoted",
		`{{spin "Hi" "Hello}}`:                        "never closed",
		`{{spin "Hi""Hello"}}`:                        "separated by spaces",
		`{{spin "H\i" "Hello"}}`:                      `not \" or \\`,
		`{{spin "a}}b" "c"}}`:                         "quote is never closed",
		"{{spin " + strings.Repeat(`"x" `, 21) + "}}": "at most 20",
		"Hi {{first_name":                             "never closed",
		"{{firstname}}":                               "unknown variable",
	} {
		_, _, err := sequences.Render(tmpl, varsOf(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error with %q", tmpl, err, want)
		}
	}
}

// TestSpin: the option depends on the lead and the spin's place only, so
// every rendering for a lead is the same, and leads spread over the
// options.
func TestSpin(t *testing.T) {
	is := is.New(t)
	tmpl := `{{spin "Hi" "Hello" "Hey"}} {{first_name}}, {{spin "a" "b"}}`
	vars := varsOf(map[string]string{"first_name": "Ann"})
	count := map[string]int{}
	firsts, seconds := map[string]bool{}, map[string]bool{}
	const leads = 3000
	for i := range leads {
		key := "lead-" + strconv.Itoa(i)
		out, _, err := sequences.RenderFor(tmpl, vars, key)
		is.NoErr(err)
		again, _, _ := sequences.RenderFor(tmpl, vars, key)
		is.Equal(out, again) // the same lead, the same text
		greeting, rest, _ := strings.Cut(out, " Ann, ")
		count[greeting]++
		firsts[greeting], seconds[rest] = true, true
	}
	is.Equal(len(count), 3)
	for g, n := range count {
		// Each of 3 options gets a third, give or take 10%.
		if n < leads/3*9/10 || n > leads/3*11/10 {
			t.Errorf("%q got %d of %d leads", g, n, leads)
		}
	}
	is.Equal(len(seconds), 2)
	// Two spins of one template choose independently: some leads get
	// the first option of one and the second of the other.
	combos := map[string]bool{}
	for i := range 200 {
		out, _, _ := sequences.RenderFor(`{{spin "1" "2"}}{{spin "1" "2"}}`, vars, strconv.Itoa(i))
		combos[out] = true
	}
	is.Equal(len(combos), 4)
}

// TestRenderStep: a step renders per lead and field; spin differs between
// steps of one lead; a missing variable names the field; subjects go out
// on one line.
func TestRenderStep(t *testing.T) {
	is := is.New(t)
	step := sequences.Step{ID: "mail", Type: "email", Subject: "{{#if company}}{{company}}{{else}}Hello{{/if}}",
		Body: "{{spin \"Hi\" \"Hello\" \"Hey\"}} {{first_name|there}},\n{{#if headline}}\nAs {{headline}}…\n{{/if}}\nBye"}
	r, err := sequences.RenderStep(step, "lead-1", varsOf(map[string]string{"company": "Acme\nCorp"}))
	is.NoErr(err)
	is.Equal(r.Subject, "Acme Corp") // flattened
	is.True(strings.HasSuffix(r.Body, " there,\nBye"))
	is.Equal(r.Missing, []string{})
	is.Equal(r.Problem, "")
	again, _ := sequences.RenderStep(step, "lead-1", varsOf(nil))
	is.Equal(strings.Fields(again.Body)[0], strings.Fields(r.Body)[0])

	step.Body = "{{#if company}}{{headline}}{{/if}}"
	r, err = sequences.RenderStep(step, "lead-1", varsOf(map[string]string{"company": "Acme"}))
	is.True(err != nil)
	is.Equal(r.Missing, []string{"headline"})
	is.Equal(r.Problem, `Step "mail", body: the lead has no value for {{[headline]}} and the template gives no fallback.`)
	_, err = sequences.RenderStep(step, "lead-1", varsOf(nil)) // the branch is not taken
	is.NoErr(err)
}

// TestTemplateBounds: a template that could render past MaxRendered does
// not pass validation, and a rendering past it is refused.
func TestTemplateBounds(t *testing.T) {
	is := is.New(t)
	mail := func(body string) *sequences.Sequence {
		return &sequences.Sequence{Steps: []sequences.Step{{ID: "mail", Type: "email", Subject: "Hi", Body: body}}}
	}
	// A custom field may hold all of the custom budget: placed four
	// times, it could exceed the bound; three times, it cannot.
	is.Equal(codes(sequences.Validate(mail(strings.Repeat("{{custom.topic}} ", 3)), both)), nil)
	is.Equal(codes(sequences.Validate(mail(strings.Repeat("{{custom.topic}} ", 4)), both)), []string{"template_error@mail"})
	// Different fields share the budget.
	is.Equal(codes(sequences.Validate(mail("{{custom.a}} {{custom.b}} {{custom.c}} {{custom.d}} {{custom.e}}"), both)), nil)
	// Only the longest branch and option count.
	long := strings.Repeat("x", sequences.MaxRendered/2+1)
	is.Equal(codes(sequences.Validate(mail("{{#if company}}"+long+"{{else}}"+long+"{{/if}}"), both)), nil)
	is.Equal(codes(sequences.Validate(mail(long+"{{spin \""+long+"\" \"b\"}}"), both)), []string{"template_error@mail"})
	ps := sequences.Validate(mail(long+long), both)
	is.True(strings.Contains(ps[0].Message, "at most 65536"))

	_, _, err := sequences.Render(long+"{{custom.topic}}", varsOf(map[string]string{"custom.topic": long}))
	is.True(err != nil)
}

// TestTemplateVarBounds: the bounds validation assumes of each variable
// are the leads' own.
func TestTemplateVarBounds(t *testing.T) {
	is := is.New(t)
	is.Equal(leads.MaxCustomBytes, 16<<10)
	in := reflect.TypeFor[leads.LeadInput]()
	for name, want := range map[string]string{"Name": "500", "Company": "500", "Headline": "1000"} {
		f, _ := in.FieldByName(name)
		is.Equal(f.Tag.Get("maxLength"), want) // sequences' templateVars names the same bound
	}
}

// TestActivationTemplates: conditions and spin are checked at activation
// with the problems unknown variables give.
func TestActivationTemplates(t *testing.T) {
	steps := func(body string) *sequences.Sequence {
		s := berlinCTOs()
		s[3].Body = body
		return &sequences.Sequence{Steps: s}
	}
	for body, want := range map[string]string{
		`{{#if company}}Hi {{first_name|there}}{{else}}{{spin "Hi" "Hey"}}{{/if}}`: "",
		"{{#if company}}Hi":    "template_error@hello",
		"Hi{{/if}}":            "template_error@hello",
		"{{#if firm}}x{{/if}}": "template_error@hello",
		`{{spin "Hi"}}`:        "template_error@hello",
		`{{spin "Hi" 'Hey'}}`:  "template_error@hello",
	} {
		got := strings.Join(codes(sequences.Validate(steps(body), both)), " ")
		if got != want {
			t.Errorf("%q: got %q, want %q", body, got, want)
		}
	}
	ps := sequences.Validate(steps("{{#if firm}}x{{/if}}"), both)
	is.New(t).Equal(ps, []sequences.Problem{{Code: "template_error", StepID: "hello",
		Message: `Step "hello", body: unknown variable {{firm}}; use first_name, name, company, headline or custom.KEY.`}})
}
