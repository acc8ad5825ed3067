// Command corpusgen writes the training corpus of leadline's reply
// classifier: labelled replies to cold outreach, built from the phrase
// banks in banks_*.go with a fixed seed, so that every run writes the same
// file. It is the training set only; the development set
// (inbox/testdata/model/dev.jsonl) and the held-out set
// (inbox/testdata/model/heldout.jsonl) are written by hand, whole reply by
// whole reply, and are never made by this program.
//
//	go run ./inbox/internal/corpusgen -out inbox/testdata/model/train.jsonl \
//		-exclude inbox/testdata/model/dev.jsonl -exclude inbox/testdata/model/fresh.jsonl \
//		-exclude inbox/testdata/model/heldout.jsonl
//
// -exclude writes anew a generated reply whose text is one of the file's,
// and tells only how many it wrote anew.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Example is one labelled reply.
type Example struct {
	Lang    string            `json:"lang"`
	Intent  string            `json:"intent"`
	Channel string            `json:"channel"`
	Auto    bool              `json:"auto,omitempty"`
	Subject string            `json:"subject,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body"`
}

// perLang is how many replies each language gets.
var perLang = map[string]int{"en": 2400, "de": 1500, "fr": 1300, "es": 1300, "nl": 900, "it": 900, "pt": 900}

var intents = []string{"interested", "question", "not_now", "not_interested", "ooo", "wrong_person", "unclear"}

// bank is one language's phrase banks.
type bank struct {
	// core holds whole sentences per intent, hard cases included (mixed
	// cues, double negation, sarcasm, redirects that sound interested,
	// meeting times): each is labelled with the intent it means.
	core map[string][]string
	// parts builds a reply of an intent from slots: one piece from each
	// slot, in order ("" leaves a slot out).
	parts map[string][][]string
	// extra may follow a reply of the intent without changing it.
	extra map[string][]string
	// away is a person's own mention of being away, put before a
	// question, a yes or a later: a person's reply, not an auto-reply.
	away []string
	// softNo opens a refusal with something polite: the no still wins.
	softNo []string
	// neutral is context that says nothing about the intent.
	neutral []string
	// greet, thanks, signoff, titles, disclaimer, mobile, quoteHead,
	// outreach and autoSubject dress a reply as a mail client sends it.
	greet, thanks, signoff, titles, disclaimer, mobile, quoteHead, outreach, autoSubject []string
	// leftAuto is a "no longer with the company" auto-reply.
	leftAuto []string
	// fills are the language's days, months, seasons, dates, times,
	// departments and roles.
	fills map[string][]string
}

var banks = map[string]*bank{}

type gen struct {
	r    *rand.Rand
	lang string
	b    *bank
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// fill replaces the placeholders in s.
func (g *gen) fill(s string) string {
	for i := 0; i < 3 && strings.Contains(s, "{"); i++ {
		var b strings.Builder
		for {
			open := strings.IndexByte(s, '{')
			if open < 0 {
				b.WriteString(s)
				break
			}
			end := strings.IndexByte(s[open:], '}')
			if end < 0 {
				b.WriteString(s)
				break
			}
			key := s[open+1 : open+end]
			b.WriteString(s[:open])
			switch {
			case key == "day2":
				b.WriteString(g.pick(g.b.fills["day"]))
			case key == "wday":
				b.WriteString(g.pick([]string{"Mon", "Tue", "Wed", "Thu", "Fri"}))
			case g.b.fills[key] != nil:
				b.WriteString(g.pick(g.b.fills[key]))
			case fills[key] != nil:
				b.WriteString(g.pick(fills[key]))
			default:
				b.WriteString("{" + key + "}")
			}
			s = s[open+end+1:]
		}
		s = b.String()
	}
	return s
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == 'I' && (len(s) == 1 || s[1] == ' ' || s[1] == '\'') {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

func stripAccents(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// typo swaps two letters of one word or drops one, as hurried writers do.
func (g *gen) typo(s string) string {
	ws := strings.Fields(s)
	if len(ws) == 0 {
		return s
	}
	i := g.r.IntN(len(ws))
	rs := []rune(ws[i])
	if len(rs) < 4 {
		return s
	}
	j := 1 + g.r.IntN(len(rs)-2)
	if g.chance(0.5) {
		rs[j], rs[j+1] = rs[j+1], rs[j]
	} else {
		rs = append(rs[:j], rs[j+1:]...)
	}
	ws[i] = string(rs)
	return strings.Join(ws, " ")
}

// sentence is the reply's own text: a core sentence, or one made of
// parts.
func (g *gen) sentence(intent string) string {
	parts := g.b.parts[intent]
	if len(parts) > 0 && g.chance(0.5) {
		var out []string
		for _, slot := range parts {
			p := g.pick(slot)
			if p == "" {
				continue
			}
			if n := len(out); n > 0 && strings.ContainsAny(out[n-1][len(out[n-1])-1:], ".!?") {
				p = upperFirst(p)
			}
			out = append(out, g.fill(p))
		}
		if len(out) > 0 {
			return upperFirst(strings.Join(out, " "))
		}
	}
	return g.fill(g.pick(g.b.core[intent]))
}

// text is what the person writes: the sentence, maybe with a mention of
// being away, a soft opening, an extra or some context.
func (g *gen) text(intent string) string {
	s := g.sentence(intent)
	var parts []string
	switch {
	case (intent == "question" || intent == "interested" || intent == "not_now") && len(g.b.away) > 0 && g.chance(0.12):
		parts = append(parts, g.fill(g.pick(g.b.away))+" "+lowerFirst(s))
	case intent == "not_interested" && len(g.b.softNo) > 0 && g.chance(0.15):
		parts = append(parts, g.pick(g.b.softNo)+" "+lowerFirst(strings.TrimSuffix(s, ".")+"."))
	default:
		parts = append(parts, s)
	}
	if xs := g.b.extra[intent]; len(xs) > 0 && g.chance(0.25) {
		parts = append(parts, g.fill(g.pick(xs)))
	}
	if intent == "interested" && g.chance(0.12) {
		parts = append(parts, g.sentence(intent)) // two yes sentences
	}
	if intent != "ooo" && len(g.b.neutral) > 0 && g.chance(0.15) {
		n := g.fill(g.pick(g.b.neutral))
		if g.chance(0.5) {
			parts = append([]string{n}, parts...)
		} else {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, " ")
}

// signature is a name, maybe with a title, a company and a phone line.
func (g *gen) signature() string {
	name := g.fill("{name}")
	if g.chance(0.5) {
		name += " " + g.fill("{last}")
	}
	switch g.r.IntN(4) {
	case 0:
		return name
	case 1:
		return name + "\n" + g.pick(g.b.titles) + "\n" + g.fill("{co}")
	case 2:
		return name + " | " + g.pick(g.b.titles) + " | " + g.fill("{co}") + "\n" + g.fill("{phone}")
	}
	return name + "\n" + g.pick(g.b.titles) + ", " + g.fill("{co}") + "\n" + g.fill("{phone}") + "\n" + g.fill("www.{site}")
}

// ooo builds an away notice, as a mail server sends it.
func (g *gen) ooo(ex *Example) string {
	var b strings.Builder
	if g.chance(0.4) {
		b.WriteString(g.fill(g.pick(g.b.greet)) + "\n\n")
	}
	b.WriteString(g.text("ooo"))
	if g.chance(0.5) {
		b.WriteString("\n\n" + g.pick(g.b.signoff) + "\n" + g.signature())
	}
	ex.Subject = "Re: " + g.fill("{subject}")
	if g.chance(0.7) {
		ex.Auto = true
		ex.Subject = g.fill(g.pick(g.b.autoSubject))
		if g.chance(0.5) {
			ex.Headers = autoHeaders[g.r.IntN(len(autoHeaders))]
		}
	}
	return b.String()
}

// reply builds one reply with intent in g's language.
func (g *gen) reply(intent string) Example {
	ex := Example{Lang: g.lang, Intent: intent, Channel: "email"}
	if g.chance(0.35) && intent != "ooo" || intent == "ooo" && g.chance(0.05) {
		ex.Channel = "linkedin"
	}
	if intent == "ooo" && ex.Channel == "email" {
		ex.Body = g.ooo(&ex)
		return ex
	}
	if intent == "wrong_person" && ex.Channel == "email" && g.chance(0.12) {
		// A "no longer with the company" auto-reply.
		ex.Body = g.fill(g.pick(g.b.leftAuto))
		ex.Auto = true
		ex.Subject = g.fill(g.pick(g.b.autoSubject))
		if g.chance(0.5) {
			ex.Headers = autoHeaders[g.r.IntN(len(autoHeaders))]
		}
		return ex
	}
	body := g.text(intent)
	if g.chance(0.05) {
		body = g.typo(body)
	}
	if ex.Channel == "linkedin" {
		if g.chance(0.3) {
			body = g.fill(strings.TrimRight(g.pick(g.b.greet), ",:")) + " " + body
		}
		if g.chance(0.2) {
			body = strings.ToLower(body)
		}
		if g.chance(0.2) {
			body = strings.TrimRight(body, ".!")
		}
		if g.chance(0.08) {
			body += " " + g.pick([]string{"🙂", "👍", "🙏", ":)", "😊"})
		}
	} else {
		ex.Subject = g.pick([]string{"Re: ", "RE: ", "AW: ", "Re: ", "R: ", "RE : "}) + g.fill("{subject}")
		var b strings.Builder
		if g.chance(0.6) {
			b.WriteString(g.fill(g.pick(g.b.greet)) + "\n\n")
		}
		if g.chance(0.25) && intent != "unclear" {
			b.WriteString(g.pick(g.b.thanks) + " ")
		}
		if g.chance(0.2) {
			// Sentences on their own lines.
			body = strings.ReplaceAll(body, ". ", ".\n\n")
		}
		b.WriteString(body)
		if g.chance(0.65) {
			b.WriteString("\n\n" + g.pick(g.b.signoff) + "\n" + g.signature())
		}
		if g.chance(0.1) {
			b.WriteString("\n\n" + g.pick(g.b.mobile))
		}
		if g.chance(0.15) {
			b.WriteString("\n\n" + g.pick(g.b.disclaimer))
		}
		if g.chance(0.3) {
			b.WriteString("\n\n" + g.fill(g.pick(g.b.quoteHead)) + "\n> " + strings.ReplaceAll(g.fill(g.pick(g.b.outreach)), "\n", "\n> "))
		}
		body = b.String()
	}
	if g.chance(0.06) {
		body = stripAccents(body)
	}
	ex.Body = body
	return ex
}

func main() {
	out := flag.String("out", "inbox/testdata/model/train.jsonl", "where to write the corpus")
	seed := flag.Uint64("seed", 25, "the random seed")
	var exclude []string
	flag.Func("exclude", "a file of replies (JSON lines) the corpus must not repeat: the development and held-out sets (may be given several times)",
		func(v string) error { exclude = append(exclude, v); return nil })
	flag.Parse()
	// A generated reply whose text is a reply of the development or
	// held-out sets is written anew: the sets are never trained on. Only
	// the number of such replies is told, not which.
	avoid := map[string]bool{}
	for _, name := range exclude {
		data, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, line := range strings.Split(string(data), "\n") {
			var ex Example
			if json.Unmarshal([]byte(line), &ex) == nil && strings.TrimSpace(ex.Body) != "" {
				avoid[fold(ex.Body)] = true
			}
		}
	}
	avoided := 0
	langs := make([]string, 0, len(perLang))
	for l := range perLang {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	var all []Example
	seen := map[string]bool{}
	for _, l := range langs {
		g := &gen{r: rand.New(rand.NewPCG(*seed, uint64(len(all)))), lang: l, b: banks[l]}
		for i, tries := 0, 0; i < perLang[l] && tries < 20*perLang[l]; tries++ {
			ex := g.reply(intents[i%len(intents)])
			key := ex.Lang + ex.Intent + ex.Subject + ex.Body
			if seen[key] && tries < 10*perLang[l] {
				continue // a repeat teaches nothing
			}
			if avoid[fold(ex.Body)] {
				avoided++
				continue
			}
			seen[key] = true
			all = append(all, ex)
			i++
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, ex := range all {
		if err := enc.Encode(ex); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d replies written to %s (%d generated replies were in the excluded sets and were written anew)\n", len(all), *out, avoided)
}

// fold is the text as inbox compares replies: lower case, without
// accents, every run of other characters than letters and digits one
// space.
func fold(s string) string {
	var b strings.Builder
	space := true
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'ß':
			b.WriteString("ss")
			space = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
			space = false
		case !space:
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}
