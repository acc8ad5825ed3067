package sequences_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/transports/email"
	"github.com/leadline/leadline/transports/unipile"
)

// berlinCTOs is the example sequence of the setup documentation.
func berlinCTOs() []sequences.Step {
	return []sequences.Step{
		{ID: "visit", Type: "profile_view"},
		{ID: "invite", Type: "invite", Note: "Hi {{first_name}}, saw your talk on {{custom.topic|platform teams}}."},
		{ID: "accepted", Type: "condition", If: "invite_accepted", WithinDays: 14, Then: "hello", Else: "mail"},
		{ID: "hello", Type: "message", Body: "Thanks for connecting, {{first_name|there}}!"},
		{ID: "pause", Type: "wait", Days: 3, WorkingDays: true},
		{ID: "mail", Type: "email", Subject: "{{company}} and us", Body: "Hello {{first_name|there}}"},
	}
}

var both = []senders.Channel{senders.LinkedIn, senders.Email}

func codes(ps []sequences.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Code+"@"+p.StepID)
	}
	return out
}

func TestValidate(t *testing.T) {
	is := is.New(t)
	is.Equal(len(sequences.Validate(&sequences.Sequence{Steps: berlinCTOs()}, both)), 0)

	mod := func(f func(s []sequences.Step) []sequences.Step) *sequences.Sequence {
		return &sequences.Sequence{Steps: f(berlinCTOs())}
	}
	for name, c := range map[string]struct {
		q        *sequences.Sequence
		channels []senders.Channel
		want     []string
	}{
		"no steps":      {&sequences.Sequence{}, both, []string{"no_steps@"}},
		"unknown type":  {mod(func(s []sequences.Step) []sequences.Step { s[0].Type = "poke"; return s }), both, []string{"unknown_type@visit"}},
		"unknown field": {mod(func(s []sequences.Step) []sequences.Step { s[0].Body = "hi"; return s }), both, []string{"unknown_field@visit"}},
		"duplicate id":  {mod(func(s []sequences.Step) []sequences.Step { s[4].ID = "hello"; return s }), both, []string{"duplicate_id@hello"}},
		"dangling":      {mod(func(s []sequences.Step) []sequences.Step { s[2].Else = "nowhere"; return s }), both, []string{"dangling_target@accepted"}},
		"dangling next": {mod(func(s []sequences.Step) []sequences.Step { s[0].Next = "gone"; return s }), both, []string{"dangling_target@visit"}},
		"unreachable": {mod(func(s []sequences.Step) []sequences.Step {
			s[3].Next = sequences.End
			return s
		}), both, []string{"unreachable@pause"}},
		"loop without wait": {mod(func(s []sequences.Step) []sequences.Step { s[5].Next = "visit"; return s }), both, []string{"loop_without_wait@visit"}},
		"message without connection": {mod(func(s []sequences.Step) []sequences.Step {
			s[2].Then, s[2].Else = "mail", "hello"
			return s
		}), both, []string{"message_needs_connection@hello"}},
		"note too long": {mod(func(s []sequences.Step) []sequences.Step { s[1].Note = strings.Repeat("é", 301); return s }), both, []string{"note_too_long@invite"}},
		"template":      {mod(func(s []sequences.Step) []sequences.Step { s[3].Body = "Hi {{first_name"; return s }), both, []string{"template_error@hello"}},
		"unknown var":   {mod(func(s []sequences.Step) []sequences.Step { s[5].Subject = "{{firstname}}"; return s }), both, []string{"template_error@mail"}},
		"no linkedin sender": {mod(func(s []sequences.Step) []sequences.Step { return s }), []senders.Channel{senders.Email},
			[]string{"no_linkedin_sender@visit", "no_linkedin_sender@invite", "no_linkedin_sender@accepted", "no_linkedin_sender@hello"}},
		"no email sender": {mod(func(s []sequences.Step) []sequences.Step { return s }), []senders.Channel{senders.LinkedIn}, []string{"no_email_sender@mail"}},
		"bad wait":        {mod(func(s []sequences.Step) []sequences.Step { s[4].Days = 0; return s }), both, []string{"bad_value@pause"}},
		"bad condition":   {mod(func(s []sequences.Step) []sequences.Step { s[2].If = "likes_us"; return s }), both, []string{"unknown_condition@accepted"}},
		"within days":     {mod(func(s []sequences.Step) []sequences.Step { s[2].WithinDays = 0; return s }), both, []string{"bad_value@accepted"}},
		"email subject":   {mod(func(s []sequences.Step) []sequences.Step { s[5].Subject = ""; return s }), both, []string{"missing_field@mail"}},
		"reserved id":     {mod(func(s []sequences.Step) []sequences.Step { s[5].ID = "end"; return s }), both, []string{"reserved_id@end", "dangling_target@accepted"}},
	} {
		got := codes(sequences.Validate(c.q, c.channels))
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: got %v, want %v", name, got, c.want)
		}
	}
	// A loop through a wait is fine; a connected check guards a message.
	loop := &sequences.Sequence{Steps: []sequences.Step{
		{ID: "check", Type: "condition", If: "connected", Then: "hi", Else: "later"},
		{ID: "hi", Type: "message", Body: "Hi", Next: "end"},
		{ID: "later", Type: "wait", Days: 1, Next: "check"},
	}}
	is.Equal(codes(sequences.Validate(loop, both)), nil)
}

func TestRender(t *testing.T) {
	is := is.New(t)
	vars := func(name string) (string, bool) {
		v, ok := map[string]string{"first_name": "Ann", "company": "", "custom.topic": "Go"}[name]
		return v, ok
	}
	out, missing, err := sequences.Render("Hi {{first_name}}, {{ company | your team }} and {{custom.topic}}", vars)
	is.NoErr(err)
	is.Equal(out, "Hi Ann, your team and Go")
	is.Equal(missing, nil)
	_, missing, _ = sequences.Render("{{headline}} at {{company}}", vars)
	is.Equal(missing, []string{"headline", "company"}) // empty counts as missing
	_, _, err = sequences.Render("}} {{name}}", vars)
	is.True(err != nil)
}

// TestUnsupportedActions: a step its senders' transport cannot perform
// blocks activation, naming the step and the sender.
func TestUnsupportedActions(t *testing.T) {
	is := is.New(t)
	uni := senders.Sender{Name: "ann-li", Channel: senders.LinkedIn, Transport: unipile.Name}
	sbx := senders.Sender{Name: "sbx", Channel: senders.LinkedIn, Transport: senders.TransportSandbox}
	mail := senders.Sender{Name: "mail", Channel: senders.Email, Transport: email.Name}
	q := &sequences.Sequence{Steps: append(berlinCTOs(), sequences.Step{ID: "like", Type: "like"})}
	is.Equal(len(sequences.Unsupported(q, []senders.Sender{sbx, mail})), 0)
	ps := sequences.Unsupported(q, []senders.Sender{uni, sbx, mail})
	is.Equal(codes(ps), []string{"unsupported_action@like"})
	is.True(strings.Contains(ps[0].Message, `sender "ann-li"`))
	is.True(strings.Contains(ps[0].Message, "unipile"))
	// Without the like, a unipile sender runs the whole sequence.
	is.Equal(len(sequences.Unsupported(&sequences.Sequence{Steps: berlinCTOs()}, []senders.Sender{uni, mail})), 0)
}
