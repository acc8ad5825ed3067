package inbox

import (
	"context"
	"regexp"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/leadline/leadline/senders"
)

// Intent is what a reply means for the sender: the spec's seven values.
type Intent string

// The intents.
const (
	Interested    Intent = "interested"
	Question      Intent = "question"
	NotNow        Intent = "not_now"
	NotInterested Intent = "not_interested"
	OutOfOffice   Intent = "ooo"
	WrongPerson   Intent = "wrong_person"
	Unclear       Intent = "unclear"
)

// Intents lists the seven intents.
var Intents = []Intent{Interested, Question, NotNow, NotInterested, OutOfOffice, WrongPerson, Unclear}

// Valid reports whether i is one of the seven intents.
func (i Intent) Valid() bool {
	for _, v := range Intents {
		if v == i {
			return true
		}
	}
	return false
}

// Incoming is an inbound message as a classifier reads it.
type Incoming struct {
	Subject string
	// Body is the reply's new text, as CleanReply leaves it: without the
	// quoted message, signature and notices.
	Body       string
	Headers    map[string]string
	ReceivedAt time.Time
}

// Classification is what a classifier read in a message.
type Classification struct {
	Intent Intent
	// AutoReply: the message was sent by a machine (RFC 3834 headers, an
	// auto-reply subject, or a whole message that is an away notice), not
	// by the lead.
	AutoReply bool
	// ReturnsAt is when a lead who is away is back, when the message ties
	// a date to it: an auto-reply's delay, a person's note.
	ReturnsAt *time.Time
	// Replacement is the person a "no longer with the company" reply
	// names instead, when it names one.
	Replacement *Replacement
	// Confidence is the classifier's probability of Intent (of the best
	// intent when Review is set), 1 on machine evidence; 0 from a
	// classifier that gives none (Rules).
	Confidence float64
	// Scores is the probability of each of the seven intents, when the
	// classifier gives them.
	Scores map[Intent]float64
	// Review: the classifier was unsure (below its threshold), so Intent
	// is unclear and a member should read the reply.
	Review bool
}

// Classifier reads an inbound message. Rules is the built-in one; a
// model-backed classifier can take its place.
type Classifier interface {
	Classify(ctx context.Context, m Incoming) (Classification, error)
}

// Rules is the built-in classifier: deterministic and offline, by headers,
// subject prefixes and keywords in English, German, French and Spanish.
type Rules struct{}

// Classify reads m. A message is an auto-reply only on machine evidence:
// the auto-reply headers, an auto-reply subject, or a whole message that
// is an away notice (no question, no answer to the outreach). A person's
// reply that also says they are away is a person's reply, with its return
// date.
func (Rules) Classify(_ context.Context, m Incoming) (Classification, error) {
	body := Clean(m.Body)
	text := fold(body)
	received := senderTime(m.ReceivedAt, m.Headers)
	var c Classification
	if machine(m.Headers, fold(m.Subject)) || awayNotice(body) {
		c = Classification{Intent: OutOfOffice, AutoReply: true}
		if left.in(text) || (wrongPerson.in(text) && !oooWords.in(text)) {
			c.Intent = WrongPerson // "I no longer work here" auto-replies
		}
	} else {
		c.Intent = intentOf(body, text)
	}
	if c.Intent == WrongPerson {
		c.Replacement = replacement(body)
	}
	if c.AutoReply || away(text) {
		if t, ok := returnDate(body, received, c.AutoReply); ok {
			c.ReturnsAt = &t
		}
	}
	return c, nil
}

// intentOf decides a person's reply from features rather than fixed
// sentences: who to ask instead, a no (or a request to stop), a later
// (a time ahead together with a deferral), a yes (an agreement or interest
// together with a meeting word or a time), then a question. The order
// settles mixed replies.
func intentOf(body, text string) Intent {
	asks := strings.Contains(body, "?") || question.in(text)
	when := soon.in(text) || weekday.MatchString(text)
	ahead := aheadTime.MatchString(text)
	switch {
	case strings.TrimSpace(text) == "":
		return Unclear
	case wrongPerson.in(text) || left.in(text) || (decides.in(text) && notMe.in(text)):
		return WrongPerson
	case notInterested.in(text) || (stopWord.in(text) && contactWord.in(text) && !welcome.in(text)) || (already.in(text) && satisfied.in(text)) ||
		(removeWord.in(text) && listWord.in(text)) || (bareNo.MatchString(text) && !noProblem.in(text) && !later.in(text)):
		return NotInterested
	case notNow.in(text) || (later.in(text) && deferral.in(text)) || ahead:
		return NotNow
	case interested.in(text) || (agree.in(text) && (meeting.in(text) || when)) || (meeting.in(text) && when):
		return Interested
	case identity.in(text):
		return Unclear
	case asks:
		return Question
	}
	return Unclear
}

// phrases is a list of folded phrases matched on word boundaries; a phrase
// ending in * matches as a word prefix.
type phrases []string

func words(ps ...string) phrases {
	out := make(phrases, len(ps))
	for i, p := range ps {
		star := strings.HasSuffix(p, "*")
		f := strings.TrimSuffix(fold(strings.TrimSuffix(p, "*")), " ")
		if star {
			out[i] = f
		} else {
			out[i] = f + " "
		}
	}
	return out
}

func (ps phrases) in(text string) bool {
	for _, p := range ps {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// fold lower-cases s, drops accents and turns every run of characters
// other than letters and digits into one space (so "l'année" is "l annee"
// and "don't" is "don t", in the text and the phrases alike), with a space
// at each end, so that phrases match on word boundaries.
func fold(s string) string {
	var b strings.Builder
	b.WriteByte(' ')
	space := true
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case r == 'ß':
			b.WriteString("ss")
			space = false
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			r = unicode.ToLower(r)
		default:
			if !space {
				b.WriteByte(' ')
				space = true
			}
			continue
		}
		b.WriteRune(r)
		space = false
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}

// machine recognizes a message a machine sent by its headers or its
// subject.
func machine(headers map[string]string, subject string) bool {
	return senders.MachineHeaders(headers) || autoSubject.prefixOf(subject)
}

// prefixOf reports whether the folded subject starts with one of ps.
func (ps phrases) prefixOf(subject string) bool {
	for _, p := range ps {
		if strings.HasPrefix(subject, " "+strings.TrimPrefix(p, " ")) {
			return true
		}
	}
	return false
}

var (
	autoSubject = words("automatic reply", "auto reply", "autoreply", "auto", "out of office", "ooo", "away",
		"abwesenheitsnotiz", "abwesend", "automatische antwort", "automatische antwort", "urlaub",
		"reponse automatique", "absence", "absent", "message d'absence",
		"respuesta automatica", "fuera de la oficina", "ausente", "ausencia")
	oooWords = words(
		"out of the office", "out of office", "on annual leave", "on parental leave", "on maternity leave", "on paternity leave",
		"limited access to email", "limited access to my email", "no access to email", "without access to email",
		"will respond on my return", "will reply when i am back", "will respond when i am back", "when i'm back", "upon my return",
		"nicht im buro", "ausser haus", "keinen zugriff auf meine e mails", "keinen zugriff auf e mails", "wieder erreichbar", "im urlaub", "bin ich wieder fur sie da",
		"absent du bureau", "absente du bureau", "en conges", "acces limite", "a mon retour", "je suis absent", "je suis absente",
		"fuera de la oficina", "de vacaciones", "acceso limitado", "a mi regreso", "me encuentro ausente", "estoy ausente")
	wrongPerson = words(
		"not the right person", "not the right contact", "wrong person", "isn't my area", "not my area", "not my department",
		"not responsible for", "contact my colleague", "talk to my colleague", "should talk to", "reach out to", "reaching out to",
		"wrong department", "falsche abteilung", "mauvais service", "departamento equivocado", "suggest our", "i d suggest", "fragen sie",
		"pregunta a", "demandez a", "no llevo ese tema", "not the decision maker", "kein entscheider", "pas decisionnaire", "no decido",
		"the one to ask", "handles vendor", "try our", "personne en charge", "vous transfere", "you'll want to contact", "you should contact", "ask for", "this would be for", "would be for our",
		"is handled by", "in charge of",
		"nicht zustandig", "nicht der richtige", "nicht die richtige", "bei mir falsch", "wenden sie sich an", "wenden sie sich bitte an",
		"versuchen sie es bei", "ansprechpartner ist", "richtige ansprechpartner",
		"pas la bonne personne", "pas le bon interlocuteur", "pas mon domaine", "voyez avec", "adressez vous", "ne m'occupe pas", "contactez plutot",
		"no soy la persona", "no es mi area", "no me encargo", "contacta a", "habla con", "escribe a compras", "persona adecuada")
	// left: the lead is no longer at the company.
	left = words("no longer here", "not here anymore", "moved on from", "my replacement", "her replacement", "his replacement", "i m the replacement", "no longer work", "no longer with", "no longer at", "left the company", "i left", "i retired", "retired last", "not with the company",
		"nicht mehr bei", "nicht mehr dort", "nicht mehr in der", "arbeite nicht mehr", "nicht mehr tatig", "im ruhestand", "firma verlassen",
		"ne travaille plus", "ne suis plus dans", "plus dans l'entreprise", "ai quitte", "a la retraite",
		"ya no trabajo", "ya no estoy", "deje la empresa", "estoy jubilad*")
	notInterested = words(
		"not interested", "no thanks", "no thank you", "remove me", "remove my", "remove us", "take me off", "unsubscribe",
		"we're all set", "we are all set", "not a fit", "not looking for", "this is spam", "no interest", "not for us", "not buying", "no need",
		"kein interesse", "nicht interessiert", "entfernen sie mich", "nein danke", "keine weiteren", "abmelden", "kein bedarf", "keinen bedarf",
		"brauchen wir nicht", "nichts fur uns",
		"pas interesse", "pas interessee", "pas interesses", "non merci", "retirer de", "retirez moi", "ne nous interesse pas", "aucun interet",
		"desinscri*", "pas besoin",
		"no me interesa", "no nos interesa", "no estamos interesados", "no gracias", "elimina*", "dame de baja", "darme de baja",
		"no es para nosotros", "pero no", "no lo necesitamos", "no necesitamos",
		"hard pass", "i ll pass", "we ll pass", "pass on this", "don t need", "do not need", "no hace falta", "ne nous concerne pas",
		"ne concerne pas", "betrifft uns nicht", "stop merci", "stop thanks", "stop please", "not switching", "wechseln nicht", "never use", "ever use", "no usaremos",
		"nicht nutzen", "n utiliserons")
	// already with satisfied: "we already use X and are happy".
	already   = words("already", "bereits", "schon", "deja", "ya", "currently", "using", "use", "utilisons", "usamos", "nutzen")
	satisfied = words("happy with", "satisfied", "not switching", "zufrieden", "wechseln nicht", "contento*", "satisfait*", "concurrent",
		"competitor", "otra herramienta", "another tool", "eine losung", "un outil", "proveedor", "a solution", "a tool")
	// removeWord with listWord: "take me off your list", "quítame de tu lista".
	removeWord = words("delete", "erase", "losch*", "remove", "take me off", "take us off", "nehmen sie mich", "streichen", "entfernen", "retire*", "supprime*", "enleve*",
		"quita*", "saca*", "borra*", "elimin*")
	listWord = words("list", "mailing", "data", "details", "daten", "coordonnees", "donnees", "datos", "information", "verteiler", "liste", "lista", "database", "datenbank", "base de donnees", "base de datos")
	// bareNo is a reply that is, or opens with, a plain no.
	bareNo    = regexp.MustCompile(`^ (no|nope|nein|non|nah|pass) |( so| then) no $|^ stop $`)
	noProblem = words("no problem", "no worries", "kein problem", "pas de probleme", "no hay problema", "no pasa nada")
	// decides with notMe: "purchasing is decided by X, not me".
	decides = words("decid*", "decision*", "entscheid*", "purchasing", "achats", "macht bei uns", "look after", "in charge", "en charge", "zustandig")
	notMe   = words("not me", "not i", "nicht ich", "pas moi", "no yo", "don t make", "ne decide pas", "isn t something i", "not something i")
	// stopWord with contactWord: "please stop writing", "nicht mehr schreiben".
	stopWord    = words("never", "stop", "don't", "do not", "no more", "nicht mehr", "nicht", "ne plus", "ne me", "deja de", "dejen de", "no me vuelvas", "no vuelva")
	contactWord = words("writ*", "email*", "mail*", "contact*", "follow up", "messag*", "schreib*", "kontaktier*", "ecri*", "escrib*", "mensaje*")
	welcome     = words("hesitate", "feel free", "zogern", "hesitez", "dudes")
	notNow      = words(
		"not right now", "not now", "not for now", "maybe later", "later this year", "next quarter", "next year", "check back",
		"circle back", "try me again", "bad timing", "timing isn't", "not a priority", "revisit", "not this year", "not this quarter",
		"aktuell nicht", "derzeit nicht", "derzeit kein", "im moment passt", "vielleicht spater", "schlechter zeitpunkt", "nicht vor",
		"fruhestens", "keine kapazitat*",
		"pas pour le moment", "pas le bon moment", "pas maintenant", "plus tard", "on en reparle", "pas avant", "pas le temps",
		"ahora no", "no es buen momento", "mas adelante", "por ahora no", "no antes", "mas tarde")
	// later is a time ahead; deferral says to wait for it.
	later = words("later", "then", "quarter", "q1", "q2", "q3", "q4", "next year", "next month", "months", "year", "2027", "2028",
		"summer", "spring", "autumn", "fall", "winter", "holidays", "january", "february", "march", "april", "june", "july", "august",
		"september", "october", "november", "december", "new year",
		"spater", "quartal", "nachsten quartal", "nachstes jahr", "monaten", "jahr", "sommer", "fruhjahr", "fruhling", "herbst",
		"januar", "februar", "marz", "juni", "juli", "oktober", "dezember", "messe",
		"trimestre", "annee", "mois", "ete", "printemps", "automne", "hiver", "fetes", "janvier", "fevrier", "mars", "avril", "juin",
		"septembre", "octobre", "novembre", "decembre",
		"adelante", "ano", "meses", "verano", "primavera", "otono", "invierno", "fiestas", "enero", "febrero", "marzo", "abril", "mayo",
		"junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre")
	deferral = words("keine zeit", "momentan", "too early", "trop tot", "ask me again", "heads down", "dann gerne", "reprenez", "mejor en", "but", "aber", "mais", "pero", "reach out", "try again", "try me", "get back to me", "follow up in", "reconnect", "ping me", "talk again", "busy",
		"swamped", "locked in", "bandwidth", "not before", "not until", "budget", "right now", "at the moment", "timing", "reorg",
		"melden", "ausgelastet", "kapazitat*", "budget", "derzeit", "aktuell", "zurzeit", "im moment", "gerade", "noch mal", "noch einmal",
		"angehen", "auf mich zu", "umstellung",
		"revenez", "recontact*", "relance*", "pas de budget", "en ce moment", "reparle*", "verrons", "reorganisation",
		"escribeme", "vuelve a", "retom*", "liados", "a tope", "ahora", "presupuesto", "contactame", "cerrando")
	interested = words(
		"interested", "interesting", "sounds good", "sounds great", "let's talk", "let's chat", "happy to chat", "happy to connect",
		"set up a call", "learn more", "keen", "love to", "count me in", "on our radar", "i m curious", "i ll bite",
		"need something like this", "en savoir plus", "cuentame mas", "set something up", "relevant", "pertinent",
		"interessiert", "interessant", "klingt gut", "klingt interessant", "hort sich", "mehr erfahren", "suchen genau",
		"m'interesse", "interessee", "nous interesser", "avec plaisir", "volontiers", "parlons", "partant", "bonne idee",
		"me interesa", "interesada", "interesado", "interesante", "con gusto", "hablemos", "me encantaria", "me gustaria")
	// agree is a yes; meeting is something to meet for.
	agree = words("yes", "yeah", "yep", "adelante", "alright", "go ahead", "ok", "okay", "curious", "veux bien", "vale", "passt", "sure", "absolutely", "definitely", "let's", "happy to", "would be great", "great", "timely", "of course",
		"ja", "gerne", "gern", "machen wir", "spannend", "klar", "super", "perfekt",
		"oui", "d'accord", "pourquoi pas", "ca marche", "parfait", "tres bien",
		"si", "claro", "perfecto", "de acuerdo", "vale", "genial", "por supuesto")
	meeting = words("walkthrough", "zeigen", "show", "call", "chat", "minutes", "minuten", "min", "present*", "discuss", "see it", "libre", "cuentame", "demo*", "meet*", "speak", "talk", "slot*", "times", "time", "invite", "invitation", "calendar",
		"schedule", "book", "show me", "in action", "walk me", "zoom", "free",
		"termin*", "zeitfenster", "gesprach", "telefon*", "anruf*", "rufen", "zeit", "kalender", "vorstellen",
		"rendez vous", "appel*", "creneau", "echange", "agenda", "disponible", "dispo", "reunion", "visio",
		"llamada", "llam*", "hablamos", "agend*", "invitacion", "videollamada", "calendario", "horario", "disponibilidad")
	soon = words("next week", "this week", "tomorrow", "today", "am", "pm", "morning", "afternoon",
		"nachste woche", "nachsten woche", "diese woche", "morgen", "vormittag", "nachmittag", "uhr",
		"semaine prochaine", "cette semaine", "demain", "matin", "apres midi",
		"semana que viene", "proxima semana", "esta semana", "manana", "tarde")
	question = words(
		"how much", "what does", "pricing", "price", "cost", "can you send", "could you share", "send over", "more details", "case study",
		"free trial", "integrate",
		"was kostet", "wie viel", "preis*", "kosten", "mehr informationen", "unterlagen", "schnittstelle",
		"combien", "tarifs", "plus d'informations", "plaquette",
		"cuanto", "precios", "mas informacion", "presentacion")
	identity = words("who is this", "wer sind sie", "qui etes vous", "quien eres", "quien es usted")
)

var english = words("the", "until", "and", "i'm", "i am", "back")

var months = map[string]int{}
var weekdays = map[string]time.Weekday{}

var isoDate, numDate, dayMonth, monthDay, weekday, tomorrow, aheadTime *regexp.Regexp

// laterTimes are the seasons, months and periods aheadTime reads.
var laterTimes = []string{"spring", "summer", "autumn", "fall", "winter", "new year", "next year", "q[1-4]", "january", "february", "march",
	"april", "june", "july", "august", "september", "october", "november", "december", "a few months", "\\w+ months",
	"fruhjahr", "fruhling", "sommer", "herbst", "winter", "januar", "februar", "marz", "juni", "juli", "oktober", "dezember", "\\w+ monaten", "neuen jahr",
	"printemps", "ete", "automne", "hiver", "janvier", "fevrier", "mars", "avril", "juin", "juillet", "septembre", "octobre", "novembre",
	"decembre", "quelques mois", "fetes", "primavera", "verano", "otono", "invierno", "enero", "febrero", "marzo", "abril", "mayo", "junio",
	"julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre", "unos meses", "las fiestas"}

func init() {
	for m, names := range [][]string{
		{"january", "jan", "januar", "janvier", "enero"},
		{"february", "feb", "februar", "fevrier", "febrero"},
		{"march", "mar", "marz", "mars", "marzo"},
		{"april", "apr", "avril", "abril"},
		{"may", "mai", "mayo"},
		{"june", "jun", "juni", "juin", "junio"},
		{"july", "jul", "juli", "juillet", "julio"},
		{"august", "aug", "aout", "agosto"},
		{"september", "sep", "sept", "septembre", "septiembre"},
		{"october", "oct", "oktober", "octobre", "octubre"},
		{"november", "nov", "novembre", "noviembre"},
		{"december", "dec", "dezember", "decembre", "diciembre", "dic"},
	} {
		for _, n := range names {
			months[n] = m + 1
		}
	}
	for d, names := range [][]string{
		{"sunday", "sonntag", "dimanche", "domingo"},
		{"monday", "montag", "lundi", "lunes"},
		{"tuesday", "dienstag", "mardi", "martes"},
		{"wednesday", "mittwoch", "mercredi", "miercoles"},
		{"thursday", "donnerstag", "jeudi", "jueves"},
		{"friday", "freitag", "vendredi", "viernes"},
		{"saturday", "samstag", "samedi", "sabado"},
	} {
		for _, n := range names {
			weekdays[n] = time.Weekday(d)
		}
	}
	monthNames := alternation(months)
	isoDate = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	numDate = regexp.MustCompile(`\b(\d{1,2})([./])(\d{1,2})(?:[./](\d{4}|\d{2}))?\b`)
	dayMonth = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th|er)?\.?\s+(?:de\s+)?(` + monthNames + `)\b`)
	monthDay = regexp.MustCompile(`\b(` + monthNames + `)\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b`)
	weekday = regexp.MustCompile(`\b(` + alternation(weekdays) + `)\b`)
	tomorrow = regexp.MustCompile(`\b(tomorrow|demain)\b`)
	// aheadTime is a time ahead named as when to come back: "in spring",
	// "after the holidays", "en septembre", "im Januar", "después de".
	aheadTime = regexp.MustCompile(` (in|after|en|apres|im|nach|vor|despues de|a partir de)( the| our| el| la| le| l| les| los| las| dem| den| der)? (` +
		strings.Join(laterTimes, "|") + `) `)
}

func alternation[V any](m map[string]V) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, regexp.QuoteMeta(n))
	}
	// Longer names first, so that "sept" is not read as "sep".
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if len(names[j]) > len(names[i]) || (len(names[j]) == len(names[i]) && names[j] < names[i]) {
				names[i], names[j] = names[j], names[i]
			}
		}
	}
	return strings.Join(names, "|")
}
