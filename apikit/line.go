package apikit

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// breaksLine reports whether r may not appear in a one-line field: the C0
// controls (tab, line feed and carriage return among them), DEL, the C1
// controls (NEL among them) and the Unicode line and paragraph separators.
// Each of them can end a line, or a header, for some reader of the text.
func breaksLine(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029'
}

// lineBreakNames names the characters people send most often by mistake.
var lineBreakNames = map[rune]string{
	'\t': "a tab", '\n': "a line feed", '\r': "a carriage return", 0x7f: "a delete character",
	0x85: "a next-line character", '\u2028': "a line separator", '\u2029': "a paragraph separator",
}

// OneLine returns nil when value may be kept in the one-line field named
// field (a name, subject, title, description, tag, stage name, URL or id),
// and otherwise an E_PAYLOAD_INVALID error that names the field: text that
// is not UTF-8, or that holds a control character (tab, CR and LF
// included), DEL, a C1 control or U+2028/U+2029. Such a character could
// end the field early where it is written as a line, such as an email
// header. Multi-line fields (bodies, notes) are checked with Storable.
// The message never repeats the value, which may be a secret.
func OneLine(field, value string) error {
	if field == "" {
		field = "the text"
	}
	for i, r := range value {
		if r == utf8.RuneError && !strings.HasPrefix(value[i:], string(utf8.RuneError)) {
			return unstorable(field)
		}
		if !breaksLine(r) {
			continue
		}
		what, ok := lineBreakNames[r]
		if !ok {
			what = "a control character"
		}
		return Invalid(fmt.Sprintf("%s holds %s (U+%04X) at character %d; it takes one line of text.", field, what, r, utf8.RuneCountInString(value[:i])+1),
			fmt.Sprintf("Send %s as one line: replace line breaks and tabs with spaces and leave out control characters. Only bodies and notes keep line breaks.", field))
	}
	return nil
}

func unstorable(field string) *Error {
	return Invalid(field+" holds text that cannot be stored: a NUL character or invalid UTF-8.", "Remove NUL characters and send UTF-8 text.")
}

// Flatten returns s as one line: every run of the characters OneLine
// refuses (and of invalid UTF-8) becomes one space, and white space around
// the result is trimmed. It is for text that arrives from elsewhere (a
// provider's message, a row stored before the rule) and must go into a
// one-line field.
func Flatten(s string) string {
	s = strings.ToValidUTF8(s, " ")
	if !strings.ContainsFunc(s, breaksLine) {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	gap := false
	for _, r := range s {
		if breaksLine(r) {
			gap = true
			continue
		}
		if gap {
			b.WriteByte(' ')
			gap = false
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// Multiline is the struct tag value (text:"multiline") that marks a text
// field which keeps line breaks: a message body, a note. CheckText holds
// such a field only to what the databases can store.
const Multiline = "multiline"

// CheckText checks every text an input holds: v is a struct (or a pointer,
// slice, array or map of them, or a string). Every string is a one-line
// field (OneLine), unless its struct field is tagged text:"multiline";
// free-form values (any, map[string]any) and multi-line fields only need
// to be storable (no NUL, valid UTF-8). A one-line field is the default so
// that a field added later is safe until someone decides otherwise.
//
// The error names the field by its path below field: the json, yaml,
// query, path or header name of each struct field, [i] for an element, .k
// for a map entry (a map's string keys are one-line too).
func CheckText(field string, v any) error {
	return checkValue(field, reflect.ValueOf(v), false)
}

func checkValue(path string, v reflect.Value, multiline bool) error {
	switch v.Kind() {
	case reflect.Invalid:
		return nil
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return checkValue(path, v.Elem(), multiline)
	case reflect.Interface:
		if v.IsNil() || Storable(v.Interface()) {
			return nil
		}
		return unstorable(orText(path))
	case reflect.String:
		if multiline {
			if Storable(v.String()) {
				return nil
			}
			return unstorable(orText(path))
		}
		return OneLine(path, v.String())
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := fieldName(f)
			if !ok {
				continue
			}
			if err := checkValue(join(path, name), v.Field(i), f.Tag.Get("text") == Multiline); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // raw bytes, not text
		}
		for i := range v.Len() {
			if err := checkValue(path+"["+strconv.Itoa(i)+"]", v.Index(i), multiline); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v.Type().Elem().Kind() == reflect.Interface {
			if Storable(v.Interface()) {
				return nil
			}
			return unstorable(orText(path))
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			name := fmt.Sprint(k)
			if k.Kind() == reflect.String {
				if err := OneLine(orText(path)+" (a key)", k.String()); err != nil {
					return err
				}
			}
			if err := checkValue(join(path, name), v.MapIndex(k), multiline); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldName returns the name a struct field has in an input, "" for one
// whose fields count as its parent's (an embedded or inline struct, or a
// request's Body), and false for a field that is not input.
func fieldName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	for _, key := range []string{"json", "yaml", "query", "path", "header"} {
		tag, ok := f.Tag.Lookup(key)
		if !ok {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			return "", false
		}
		if name != "" {
			return name, true
		}
		if strings.Contains(opts, "inline") {
			return "", true
		}
	}
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if f.Anonymous || t.Kind() == reflect.Struct {
		return "", true
	}
	return snake(f.Name), true
}

// snake turns a Go field name into a snake_case one: MemberEmail ->
// member_email.
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func join(path, name string) string {
	switch {
	case name == "":
		return path
	case path == "":
		return name
	}
	return path + "." + name
}

func orText(path string) string {
	if path == "" {
		return "the text"
	}
	return path
}
