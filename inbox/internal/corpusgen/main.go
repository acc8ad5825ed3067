// Command corpusgen writes the training corpus of leadline's reply
// classifier: labelled replies to cold outreach, built from the phrase
// banks in banks.go with a fixed seed, so that every run writes the same
// file. It is the training set only; the held-out set
// (inbox/testdata/model/heldout.jsonl) is written by hand and is never
// made by this program.
//
//	go run ./inbox/internal/corpusgen -out inbox/testdata/model/train.jsonl
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
var perLang = map[string]int{"en": 760, "de": 460, "fr": 440, "es": 440, "nl": 130, "it": 130, "pt": 130}

var intents = []string{"interested", "question", "not_now", "not_interested", "ooo", "wrong_person", "unclear"}

// extra is a sentence that may follow a core sentence without changing
// what it means.
var extra = map[string]map[string][]string{
	"en": {"interested": {"Also, does it work with {tool}?", "Please send the invite to my work address.", "Bring a few numbers."},
		"question": {"Thanks in advance.", "Just trying to understand if it's worth a call."}, "not_now": {"Thanks for understanding."},
		"not_interested": {"Good luck though.", "Please respect that."}, "wrong_person": {"Good luck!", "Thanks."}},
	"de": {"interested": {"Bitte schicken Sie vorab eine kurze Info.", "Gibt es auch eine Anbindung an {tool}?"}, "question": {"Danke vorab."},
		"not_now": {"Danke für Ihr Verständnis."}, "not_interested": {"Trotzdem viel Erfolg."}, "wrong_person": {"Viel Erfolg."}},
	"fr": {"interested": {"Envoyez-moi une présentation avant.", "Est-ce compatible avec {tool} ?"}, "question": {"Merci d'avance."},
		"not_now": {"Merci de votre compréhension."}, "not_interested": {"Bonne continuation."}, "wrong_person": {"Bonne journée."}},
	"es": {"interested": {"Mándame antes una presentación.", "¿Se integra con {tool}?"}, "question": {"Gracias de antemano."},
		"not_now": {"Gracias por entenderlo."}, "not_interested": {"Suerte igualmente."}, "wrong_person": {"Suerte."}},
}

// softNo opens a refusal with a polite positive: the no still wins.
var softNo = map[string][]string{
	"en": {"Sounds interesting, but", "I appreciate the effort, but", "Nice product, but"},
	"de": {"Klingt interessant, aber", "Nettes Produkt, aber"},
	"fr": {"C'est intéressant, mais", "Joli produit, mais"},
	"es": {"Suena interesante, pero", "Buen producto, pero"},
}

type gen struct {
	r    *rand.Rand
	lang string
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
				b.WriteString(g.pick(langFills[g.lang]["day"]))
			case key == "wday":
				b.WriteString(g.pick([]string{"Mon", "Tue", "Wed", "Thu", "Fri"}))
			case langFills[g.lang][key] != nil:
				b.WriteString(g.pick(langFills[g.lang][key]))
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

func stripAccents(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// reply builds one reply with intent in g's language.
func (g *gen) reply(intent string) Example {
	ex := Example{Lang: g.lang, Intent: intent, Channel: "email"}
	if g.chance(0.4) && intent != "ooo" || intent == "ooo" && g.chance(0.08) {
		ex.Channel = "linkedin"
	}
	sentence := g.fill(g.pick(core[g.lang][intent]))
	var parts []string
	switch {
	case (intent == "question" || intent == "interested" || intent == "not_now") && g.chance(0.12):
		// A person who is away and still answers: not an auto-reply.
		parts = append(parts, g.fill(g.pick(away[g.lang]))+" "+lowerFirst(sentence))
	case intent == "not_interested" && softNo[g.lang] != nil && g.chance(0.15):
		parts = append(parts, g.pick(softNo[g.lang])+" "+lowerFirst(strings.TrimSuffix(sentence, ".")+"."))
	default:
		parts = append(parts, sentence)
	}
	if xs := extra[g.lang][intent]; xs != nil && g.chance(0.25) {
		parts = append(parts, g.fill(g.pick(xs)))
	}
	if intent == "interested" && g.chance(0.15) {
		// Two yes sentences.
		parts = append(parts, g.fill(g.pick(core[g.lang][intent])))
	}
	body := strings.Join(parts, " ")
	if ex.Channel == "linkedin" {
		if g.chance(0.3) {
			body = g.fill(strings.TrimSuffix(g.pick(greet[g.lang]), ",")) + " " + body
		}
		if g.chance(0.15) {
			body = strings.ToLower(body)
		}
		if g.chance(0.15) {
			body = strings.TrimRight(body, ".!")
		}
	} else {
		ex.Subject = "Re: " + g.fill(g.pick(fills["subject"]))
		var b strings.Builder
		if g.chance(0.55) && intent != "ooo" {
			b.WriteString(g.fill(g.pick(greet[g.lang])) + "\n\n")
		}
		if g.chance(0.25) && intent != "ooo" && intent != "unclear" {
			b.WriteString(g.pick(thanks[g.lang]) + " ")
		}
		b.WriteString(body)
		if g.chance(0.6) {
			b.WriteString("\n\n" + g.pick(signoff[g.lang]) + "\n" + g.fill("{name}"))
			if g.chance(0.4) {
				b.WriteString(g.fill("\nHead of Operations | {co}\n+49 30 1234 5678"))
			}
		}
		if g.chance(0.1) {
			b.WriteString("\n\n" + g.pick(mobile))
		}
		if g.chance(0.15) {
			b.WriteString("\n\n" + g.pick(disclaimer[g.lang]))
		}
		if g.chance(0.3) {
			b.WriteString("\n\n" + g.fill(g.pick(quoteHead[g.lang])) + "\n> " + g.fill(g.pick(outreach)))
		}
		body = b.String()
		if intent == "ooo" && g.chance(0.6) {
			ex.Auto = true
			ex.Subject = g.fill(g.pick(autoSubjects[g.lang]))
			if g.chance(0.5) {
				ex.Headers = autoHeaders[g.r.IntN(len(autoHeaders))]
			}
		}
	}
	if g.chance(0.08) {
		body = stripAccents(body)
	}
	ex.Body = body
	return ex
}

func main() {
	out := flag.String("out", "inbox/testdata/model/train.jsonl", "where to write the corpus")
	seed := flag.Uint64("seed", 25, "the random seed")
	flag.Parse()
	langs := make([]string, 0, len(perLang))
	for l := range perLang {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	var all []Example
	seen := map[string]bool{}
	for _, l := range langs {
		g := &gen{r: rand.New(rand.NewPCG(*seed, uint64(len(all)))), lang: l}
		for i, tries := 0, 0; i < perLang[l] && tries < 20*perLang[l]; tries++ {
			ex := g.reply(intents[i%len(intents)])
			key := ex.Lang + ex.Intent + ex.Subject + ex.Body
			if seen[key] && tries < 10*perLang[l] {
				continue // a repeat teaches nothing
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
	fmt.Printf("%d replies written to %s\n", len(all), *out)
}
