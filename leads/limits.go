package leads

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/leadline/leadline/apikit"
)

// A lead input's bounds are written once, as the maxLength and
// maxProperties tags of LeadInput: the API's schema publishes them and
// huma enforces them on POST /v1/leads and PATCH /v1/leads/{id}, and
// checkLimits enforces the same tags for every input that reaches the
// service another way (a CSV row, the console, a Go caller), so that no
// path keeps a value the API would refuse.

// inputLimit is the bound of one field of LeadInput.
type inputLimit struct {
	index int    // the field's index in LeadInput
	name  string // its JSON name
	max   int    // maxLength (characters) of a text, maxProperties of an object
}

var inputLimits = limitsOf(reflect.TypeFor[LeadInput]())

// limitsOf reads the bounds of t's fields from their tags.
func limitsOf(t reflect.Type) []inputLimit {
	var out []inputLimit
	for i := range t.NumField() {
		f := t.Field(i)
		tag := "maxLength"
		if f.Type.Kind() == reflect.Map {
			tag = "maxProperties"
		}
		v, ok := f.Tag.Lookup(tag)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			panic(fmt.Sprintf("leads: LeadInput.%s has %s %q", f.Name, tag, v))
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, inputLimit{index: i, name: name, max: n})
	}
	return out
}

// checkLimits returns E_PAYLOAD_INVALID, as the API's schema answers, when a field of in is longer than its maxLength, counted in
// characters as the API's schema counts them, or custom has more fields
// than its maxProperties. The message never repeats the value.
func checkLimits(in *LeadInput) error {
	v := reflect.ValueOf(in).Elem()
	for _, l := range inputLimits {
		f := v.Field(l.index)
		switch f.Kind() {
		case reflect.Pointer:
			if f.IsNil() {
				continue
			}
			s := f.Elem().String()
			if len(s) <= l.max { // a byte count bounds the character count
				continue
			}
			if n := utf8.RuneCountInString(s); n > l.max {
				return apikit.Invalid(fmt.Sprintf("%s has %d characters; it takes at most %d.", l.name, n, l.max),
					fmt.Sprintf("Shorten %s to %d characters or fewer.", l.name, l.max))
			}
		case reflect.Map:
			if n := f.Len(); n > l.max {
				return apikit.Invalid(fmt.Sprintf("%s sends %d fields; a request takes at most %d.", l.name, n, l.max),
					"Send fewer custom fields, or combine them.")
			}
		}
	}
	return nil
}
