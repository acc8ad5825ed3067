package sequences

import (
	"fmt"
	"strings"
)

// Template variables: the lead's name, first name, company and headline,
// and its custom fields as custom.KEY.
var templateVars = []string{"first_name", "name", "company", "headline"}

// placeholder is one {{var|fallback}} of a template.
type placeholder struct {
	start, end  int // byte offsets of "{{" and after "}}"
	name        string
	fallback    string
	hasFallback bool
}

// parseTemplate finds the placeholders of t, or reports the first syntax
// error: an unclosed or empty placeholder, or an unknown variable.
func parseTemplate(t string) ([]placeholder, error) {
	var out []placeholder
	for i := 0; i < len(t); {
		open := strings.Index(t[i:], "{{")
		closeOnly := strings.Index(t[i:], "}}")
		if open < 0 {
			if closeOnly >= 0 {
				return nil, fmt.Errorf("%q has a }} without its {{", t)
			}
			break
		}
		if closeOnly >= 0 && closeOnly < open {
			return nil, fmt.Errorf("%q has a }} without its {{", t)
		}
		open += i
		end := strings.Index(t[open+2:], "}}")
		if end < 0 {
			return nil, fmt.Errorf("%q has a {{ that is never closed", t)
		}
		end += open + 2
		inner := t[open+2 : end]
		if strings.Contains(inner, "{{") {
			return nil, fmt.Errorf("%q has a {{ inside another", t)
		}
		p := placeholder{start: open, end: end + 2}
		name, fb, has := strings.Cut(inner, "|")
		p.name, p.fallback, p.hasFallback = strings.TrimSpace(name), strings.TrimSpace(fb), has
		if err := checkVar(p.name); err != nil {
			return nil, err
		}
		out = append(out, p)
		i = end + 2
	}
	return out, nil
}

func checkVar(name string) error {
	if key, ok := strings.CutPrefix(name, "custom."); ok {
		if key == "" {
			return fmt.Errorf("{{custom.}} names no custom field")
		}
		return nil
	}
	for _, v := range templateVars {
		if v == name {
			return nil
		}
	}
	if name == "" {
		return fmt.Errorf("an empty {{}} placeholder")
	}
	return fmt.Errorf("unknown variable {{%s}}; use first_name, name, company, headline or custom.KEY", name)
}

// Vars are the values a template is filled with. A missing or empty value
// takes the placeholder's fallback.
type Vars func(name string) (string, bool)

// Render fills t with vars. It returns the names of the variables that had
// neither a value nor a fallback: a message with any of them must not be sent.
func Render(t string, vars Vars) (string, []string, error) {
	ps, err := parseTemplate(t)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	var missing []string
	last := 0
	for _, p := range ps {
		b.WriteString(t[last:p.start])
		v, ok := vars(p.name)
		v = strings.TrimSpace(v)
		switch {
		case ok && v != "":
			b.WriteString(v)
		case p.hasFallback:
			b.WriteString(p.fallback)
		default:
			missing = append(missing, p.name)
		}
		last = p.end
	}
	b.WriteString(t[last:])
	return b.String(), missing, nil
}
