package email

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlText is the text an HTML mail part shows a reader: the words of the
// body in order, a line break for each block, "> " before each line
// quoted in a blockquote (as a plain-text reply quotes), without scripts,
// styles or the head. Entities are decoded by the tokenizer.
func htmlText(src string) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var out []string // finished lines
	var line strings.Builder
	quote := 0 // blockquote depth
	skip := 0  // inside script, style, head or title
	flush := func() {
		text := strings.Join(strings.FieldsFunc(line.String(), isHTMLSpace), " ")
		line.Reset()
		if text != "" {
			out = append(out, strings.Repeat("> ", quote)+text)
		}
	}
	// blank ends a paragraph with an empty line (quoted in a quote).
	blank := func() {
		flush()
		if len(out) > 0 && strings.Trim(out[len(out)-1], "> ") != "" {
			out = append(out, strings.TrimSpace(strings.Repeat("> ", quote)))
		}
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			flush()
			for len(out) > 0 && strings.Trim(out[len(out)-1], "> ") == "" {
				out = out[:len(out)-1]
			}
			return strings.Join(out, "\n")
		case html.TextToken:
			if skip > 0 {
				continue
			}
			line.Write(z.Text())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Script, atom.Style, atom.Head, atom.Title:
				nest(&skip, tt)
				continue
			case atom.Br:
				flush()
				continue
			case atom.Blockquote:
				blank()
				nest(&quote, tt)
				continue
			case atom.Img:
				if alt := attr(z, "alt"); alt != "" && skip == 0 {
					line.WriteString(" " + alt + " ")
				}
				continue
			}
			if blockTag[a] {
				flush()
				if a == atom.Li && tt == html.StartTagToken {
					line.WriteString("- ")
				}
				if (a == atom.P || a == atom.Table) && tt == html.EndTagToken {
					blank()
				}
			} else if a == atom.Td || a == atom.Th {
				line.WriteByte(' ')
			}
		}
	}
}

// nest counts an element's depth: up at its start tag, down at its end.
func nest(depth *int, tt html.TokenType) {
	if tt == html.StartTagToken {
		*depth++
	} else if tt == html.EndTagToken && *depth > 0 {
		*depth--
	}
}

// blockTag are the elements that start a line of their own.
var blockTag = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Li: true, atom.Ul: true, atom.Ol: true, atom.Tr: true, atom.Table: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true, atom.Hr: true,
	atom.Pre: true, atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true, atom.Dl: true,
	atom.Dt: true, atom.Dd: true, atom.Body: true, atom.Html: true,
}

// attr is the value of the current tag's attribute key.
func attr(z *html.Tokenizer, key string) string {
	for {
		k, v, more := z.TagAttr()
		if string(k) == key {
			return string(v)
		}
		if !more {
			return ""
		}
	}
}

// isHTMLSpace is white space as HTML collapses it (and the no-break
// space mail clients put between words).
func isHTMLSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\u00a0'
}
