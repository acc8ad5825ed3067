package apikit_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
)

// lineBreakers are characters no one-line field takes: every C0 control,
// DEL, every C1 control and the Unicode line and paragraph separators.
func lineBreakers() []rune {
	var rs []rune
	for r := rune(0); r < 0x20; r++ {
		rs = append(rs, r)
	}
	for r := rune(0x7f); r <= 0x9f; r++ {
		rs = append(rs, r)
	}
	return append(rs, '\u2028', '\u2029')
}

func TestOneLine(t *testing.T) {
	is := is.New(t)
	for _, ok := range []string{"", "Hi there", "Café – naïve 🙂", "Re: Hi", "https://example.com/a?b=c", "a\u00a0b", "\ufffd literal replacement character"} {
		is.NoErr(apikit.OneLine("subject", ok))
	}
	for _, r := range lineBreakers() {
		err := apikit.OneLine("subject", "Hi"+string(r)+"Bcc: x@evil.test")
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		is.True(strings.HasPrefix(apikit.AsError(err).Message, "subject holds "))
		is.True(strings.Contains(apikit.AsError(err).Message, "at character 3"))
		is.True(!strings.Contains(apikit.AsError(err).Message, "evil")) // the value is never repeated
	}
	err := apikit.OneLine("description", "a\r\nb")
	is.Equal(apikit.AsError(err).Message, "description holds a carriage return (U+000D) at character 2; it takes one line of text.")
	err = apikit.OneLine("name", "a\xffb")
	is.True(strings.Contains(apikit.AsError(err).Message, "name holds text that cannot be stored"))
}

func TestFlatten(t *testing.T) {
	is := is.New(t)
	is.Equal(apikit.Flatten("Hi\r\nBcc: x@evil.test"), "Hi Bcc: x@evil.test")
	is.Equal(apikit.Flatten(" a\t\tb\u2028c\u0085d\x7f "), "a b c d")
	is.Equal(apikit.Flatten("a\xffb"), "a b")
	is.Equal(apikit.Flatten("plain"), "plain")
	for _, r := range lineBreakers() {
		is.NoErr(apikit.OneLine("s", apikit.Flatten("x"+string(r)+"y")))
	}
}

type step struct {
	ID      string         `json:"id" yaml:"id"`
	Subject string         `json:"subject,omitempty" yaml:"subject"`
	Body    string         `json:"body,omitempty" yaml:"body" text:"multiline"`
	Payload map[string]any `json:"payload,omitempty"`
}

type spec struct {
	Name     string              `yaml:"name"`
	Steps    []step              `yaml:"steps"`
	Schedule map[string][]string `yaml:"schedule"`
	Owner    *string             `json:"owner_id,omitempty"`
	Hidden   string              `json:"-"`
	inner    string
	Nested   `yaml:",inline"`
	Raw      []byte
	MemberID string
}

type Nested struct {
	Clients []string `yaml:"clients"`
}

type request struct {
	ID   string `path:"id"`
	Q    string `query:"q"`
	Body spec
}

func TestCheckText(t *testing.T) {
	is := is.New(t)
	good := func() spec {
		return spec{Name: "n", Steps: []step{{ID: "a", Subject: "Hi", Body: "Hi\r\n\tthere\u2028", Payload: map[string]any{"k": "multi\nline"}}},
			Schedule: map[string][]string{"mon-fri": {"09:00-17:00"}}, Owner: new(string), Hidden: "\n", inner: "\n", Raw: []byte("\n"), Nested: Nested{Clients: []string{"Globex"}}}
	}
	is.NoErr(apikit.CheckText("", good()))
	is.NoErr(apikit.CheckText("", &request{Body: good()}))
	is.NoErr(apikit.CheckText("", (*spec)(nil)))

	msg := func(err error) string {
		t.Helper()
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		return apikit.AsError(err).Message
	}
	for _, c := range []struct {
		change func(*spec)
		field  string
	}{
		{func(s *spec) { s.Name = "a\nb" }, "name holds"},
		{func(s *spec) { s.Steps[0].Subject = "Hi\r\nBcc: x" }, "steps[0].subject holds"},
		{func(s *spec) { s.Steps[0].ID = "a\tb" }, "steps[0].id holds"},
		{func(s *spec) { s.Steps[0].Body = "nul\x00" }, "steps[0].body holds text that cannot be stored"},
		{func(s *spec) { s.Steps[0].Payload["k"] = "nul\x00" }, "steps[0].payload holds text that cannot be stored"},
		{func(s *spec) { s.Schedule["mon-fri"][0] = "09:00\u2028" }, "schedule.mon-fri[0] holds"},
		{func(s *spec) { s.Schedule["mon\n"] = nil }, "schedule (a key) holds"},
		{func(s *spec) { *s.Owner = "x\u0085" }, "owner_id holds"},
		{func(s *spec) { s.Clients = []string{"ok", "x\x7f"} }, "clients[1] holds"},
		{func(s *spec) { s.MemberID = "\x1b" }, "member_id holds"},
	} {
		s := good()
		c.change(&s)
		is.True(strings.HasPrefix(msg(apikit.CheckText("", s)), c.field))
		is.True(strings.HasPrefix(msg(apikit.CheckText("", &request{Body: s})), c.field)) // a request's Body adds no name
	}
	is.True(strings.HasPrefix(msg(apikit.CheckText("", request{Q: "cto\n"})), "q holds"))
	is.True(strings.HasPrefix(msg(apikit.CheckText("input", "a\nb")), "input holds"))
	is.True(strings.HasPrefix(msg(apikit.Prefixed(`Sender "x": `, apikit.CheckText("", step{ID: "\n"}))), `Sender "x": id holds`))
}
