package sequences

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The template language of a step's texts (docs/SEQUENCES.md, Templates):
//
//	{{first_name}}  {{company|your team}}          a variable, with a fallback
//	{{#if company}}…{{else}}…{{/if}}                a condition on a variable
//	{{spin "Hi" "Hello" "Hey"}}                     one option, chosen per lead
//
// It has no loops, no calls and no expressions: a template renders in one
// pass over its tree, and its output is bounded by its own length plus its
// variables' values (maxRendered).

// templateVars are the lead's variables a template may name, each with
// the most characters its value can have (leads.LeadInput's maxLength;
// first_name is a part of name). custom.KEY names a custom field.
var templateVars = []struct {
	name string
	max  int
}{{"first_name", 500}, {"name", 500}, {"company", 500}, {"headline", 1000}}

// maxCustomValues is the most characters a lead's custom fields hold
// together (leads.MaxCustomBytes: the custom object as JSON).
const maxCustomValues = 16 << 10

// Bounds of a template.
const (
	// MaxRendered is the most characters one rendered text may have. A
	// template whose output could be longer for some lead, every variable
	// at its longest, does not pass validation; a rendering longer than it
	// is refused.
	MaxRendered = 64 << 10
	// MaxNesting is how deeply {{#if}} blocks nest.
	MaxNesting = 4
	// MaxSpinOptions is how many options one spin has at most.
	MaxSpinOptions = 20
)

// nodeKind is what a node of a template's tree is.
type nodeKind int

const (
	textNode nodeKind = iota
	varNode
	ifNode
	spinNode
)

// node is one part of a template: literal text, a {{var|fallback}}, an
// {{#if var}} with its two branches, or a {{spin …}} with its options.
type node struct {
	kind        nodeKind
	text        string // textNode
	name        string // varNode and ifNode: the variable
	fallback    string
	hasFallback bool
	then, els   []node   // ifNode
	options     []string // spinNode
	spin        int      // spinNode: its place among the template's spins, from 0
}

// openIf is an {{#if}} being parsed: its node and whether {{else}} came.
type openIf struct {
	n      node
	inElse bool
}

// parseTemplate returns the tree of t, or the first syntax error: an
// unclosed, empty or nested {{, a }} without its {{, an unknown variable,
// an {{else}} or {{/if}} without its {{#if}}, an {{#if}} never closed or
// nested too deeply, or a spin with fewer than two options or bad quoting.
func parseTemplate(t string) ([]node, error) {
	var stack []openIf
	var root []node
	// add appends n to the innermost open branch.
	add := func(n node) {
		if len(stack) == 0 {
			root = append(root, n)
			return
		}
		top := &stack[len(stack)-1]
		if top.inElse {
			top.n.els = append(top.n.els, n)
		} else {
			top.n.then = append(top.n.then, n)
		}
	}
	addText := func(s string) {
		if s != "" {
			add(node{kind: textNode, text: s})
		}
	}
	spins := 0
	last := 0
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
		inner := strings.TrimSpace(t[open+2 : end])
		if strings.Contains(inner, "{{") {
			return nil, fmt.Errorf("%q has a {{ inside another", t)
		}
		tagStart, tagEnd := open, end+2
		block := strings.HasPrefix(inner, "#") || strings.HasPrefix(inner, "/") || inner == "else"
		if block {
			// A block tag alone on its line takes the line with it, so
			// that a branch not taken leaves no blank line.
			tagStart, tagEnd = standalone(t, last, open, end+2)
		}
		addText(t[last:tagStart])
		last, i = tagEnd, tagEnd
		switch {
		case inner == "else":
			if len(stack) == 0 {
				return nil, fmt.Errorf("%q has an {{else}} outside any {{#if}}", t)
			}
			if stack[len(stack)-1].inElse {
				return nil, fmt.Errorf("%q has two {{else}} in one {{#if %s}}", t, stack[len(stack)-1].n.name)
			}
			stack[len(stack)-1].inElse = true
		case inner == "/if":
			if len(stack) == 0 {
				return nil, fmt.Errorf("%q has an {{/if}} without its {{#if}}", t)
			}
			n := stack[len(stack)-1].n
			stack = stack[:len(stack)-1]
			add(n)
		case strings.HasPrefix(inner, "#if") && (len(inner) == 3 || unicode.IsSpace(rune(inner[3]))):
			name := strings.TrimSpace(inner[3:])
			if name == "" {
				return nil, fmt.Errorf("%q has an {{#if}} that names no variable", t)
			}
			if strings.ContainsAny(name, "| \t\r\n") {
				return nil, fmt.Errorf("%q: {{#if %s}} takes one variable, with no fallback", t, name)
			}
			if err := checkVar(name); err != nil {
				return nil, err
			}
			if len(stack) == MaxNesting {
				return nil, fmt.Errorf("%q nests {{#if}} more than %d deep", t, MaxNesting)
			}
			stack = append(stack, openIf{n: node{kind: ifNode, name: name}})
		case block:
			return nil, fmt.Errorf("%q has {{%s}}; the blocks are {{#if variable}}, {{else}} and {{/if}}", t, inner)
		case inner == "spin" || strings.HasPrefix(inner, "spin") && (inner[4] == '"' || unicode.IsSpace(rune(inner[4]))):
			options, err := spinOptions(strings.TrimSpace(inner[4:]))
			if err != nil {
				return nil, fmt.Errorf("%q: %v", t, err)
			}
			add(node{kind: spinNode, options: options, spin: spins})
			spins++
		default:
			name, fb, has := strings.Cut(inner, "|")
			n := node{kind: varNode, name: strings.TrimSpace(name), fallback: strings.TrimSpace(fb), hasFallback: has}
			if err := checkVar(n.name); err != nil {
				return nil, err
			}
			add(n)
		}
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("%q has an {{#if %s}} without its {{/if}}", t, stack[len(stack)-1].n.name)
	}
	addText(t[last:])
	return root, nil
}

// standalone widens the block tag t[start:end] to its whole line when
// nothing else is on it (white space aside) and no earlier tag ends on it
// (the line starts at or after from).
func standalone(t string, from, start, end int) (int, int) {
	lineStart := strings.LastIndexByte(t[:start], '\n') + 1
	if lineStart < from || strings.TrimSpace(t[lineStart:start]) != "" {
		return start, end
	}
	rest := t[end:]
	lineEnd := strings.IndexByte(rest, '\n')
	if lineEnd < 0 {
		lineEnd = len(rest)
	} else {
		lineEnd++
	}
	if strings.TrimSpace(rest[:lineEnd]) != "" {
		return start, end
	}
	return lineStart, end + lineEnd
}

// spinOptions reads a spin's options: two or more double-quoted texts
// separated by spaces, in which \" is a quote and \\ a backslash.
func spinOptions(s string) ([]string, error) {
	var out []string
	for s != "" {
		if s[0] != '"' {
			return nil, fmt.Errorf(`a spin's options are double-quoted texts, like {{spin "Hi" "Hello"}}`)
		}
		var b strings.Builder
		i, closed := 1, false
		for i < len(s) {
			c := s[i]
			if c == '"' {
				closed = true
				i++
				break
			}
			if c == '\\' {
				if i+1 >= len(s) || (s[i+1] != '"' && s[i+1] != '\\') {
					return nil, fmt.Errorf(`a spin option has a \ that is not \" or \\`)
				}
				i++
				c = s[i]
			}
			b.WriteByte(c)
			i++
		}
		if !closed {
			return nil, fmt.Errorf("a spin option's quote is never closed")
		}
		if i < len(s) && !unicode.IsSpace(rune(s[i])) {
			return nil, fmt.Errorf("a spin's options are separated by spaces")
		}
		out = append(out, b.String())
		s = strings.TrimSpace(s[i:])
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("a spin needs at least 2 options, and has %d", len(out))
	}
	if len(out) > MaxSpinOptions {
		return nil, fmt.Errorf("a spin has %d options; at most %d", len(out), MaxSpinOptions)
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
	if varMax(name) > 0 {
		return nil
	}
	if name == "" {
		return fmt.Errorf("an empty {{}} placeholder")
	}
	return fmt.Errorf("unknown variable {{%s}}; use first_name, name, company, headline or custom.KEY", name)
}

// varMax is the most characters a known standard variable's value has, 0
// for any other name.
func varMax(name string) int {
	for _, v := range templateVars {
		if v.name == name {
			return v.max
		}
	}
	return 0
}

// checkTemplate parses t and refuses it when its output could exceed
// MaxRendered: every variable at its longest (the custom fields share one
// budget, so the worst is the custom field placed most often holding all
// of it), the longest branch of every condition and the longest option of
// every spin.
func checkTemplate(t string) error {
	tree, err := parseTemplate(t)
	if err != nil {
		return err
	}
	custom := map[string]int{}
	n := worst(tree, custom)
	most := 0
	for _, c := range custom {
		most = max(most, c)
	}
	if n += most * maxCustomValues; n > MaxRendered {
		return fmt.Errorf("the text could render to %d characters for a lead whose fields are at their longest; a text has at most %d (shorten it, or use fewer placeholders)", n, MaxRendered)
	}
	return nil
}

// worst is the most characters nodes can render to, custom fields aside:
// custom counts how often each is placed, on any branch.
func worst(nodes []node, custom map[string]int) int {
	n := 0
	for _, nd := range nodes {
		switch nd.kind {
		case textNode:
			n += utf8.RuneCountInString(nd.text)
		case varNode:
			if key, ok := strings.CutPrefix(nd.name, "custom."); ok {
				custom[key]++
				n += utf8.RuneCountInString(nd.fallback)
			} else {
				n += max(varMax(nd.name), utf8.RuneCountInString(nd.fallback))
			}
		case ifNode:
			n += max(worst(nd.then, custom), worst(nd.els, custom))
		case spinNode:
			longest := 0
			for _, o := range nd.options {
				longest = max(longest, utf8.RuneCountInString(o))
			}
			n += longest
		}
	}
	return n
}

// Vars are the values a template is filled with. A missing or empty value
// takes the placeholder's fallback.
type Vars func(name string) (string, bool)

// Render fills t with vars, with every spin choosing as for the key "";
// RenderFor chooses per lead. It returns the names of the variables that
// had neither a value nor a fallback: a message with any of them must not
// be sent.
func Render(t string, vars Vars) (string, []string, error) {
	return RenderFor(t, vars, "")
}

// RenderFor fills t with vars. A condition renders its first branch when
// its variable has a value that is not blank, its else branch (or
// nothing) otherwise; the variables of the branch not taken are not
// needed. Each spin renders one of its options, chosen by a hash of key
// and the spin's place in t, so the same key always gets the same text:
// the runner renders a step for a lead again when it retries or recovers
// it, on any replica. It returns the names of the variables that had
// neither a value nor a fallback (a message with any of them must not be
// sent), and an error for a syntax error or a text longer than
// MaxRendered.
func RenderFor(t string, vars Vars, key string) (string, []string, error) {
	tree, err := parseTemplate(t)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	var missing []string
	renderNodes(&b, tree, vars, key, &missing)
	out := b.String()
	if n := utf8.RuneCountInString(out); n > MaxRendered {
		return "", nil, fmt.Errorf("the text renders to %d characters; a text has at most %d", n, MaxRendered)
	}
	return out, missing, nil
}

func renderNodes(b *strings.Builder, nodes []node, vars Vars, key string, missing *[]string) {
	for _, n := range nodes {
		switch n.kind {
		case textNode:
			b.WriteString(n.text)
		case varNode:
			v, ok := vars(n.name)
			v = strings.TrimSpace(v)
			switch {
			case ok && v != "":
				b.WriteString(v)
			case n.hasFallback:
				b.WriteString(n.fallback)
			default:
				*missing = append(*missing, n.name)
			}
		case ifNode:
			v, ok := vars(n.name)
			if ok && strings.TrimSpace(v) != "" {
				renderNodes(b, n.then, vars, key, missing)
			} else {
				renderNodes(b, n.els, vars, key, missing)
			}
		case spinNode:
			b.WriteString(n.options[spinChoice(key, n.spin, len(n.options))])
		}
	}
}

// spinChoice is the option, of n, that the spin at place takes for key: a
// hash that depends on nothing else (not the time, not the process).
func spinChoice(key string, place, n int) int {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d", key, place))
	return int(binary.BigEndian.Uint64(h[:8]) % uint64(n))
}
