package inbox

import (
	"net/mail"
	"regexp"
	"slices"
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
	// LinkedIn is the public identifier of the LinkedIn profile the reply
	// gives (linkedin.com/in/<public identifier>).
	LinkedIn string `json:"linkedin,omitempty"`
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

// The return date is read from a message's text as returnText leaves it
// (lower case, no accents), in the seven languages the model reads:
// English, German, French, Spanish, Dutch, Italian and Portuguese.

// dateMonths and dateWeekdays name the months and weekdays in those
// languages, with the usual abbreviations. Abbreviations that are common
// words of another language ("out", "set", "ago", "sun", "sat") are left
// out: a notice that says "7 out of 10" is not back in October.
var (
	dateMonths = names(map[int][]string{
		1:  {"january", "jan", "januar", "janner", "janvier", "janv", "enero", "ene", "januari", "gennaio", "gen", "janeiro"},
		2:  {"february", "feb", "februar", "fevrier", "fevr", "febrero", "februari", "febbraio", "fevereiro", "fev"},
		3:  {"march", "mar", "marz", "mars", "marzo", "maart", "mrt", "marco"},
		4:  {"april", "apr", "avril", "avr", "abril", "aprile"},
		5:  {"may", "mai", "mayo", "mei", "maggio", "mag", "maio"},
		6:  {"june", "jun", "juni", "juin", "junio", "giugno", "giu", "junho"},
		7:  {"july", "jul", "juli", "juillet", "juil", "julio", "luglio", "lug", "julho"},
		8:  {"august", "aug", "aout", "agosto", "augustus"},
		9:  {"september", "sep", "sept", "septembre", "septiembre", "settembre", "setembro"},
		10: {"october", "oct", "oktober", "okt", "octobre", "octubre", "ottobre", "ott", "outubro"},
		11: {"november", "nov", "novembre", "noviembre", "novembro"},
		12: {"december", "dec", "dezember", "dez", "decembre", "diciembre", "dic", "dicembre", "dezembro"},
	})
	dateWeekdays = names(map[int][]string{
		0: {"sunday", "sonntag", "dimanche", "domingo", "zondag", "domenica"},
		1: {"monday", "mon", "montag", "lundi", "lunes", "maandag", "lunedi", "segunda-feira", "segunda"},
		2: {"tuesday", "tues", "tue", "dienstag", "mardi", "martes", "dinsdag", "martedi", "terca-feira", "terca"},
		3: {"wednesday", "wed", "mittwoch", "mercredi", "miercoles", "woensdag", "mercoledi", "quarta-feira", "quarta"},
		4: {"thursday", "thurs", "thur", "thu", "donnerstag", "jeudi", "jueves", "donderdag", "giovedi", "quinta-feira", "quinta"},
		5: {"friday", "fri", "freitag", "vendredi", "viernes", "vrijdag", "venerdi", "sexta-feira", "sexta"},
		6: {"saturday", "samstag", "samedi", "sabado", "zaterdag", "sabato"},
	})
)

// names turns lists of names by number into one map from name to number.
func names(byNumber map[int][]string) map[string]int {
	out := map[string]int{}
	for n, ns := range byNumber {
		for _, name := range ns {
			out[name] = n
		}
	}
	return out
}

var (
	monthName   = `(` + alternation(dateMonths) + `)`
	weekdayName = `(` + alternation(dateWeekdays) + `)`
	// The forms of a date: ISO; numbers (14.12.2026, 02/12, 15-03-2027,
	// whose order is settled in numericDate); a day and a month's name
	// ("4 December", "1er janvier 2027", "7 de diciembre", "all'8
	// gennaio", "7th of December"); a month's name and a day ("December
	// 7th, 2026"), with a second day after a dash or "to" ("July 13-24");
	// an English ordinal alone ("back on the 7th"); a weekday with a day
	// ("el lunes 30").
	isoDay      = regexp.MustCompile(`\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b`)
	numericDay  = regexp.MustCompile(`\b(\d{1,2})([./-])(\d{1,2})\b(?:([./-])(\d{4}|\d{2})\b)?`)
	dayMonthDay = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th|er|e)?\.?\s+(?:de\s+|of\s+)?` + monthName + `\b\.?(?:,?\s+(?:de\s+)?(\d{4})\b)?`)
	monthDayDay = regexp.MustCompile(`\b` + monthName + `\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?`)
	monthDayEnd = regexp.MustCompile(`\b` + monthName + `\.?\s+(\d{1,2})(?:st|nd|rd|th)?\s*(?:-|to|through|thru|until|till)\s*(\d{1,2})(?:st|nd|rd|th)?\b`)
	ordinalDay  = regexp.MustCompile(`\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\b`)
	weekdayDay  = regexp.MustCompile(`\b` + weekdayName + `,?\s+(?:the\s+|den\s+|le\s+|el\s+|il\s+)?(\d{1,2})(?:st|nd|rd|th|er|e)?\b\.?(?:[^./\d]|$)`)
	weekdayOnly = regexp.MustCompile(`\b` + weekdayName + `\b`)
	// Relative days: tomorrow, the day after, next week (its Monday).
	tomorrowDay = regexp.MustCompile(`\b(tomorrow|demain|manana|morgen|domani|amanha)\b`)
	dayAfter    = regexp.MustCompile(`\b(day after tomorrow|ubermorgen|apres-demain|apres demain|pasado manana|overmorgen|dopodomani|depois de amanha)\b`)
	nextWeek    = regexp.MustCompile(`\b(next week|nachste woche|nachsten woche|kommende woche|la semaine prochaine|semaine prochaine|la semana que viene|la proxima semana|proxima semana|volgende week|la prossima settimana|prossima settimana|semana que vem)\b`)

	// backWord ties the date after it to being back ("back on", "will
	// return on", "will respond on", "zurück am", "de retour le", "je
	// reprendrai mes mails le", "regreso el", "me reincorporo el", "terug
	// op", "rientro il", "tornerò il", "retorno na", "de volta a partir
	// de").
	backWord = regexp.MustCompile(`\b(back|return\w*|reopen\w*|respond\w*|reply|answer|available again|reachable again|zuruck|de retour|retour|reviens|reprendrai|reprends|de vuelta|regres\w*|vuelvo|volvere\w*|reincorpor\w*|terug|weer (?:aanwezig|bereikbaar|beschikbaar|op kantoor)|di ritorno|rientr\w*|torner\w*|di nuovo (?:in ufficio|disponibile|raggiungibile)|de volta|retorn\w*|volto|voltarei)\b`)
	// untilWord ties the date after it to the end of the absence.
	untilWord = regexp.MustCompile(`\b(until|till|til|through|thru|up to|bis|jusqu'?(?:au|a|a la)?|jusque|hasta|tot|t/m|fino|ate)\b`)
	// inclusiveBefore and inclusiveAfter make a date the absence's last
	// day ("through December 11", "bis einschließlich 4. Dezember", "tot
	// en met", "t/m", "jusqu'au 4 décembre inclus", "hasta el 9
	// incluido", "fino al 2 dicembre compreso", "até 2 de dezembro,
	// inclusive").
	inclusiveBefore = regexp.MustCompile(`\b(through|thru|up to and including|to and including|einschl\w*\.?|inkl\w*\.?|tot en met|t/m|t\.m\.)\s*(?:the |dem |den |zum |zur )?$`)
	inclusiveAfter  = regexp.MustCompile(`^\s*,?\s*\(?(?:both |ambos |ambas |beide |ambedue )?(inclusive|inclusief|inclus|incluse|inclusivement|incluid[oa]s?|inclus[oa]|incluso|compres[oaie]|included|incl\.?|inkl\.?|einschliesslich|inklusive|incluidos)\b`)
	// rangeTo joins a range's first day to its last ("30.11. bis 4.12.",
	// "Nov 30 - Dec 4", "du 30/11 au 04/12", "dal 23 al 27 novembre");
	// rangeAnd does after "between", "de" and the like ("de 23 a 27 de
	// novembro", "between 24 December and 1 January").
	rangeTo  = `(?:-|to|till|until|through|thru|bis(?: zum| zur| einschl\w*\.?| inkl\w*\.?)?|au|al|all'|alla|fino al|fino a|fino all'|tot(?: en met)?|t/m|hasta(?: el)?|ate(?: ao| a)?(?: dia)?|jusqu'?au)`
	rangeGap = regexp.MustCompile(`^[\s.]*` + rangeTo + `\s*(?:the |le |el |il |o |dem |den |zum )?$`)
	rangeDay = regexp.MustCompile(`\b\d{1,2}(?:st|nd|rd|th|er|e|\.)?\s*` + rangeTo + `\s*(?:the |le |el |il |o |dem |den |zum )?$`)
	rangeAnd = regexp.MustCompile(`\b(?:between|entre|zwischen|tussen|tra|fra|de|del|desde|van)\s+(?:el |le |the |dem )?(?:\d{1,2}(?:st|nd|rd|th|er|e|\.)?|\S+)?\s*$`)
	andGap   = regexp.MustCompile(`^[\s.]*(?:and|y|et|e|en|und|a)\s*(?:the |le |el |il |o |dem )?$`)
	andDay   = regexp.MustCompile(`\b(?:between|entre|zwischen|tussen|tra|fra|de|del|desde|van)\s+(?:el |le |the |dem )?\d{1,2}(?:st|nd|rd|th|er|e|\.)?\s*(?:and|y|et|e|en|und|a)\s*(?:the |le |el |il |o |dem )?$`)
	// fromWord before a date makes it the return when the clause says the
	// writer is there again ("ab dem 14.12. wieder im Büro", "vanaf 8
	// januari weer op kantoor", "dès le lundi joignable"), and the start of
	// the absence otherwise ("ab 20.11. im Urlaub").
	fromWord = regexp.MustCompile(`\b(ab|ab dem|ab den|vanaf|a partir (?:du|de|del|do|d')|des le|desde(?: el)?|dal|dall'|dalla|from|as of|starting)\s*$`)
	presence = regexp.MustCompile(`\b(wieder|zuruck|erreichbar|im buro|back|in the office|available|reachable|de retour|disponible|joignable|au bureau|de vuelta|de nuevo|en la oficina|terug|weer|bereikbaar|aanwezig|op kantoor|di nuovo|rientr\w*|in ufficio|in sede|disponibile|de volta|disponivel|no escritorio)\b`)
	negated  = regexp.MustCompile(`\b(nicht|kein|niet|not|no|pas|non|nao)\s+(?:\S+\s+)?$`)
	// backAfter follows a date it makes a return date ("am 7. Dezember
	// wieder da", "morgen ben ik weer", "amanhã estarei de volta").
	backAfter = regexp.MustCompile(`^[\s,.)]*(?:(?:i'?m|i am|i will be|i'll be|ich bin|bin ich|je serai|je suis|estare|estoy|ben ik|sono|saro|estarei|estou)\s+)?(?:again\s+)?(back|wieder|zuruck|de retour|de vuelta|de volta|terug|weer|di nuovo|di ritorno|de nuevo)\b`)
	// usSigns mark an English notice as American, which writes numbers
	// month first ("12/14"): the words, time zones and phone numbers of
	// the United States.
	usSigns = regexp.MustCompile(`\b(vacation|pto|thanksgiving|[ecmp][sd]t)\b|\(\d{3}\)\s*\d{3}-\d{4}|\+1[\s.-]\d{3}`)
	// sentenceEnd ends a clause that a return date's words must share.
	sentenceEnd = regexp.MustCompile(`[\n!?;]|\.\s+[a-z']`)
)

// mention is a date a message names, at byte offsets of its text.
type mention struct {
	at, end int
	t       time.Time
	// exact: the text names the day (a date, not a weekday or
	// "tomorrow").
	exact bool
	// weekday is a bare weekday's day (-1 for other mentions): it counts
	// from the absence's last day when one was named before it ("until
	// Friday 4 December, back Monday").
	weekday time.Weekday
}

// returnText is body as the date rules read it: lower case, without
// accents, ß as ss, typographic apostrophes and dashes as ASCII ones.
func returnText(body string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(body)) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'ß':
			b.WriteString("ss")
		case r == '’' || r == '‘' || r == '`':
			b.WriteByte('\'')
		case r == '–' || r == '—' || r == '‑':
			b.WriteByte('-')
		case unicode.IsSpace(r) && r != '\n':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// returnDate finds when an away sender is back, within the next 180 days
// of received's day in received's zone:
//
//   - the date the message ties to being back ("returning Monday,
//     December 7", "ab dem 14.12. wieder im Büro", "de retour le 3
//     décembre");
//   - else the day after the absence's last day, skipping the weekend,
//     when the message names a range ("from 20/11 to 01/12", "vom 30.11.
//     bis 4.12.") or an inclusive end ("through Friday", "bis
//     einschließlich", "tot en met", "jusqu'au 7 inclus");
//   - else the date the absence lasts until ("until", "bis", "jusqu'au",
//     "hasta el", "tot", "fino al", "até").
//
// A date beats a bare weekday and "tomorrow" whatever the order of these,
// and a weekday beside a date is that date ("until Monday, Dec 7th" is
// December 7 whatever day the message came). An auto-reply that ties no
// date but names exactly one is back on it; a person's message names its
// return date or has none.
func returnDate(body string, received time.Time, auto bool) (time.Time, bool) {
	if received.IsZero() {
		return time.Time{}, false
	}
	text := returnText(body)
	day := time.Date(received.Year(), received.Month(), received.Day(), 0, 0, 0, 0, received.Location())
	within := func(t time.Time) bool { return t.After(day) && t.Before(day.AddDate(0, 0, 181)) }
	ms := mentions(text, day)
	// best holds, by rank, the first date of each kind: an exact date
	// tied to being back, an exact end, a relative return, a relative
	// end.
	var best [4]time.Time
	var last time.Time // the last exact end named, which a later weekday counts from
	for i, m := range ms {
		exact := m.exact
		if m.weekday >= 0 && !last.IsZero() {
			from := last
			if from.Before(day) {
				from = day
			}
			m.t, exact = following(from, m.weekday), true
		}
		before, after := text[:m.at], text[m.end:]
		if i > 0 {
			before = text[ms[i-1].end:m.at]
		}
		if i+1 < len(ms) {
			after = text[m.end:ms[i+1].at]
		}
		clause := clauseOf(before, after)
		startsRange := i+1 < len(ms) && (rangeGap.MatchString(after) || (andGap.MatchString(after) && rangeAnd.MatchString(before)))
		endsRange := (i > 0 && (rangeGap.MatchString(before) || (andGap.MatchString(before) && rangeAnd.MatchString(text[:ms[i-1].at])))) ||
			rangeDay.MatchString(before) || andDay.MatchString(before) || inclusiveBefore.MatchString(before) || inclusiveAfter.MatchString(after)
		rank, t := -1, m.t
		// Words of being back between two dates belong to the second
		// ("tomorrow, back on Wednesday").
		backNext := i+1 < len(ms) && tied(backWord, after)
		switch {
		case tied(backWord, before) || (backAfter.MatchString(after) && !backNext) || (!startsRange && fromWord.MatchString(before) && present(clause)):
			rank = 0
		case endsRange:
			rank, t = 1, nextWorkingDay(m.t)
		case tied(untilWord, before):
			rank = 1
		}
		if rank < 0 {
			continue
		}
		if exact {
			last = m.t
		} else {
			rank += 2
		}
		if best[rank].IsZero() && within(t) {
			best[rank] = t
		}
	}
	for _, t := range best {
		if !t.IsZero() {
			return t, true
		}
	}
	if !auto {
		return time.Time{}, false
	}
	// An auto-reply that ties no date to its absence is back on the one
	// date it names, if it names one.
	var one time.Time
	for _, m := range ms {
		if !m.exact || !within(m.t) {
			continue
		}
		if !one.IsZero() && !one.Equal(m.t) {
			return time.Time{}, false // several dates, none tied to being back
		}
		one = m.t
	}
	return one, !one.IsZero()
}

// tied reports whether text, the words between the previous date and
// this one, ends with one of words within 40 bytes and the same sentence.
func tied(words *regexp.Regexp, text string) bool {
	if len(text) > 40 {
		text = text[len(text)-40:]
	}
	if loc := sentenceEnd.FindAllStringIndex(text, -1); loc != nil {
		text = text[loc[len(loc)-1][0]+1:]
	}
	return words.MatchString(text)
}

// clauseOf is the clause around a date: the words before it and after it
// up to the sentence's ends or the neighbouring dates.
func clauseOf(before, after string) string {
	if loc := sentenceEnd.FindAllStringIndex(before, -1); loc != nil {
		before = before[loc[len(loc)-1][0]+1:]
	}
	if loc := sentenceEnd.FindStringIndex(after); loc != nil {
		after = after[:loc[0]]
	}
	return before + " " + after
}

// present reports whether a clause says the writer is there again, and
// not that they are not ("nicht erreichbar").
func present(clause string) bool {
	for _, loc := range presence.FindAllStringIndex(clause, -1) {
		if !negated.MatchString(clause[:loc[0]]) {
			return true
		}
	}
	return false
}

// following is the first day after from that falls on wd.
func following(from time.Time, wd time.Weekday) time.Time {
	n := (int(wd) - int(from.Weekday()) + 7) % 7
	if n == 0 {
		n = 7
	}
	return from.AddDate(0, 0, n)
}

// nextWorkingDay is the first weekday after t: the day back after an
// absence that ends on t.
func nextWorkingDay(t time.Time) time.Time {
	t = t.AddDate(0, 0, 1)
	for t.Weekday() == time.Saturday || t.Weekday() == time.Sunday {
		t = t.AddDate(0, 0, 1)
	}
	return t
}

// mentions returns the dates text names, in the order they appear, read
// from day (the day received, at midnight in the sender's zone). A date
// without a year is the next such date from day; a date may lie in the
// past (a range's first day), and returnDate keeps only those ahead.
func mentions(text string, day time.Time) []mention {
	loc := day.Location()
	date := func(y, m, d int) time.Time {
		t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, loc)
		if m < 1 || m > 12 || d < 1 || t.Month() != time.Month(m) {
			return time.Time{}
		}
		return t
	}
	// dated is a date with the year it gives, else the next such date.
	dated := func(y string, m, d int) time.Time {
		if y != "" {
			year, _ := strconv.Atoi(y)
			if year < 100 {
				year += 2000
			}
			return date(year, m, d)
		}
		t := date(day.Year(), m, d)
		if !t.IsZero() && t.Before(day) {
			t = date(day.Year()+1, m, d)
		}
		return t
	}
	within := func(t time.Time) bool { return t.After(day) && t.Before(day.AddDate(0, 0, 181)) }
	us := english.in(fold(text)) && (usSigns.MatchString(text) || monthDayDay.MatchString(text))
	var found []mention
	each := func(re *regexp.Regexp, f func(sub func(int) string) (time.Time, bool)) {
		for _, g := range re.FindAllStringSubmatchIndex(text, -1) {
			sub := func(k int) string {
				if g[2*k] < 0 {
					return ""
				}
				return text[g[2*k]:g[2*k+1]]
			}
			if t, exact := f(sub); !t.IsZero() {
				found = append(found, mention{at: g[0], end: g[1], t: t, exact: exact, weekday: -1})
			}
		}
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	each(isoDay, func(sub func(int) string) (time.Time, bool) {
		return date(num(sub(1)), num(sub(2)), num(sub(3))), true
	})
	numeric := len(found)
	each(numericDay, func(sub func(int) string) (time.Time, bool) {
		// A dash joins numbers only in a full date (15-03-2027), and both
		// separators are the same.
		if (sub(4) != "" && sub(4) != sub(2)) || (sub(2) == "-" && sub(5) == "") {
			return time.Time{}, false
		}
		a, b := num(sub(1)), num(sub(3))
		// The language's order first (month first only in American
		// English); the other when only it gives a date ahead.
		first, second := dated(sub(5), b, a), dated(sub(5), a, b)
		if us && sub(2) == "/" {
			first, second = second, first
		}
		if first.IsZero() || (!within(first) && within(second)) {
			return second, true
		}
		return first, true
	})
	// The dot after a day and month written with dots is theirs ("ab
	// 7.12. wieder"), not the end of a sentence.
	for i := numeric; i < len(found); i++ {
		m := &found[i]
		if strings.Count(text[m.at:m.end], ".") == 1 && strings.HasPrefix(text[m.end:], ".") {
			m.end++
		}
	}
	each(dayMonthDay, func(sub func(int) string) (time.Time, bool) {
		return dated(sub(3), dateMonths[sub(2)], num(sub(1))), true
	})
	each(monthDayDay, func(sub func(int) string) (time.Time, bool) {
		return dated(sub(3), dateMonths[sub(1)], num(sub(2))), true
	})
	// "July 13-24": the second day is a mention of its own, so that the
	// range's last day is read like any other.
	for _, g := range monthDayEnd.FindAllStringSubmatchIndex(text, -1) {
		m, d1, d2 := dateMonths[text[g[2]:g[3]]], num(text[g[4]:g[5]]), num(text[g[6]:g[7]])
		t := dated("", m, d2)
		if d2 < d1 {
			t = dated("", m%12+1, d2)
		}
		if !t.IsZero() {
			found = append(found, mention{at: g[6], end: g[7], t: t, exact: true, weekday: -1})
		}
	}
	// A day without a month is the next such day.
	onDay := func(d int, wd int) time.Time {
		first := time.Time{}
		for k := range 12 {
			t := time.Date(day.Year(), day.Month()+time.Month(k), d, 0, 0, 0, 0, loc)
			if t.Day() != d || !t.After(day) {
				continue // no such day that month ("the 31st"), or not ahead
			}
			if wd < 0 || int(t.Weekday()) == wd {
				return t
			}
			if first.IsZero() {
				first = t
			}
		}
		return first
	}
	each(ordinalDay, func(sub func(int) string) (time.Time, bool) { return onDay(num(sub(1)), -1), true })
	each(weekdayDay, func(sub func(int) string) (time.Time, bool) {
		return onDay(num(sub(2)), dateWeekdays[sub(1)]), true
	})
	each(tomorrowDay, func(func(int) string) (time.Time, bool) { return day.AddDate(0, 0, 1), false })
	each(dayAfter, func(func(int) string) (time.Time, bool) { return day.AddDate(0, 0, 2), false })
	each(nextWeek, func(func(int) string) (time.Time, bool) { return following(day, time.Monday), false })
	for _, g := range weekdayOnly.FindAllStringSubmatchIndex(text, -1) {
		wd := time.Weekday(dateWeekdays[text[g[2]:g[3]]])
		found = append(found, mention{at: g[0], end: g[1], t: following(day, wd), weekday: wd})
	}
	// Where matches overlap, a date beats a weekday or "tomorrow", and a
	// longer match a shorter one ("7th of December" over "the 7th").
	slices.SortStableFunc(found, func(a, b mention) int {
		if a.exact != b.exact {
			if a.exact {
				return -1
			}
			return 1
		}
		return (b.end - b.at) - (a.end - a.at)
	})
	var out []mention
	for _, m := range found {
		if !slices.ContainsFunc(out, func(o mention) bool { return m.at < o.end && o.at < m.end }) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b mention) int { return a.at - b.at })
	// A weekday beside a date is part of it: "Monday, December 7th",
	// "Mittwoch, 9.12.", "next Monday (November 30)", "12 March (Friday)".
	for i := 0; i+1 < len(out); i++ {
		a, b := out[i], out[i+1]
		switch {
		case a.weekday >= 0 && b.exact && besideBefore.MatchString(text[a.end:b.at]):
			b.at = a.at
		case a.exact && b.weekday >= 0 && besideAfter.MatchString(text[a.end:b.at]):
			a.end = b.end
			b = a
		default:
			continue
		}
		out[i] = b
		out = slices.Delete(out, i+1, i+2)
	}
	return out
}

var (
	besideBefore = regexp.MustCompile(`^[\s,(]*(?:the |den |der |le |el |il |o |de |dia |op )?\s*$`)
	besideAfter  = regexp.MustCompile(`^[\s,.(]*$`)
)

var (
	emailAddress = regexp.MustCompile(`[A-Za-z0-9._%+'-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	// linkedInProfile is a LinkedIn profile's address; its group is the
	// public identifier.
	linkedInProfile = regexp.MustCompile(`(?i)\blinkedin\.com/in/([a-z0-9][a-z0-9_-]{1,99})`)
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
// sich an", "contactez", "contacta a" and the like, and the first
// LinkedIn profile it gives; nil when it names nobody.
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
	if m := linkedInProfile.FindStringSubmatch(body); m != nil {
		r.LinkedIn = strings.ToLower(m[1])
	}
	if r.Name == "" && r.Email == "" && r.LinkedIn == "" {
		return nil
	}
	return &r
}
