package inbox

import (
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// What a reply says about the lead's absence: whether the whole message is
// an away notice, when the lead is back, and whom a "no longer with the
// company" reply names instead.

// Replacement is the person a reply names instead of the lead.
type Replacement struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// senderTime is at in the sender's zone, as the message's Date header
// gives it ("Mon, 2 Nov 2026 23:30:00 -0800"); at as it is without one.
// A relative date ("next Monday", "tomorrow") counts from the sender's
// day, not the server's.
func senderTime(at time.Time, headers map[string]string) time.Time {
	for k, v := range headers {
		if strings.EqualFold(k, "date") {
			if d, err := mail.ParseDate(v); err == nil {
				return at.In(d.Location())
			}
		}
	}
	return at
}

// awayCue marks a sentence of an away notice: being away, coming back,
// whom to ask meanwhile, thanks for the message.
var awayCue = append(words("urgent*", "dringend*", "urgence*", "urgente*", "immediate assistance", "in my absence", "during my absence",
	"abwesenheit", "en mon absence", "pendant mon absence", "en mi ausencia", "durante mi ausencia", "thank you for your", "thanks for your",
	"vielen dank fur ihre", "danke fur ihre", "merci pour votre", "merci de votre", "gracias por su", "gracias por tu", "back", "return*",
	"zuruck", "wieder", "retour", "regres*", "vuelta", "away", "vacation", "holiday*", "leave", "urlaub", "abwesend", "absent*", "vacances",
	"conges", "vacaciones", "ausente", "ausencia", "fuera de", "respond*", "reply", "antworte*", "repond*", "contestar*",
	"forwarded", "weitergeleitet", "transmis", "reenviad*", "this mailbox", "dieses postfach", "cette boite", "este buzon"), oooWords...)

// awayWords say, in a person's reply, that they are away.
var awayWords = append(words("away", "ooo", "on leave", "on holiday", "on vacation", "vacation", "urlaub", "abwesend", "absent*",
	"en vacances", "de vacaciones", "ausente", "back on", "back in", "zuruck", "wieder da", "de retour", "de vuelta"), oooWords...)

// away reports whether folded text says the writer is away.
func away(text string) bool { return awayWords.in(text) }

// awayNotice reports whether a whole message is an away notice: it says
// the writer is away, asks nothing, and its other sentences answer
// nothing of the outreach. A person's reply that mentions an absence
// ("Interested! I'm out until 3 Dec, can we talk after?") is not one.
func awayNotice(body string) bool {
	if !oooWords.in(fold(body)) || strings.ContainsAny(body, "?¿") {
		return false
	}
	// A sentence about the absence may name a colleague or a later time;
	// none may say yes, no or ask, and the others must say nothing.
	for _, s := range sentences(body) {
		f := fold(s)
		if interested.in(f) || notInterested.in(f) || (agree.in(f) && meeting.in(f)) {
			return false // a yes or a no, whatever else the sentence says
		}
		switch intentOf(s, f) {
		case Unclear:
		case NotNow, WrongPerson:
			if !awayCue.in(f) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// sentences splits text at line ends and at sentence punctuation
// followed by a space; a dot after a digit ("4. Dezember") ends none.
func sentences(text string) []string {
	var out []string
	rs := []rune(text)
	start := 0
	for i, r := range rs {
		end := r == '\n' || r == '!' || r == '?' || r == ';'
		if r == '.' && (i+1 == len(rs) || unicode.IsSpace(rs[i+1])) && (i == 0 || !unicode.IsDigit(rs[i-1])) {
			end = true
		}
		if end {
			if s := strings.TrimSpace(string(rs[start:i])); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}

// backAt and untilAt are the words a return date follows: being back
// ("back on", "zurück am", "de retour le", "de vuelta el", "terug op",
// "rientro il", "de volta em") and the end of an absence ("until", "bis
// zum", "jusqu'au", "hasta el", "tot en met", "fino al", "até").
var (
	backAt  = regexp.MustCompile(`\b(back( in the office| in office| at work| at my desk)?( on| from)?|returning( to the office)?( on)?|i return( on)?|return to the office( on)?|zuruck( im buro)?( am| ab)?|wieder (im buro |erreichbar |da |zuruck )?(am|ab)|ab dem|de retour( au bureau)?( le| a partir du)?|retour prevu le|serai la le|de vuelta( en la oficina)?( el)?|regreso( el)?|regresare( el)?|terug( op)?|weer aanwezig( op)?|di ritorno( il)?|rientro( in ufficio)?( il)?|rientrero( il)?|de volta( em| a partir de)?|retorno( em)?|retornarei( em)?)\b`)
	untilAt = regexp.MustCompile(`\b(until|till|through|thru|bis( zum| zur| einschliesslich| einschl| inkl| inklusive)?|ab|jusqu'?au|jusqu'?a|jusqu au|jusque|hasta( el)?|tot( en met)?|vanaf|fino al|fino a|ate( o dia| dia)?|a partir (du|de|del)|as of)\b`)
	// backAfter follows a date it makes a return date ("am 7. Dezember
	// wieder da").
	backAfter = regexp.MustCompile(`^\W*(i('| a)?m |i will be |ich bin |je serai |estare )?(back|wieder|zuruck|de retour|de vuelta|terug)\b`)
)

// mention is a date a message names, at a byte offset of its text.
type mention struct {
	at, end int
	t       time.Time
}

// returnDate finds when an away sender is back: the date the message ties
// to being back ("back on 7 December", "zurück am 4.12.", "de retour le
// lundi"), else to the end of the absence ("until", "bis zum", "hasta
// el"), within the next 180 days. An auto-reply that names exactly one
// date is back on it; a person's message names its return date or has
// none. Dates: ISO, 14.12.2026, 12/08 (month first in English), 4
// December, December 7th, 7 de diciembre, a weekday ("next Monday") and
// tomorrow, counted from received's day in received's zone.
func returnDate(body string, received time.Time, auto bool) (time.Time, bool) {
	if received.IsZero() {
		return time.Time{}, false
	}
	text := strings.ToLower(norm.NFD.String(body))
	text = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, text)
	ms := mentions(text, received, english.in(fold(body)))
	for _, anchor := range []*regexp.Regexp{backAt, untilAt} {
		for _, a := range anchor.FindAllStringIndex(text, -1) {
			for _, m := range ms {
				if m.at >= a[1] && m.at-a[1] <= 30 {
					return m.t, true
				}
			}
		}
	}
	for _, m := range ms {
		if backAfter.MatchString(text[m.end:]) {
			return m.t, true
		}
	}
	if auto && len(ms) > 0 {
		for _, m := range ms[1:] {
			if !m.t.Equal(ms[0].t) {
				return time.Time{}, false // several dates, none tied to being back
			}
		}
		return ms[0].t, true
	}
	return time.Time{}, false
}

// mentions returns the dates text names within the next 180 days of
// received's day, in the order they appear.
func mentions(text string, received time.Time, english bool) []mention {
	loc := received.Location()
	day := time.Date(received.Year(), received.Month(), received.Day(), 0, 0, 0, 0, loc)
	var out []mention
	add := func(idx []int, t time.Time) {
		if t.After(day) && t.Before(day.AddDate(0, 0, 181)) {
			out = append(out, mention{at: idx[0], end: idx[1], t: t})
		}
	}
	date := func(y, m, d int) time.Time {
		t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, loc)
		if m < 1 || m > 12 || t.Month() != time.Month(m) {
			return time.Time{}
		}
		return t
	}
	// in fills the year a date leaves out: the next such date from today.
	in := func(m, d int) time.Time {
		t := date(day.Year(), m, d)
		if !t.IsZero() && t.Before(day) {
			t = t.AddDate(1, 0, 0)
		}
		return t
	}
	num := func(g string) int { n, _ := strconv.Atoi(g); return n }
	sub := func(idx []int, k int) string {
		if idx[2*k] < 0 {
			return ""
		}
		return text[idx[2*k]:idx[2*k+1]]
	}
	for _, g := range isoDate.FindAllStringSubmatchIndex(text, -1) {
		add(g, date(num(sub(g, 1)), num(sub(g, 2)), num(sub(g, 3))))
	}
	for _, g := range numDate.FindAllStringSubmatchIndex(text, -1) {
		a, b := num(sub(g, 1)), num(sub(g, 3))
		d, m := a, b
		if sub(g, 2) == "/" && english && a <= 12 {
			d, m = b, a
		}
		if y := sub(g, 4); y != "" {
			year := num(y)
			if year < 100 {
				year += 2000
			}
			add(g, date(year, m, d))
			continue
		}
		add(g, in(m, d))
	}
	for _, g := range dayMonth.FindAllStringSubmatchIndex(text, -1) {
		add(g, in(months[sub(g, 2)], num(sub(g, 1))))
	}
	for _, g := range monthDay.FindAllStringSubmatchIndex(text, -1) {
		add(g, in(months[sub(g, 1)], num(sub(g, 2))))
	}
	for _, g := range weekday.FindAllStringSubmatchIndex(text, -1) {
		n := (int(weekdays[sub(g, 1)]) - int(day.Weekday()) + 7) % 7
		if n == 0 {
			n = 7
		}
		add(g, day.AddDate(0, 0, n))
	}
	for _, g := range tomorrow.FindAllStringSubmatchIndex(text, -1) {
		add(g, day.AddDate(0, 0, 1))
	}
	// In the order of the text; a date inside another's match (the "12"
	// of "12 December") is the same mention.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].at < out[j-1].at; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

var (
	emailAddress = regexp.MustCompile(`[A-Za-z0-9._%+'-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	// nameRun is a person's name: one to three capitalized words, with a
	// title in front.
	nameRun = regexp.MustCompile(`((?:Herrn?|Frau|Mr\.?|Mrs\.?|Ms\.?|Mme|Sra?\.?)\s+)?\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+){0,2}\s*$`)
	// redirectTo is the verb a replacement's name follows.
	redirectTo = regexp.MustCompile(`(?i:contact|reach out to|get in touch with|speak (?:to|with)|talk to|write to|email|wenden sie sich(?: bitte)? an|kontaktieren sie|schreiben sie|contactez|voyez avec|écrivez à|ecrivez a|contacte a|contacta a|escriba a|hable con|habla con|neem contact op met|contatti|contatta|fale com|entre em contato com)\s+(?i:(?:my|our|mein\w*|unser\w*|ma|mon|notre|mi|nuestr\w*|mijn|onze|il mio|la mia|meu|minha)\s+(?:\p{Ll}+\s+){0,2})?((?:(?:Herrn?|Frau|Mr\.?|Mrs\.?|Ms\.?|Mme|Sra?\.?)\s+)?\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+){0,2})`)
	notNames   = map[string]bool{"Contact": true, "Email": true, "E-Mail": true, "E-mail": true, "Mail": true, "Please": true, "Bitte": true,
		"Kontakt": true, "Contacto": true, "Tel": true, "Phone": true, "Courriel": true, "Correo": true, "At": true}
)

// replacement returns the person a "no longer with the company" or
// "not the right person" reply names instead: the first address it gives,
// with the name written before it, or a name after "contact", "wenden Sie
// sich an", "contactez", "contacta a" and the like; nil when it names
// nobody.
func replacement(body string) *Replacement {
	var r Replacement
	if loc := emailAddress.FindStringIndex(body); loc != nil {
		r.Email = strings.ToLower(strings.Trim(body[loc[0]:loc[1]], ".'"))
		before := body[:loc[0]]
		if i := strings.LastIndexByte(before, '\n'); i >= 0 {
			before = before[i+1:]
		}
		before = strings.TrimRight(before, " \t(<[:-–—,")
		for _, w := range []string{" at", " via", " unter", " à", " a", " en", " bei", " on", " sur", " em", " op"} {
			before = strings.TrimSuffix(before, w)
		}
		if m := nameRun.FindString(strings.TrimRight(before, " \t(<[:-–—,")); m != "" && !notNames[strings.Fields(m)[0]] {
			r.Name = strings.TrimSpace(m)
		}
	}
	if r.Name == "" {
		if m := redirectTo.FindStringSubmatch(body); m != nil && !notNames[strings.Fields(m[1])[0]] {
			r.Name = strings.TrimSpace(m[1])
		}
	}
	if r.Name == "" && r.Email == "" {
		return nil
	}
	return &r
}
