package inbox

import (
	"regexp"
	"strings"
)

// cues are groups of folded phrases, in the seven languages of the
// training corpus, that mean the same thing whatever the language: "take
// me off your list", "not my area", "I left the company", a time ahead.
// The model reads each group as one feature, so what it learns about a
// cue from the languages it has many replies in carries over to the
// others. A phrase ending in * matches as a word prefix.
var cues = []struct {
	name string
	ps   phrases
}{
	{"stop", words("remove me", "remove my", "remove us", "take me off", "take us off", "unsubscribe", "stop emailing", "stop writing",
		"stop sending", "stop contacting", "don t contact", "do not contact", "don t email", "don t write", "don t follow up", "delete my",
		"erase my", "delete any", "off your list", "your mailing list", "no more emails", "stop please", "please stop",
		"verteiler", "von ihrer liste", "aus ihrer liste", "nicht mehr schreiben", "schreiben sie mir nicht", "nicht mehr kontaktier*",
		"nicht weiter kontaktier*", "keine weiteren", "loschen sie", "meine daten", "kontaktdaten", "nehmen sie mich", "streichen sie mich",
		"desinscri*", "retirez moi", "me retirer", "retirer de", "ne plus m ecrire", "ne plus me contacter", "ne plus me relancer",
		"supprimez", "mes donnees", "mes coordonnees", "recontacte",
		"dame de baja", "darme de baja", "eliminame", "eliminen mis", "elimina mis", "borra mis", "borren mis", "mis datos",
		"deja de escribir*", "no me escribas", "no vuelvas a escribir*", "no me vuelvas", "quitame", "quitadme", "no quiero que me",
		"uitschrijven", "van de lijst", "van uw lijst", "van jullie lijst", "mailinglijst", "verwijder mijn", "mijn gegevens", "niet meer mailen",
		"geen mails meer", "niet meer benaderd", "stop met mailen",
		"toglietemi", "togliete", "cancellate i miei", "i miei dati", "non scrivermi", "smettete di scriver*", "disiscriv*", "non voglio essere",
		"niente piu email", "retire me", "apaguem", "os meus dados", "nao me contacte", "pare de me enviar", "nao quero voltar",
		"chega de e mails", "cancelem a minha")},
	{"notint", words("not interested", "no interest", "not for us", "not a fit", "no thanks", "no thank you", "thanks but no", "hard pass",
		"we ll pass", "i ll pass", "not relevant", "doesn t apply", "not something we", "not looking for", "we decided against", "firm no",
		"kein interesse", "nicht interessiert", "nichts fur uns", "uninteressant", "betrifft uns nicht", "nein danke", "passt nicht zu uns",
		"lehnen wir ab", "nicht weiterverfolgen",
		"pas interesse*", "ne nous interesse pas", "ne m interesse pas", "aucun interet", "non merci", "pas pour nous", "ne correspond pas",
		"ne donnerons pas suite", "ce sera non", "c est non",
		"no me interesa", "no nos interesa", "no estamos interesados", "ningun interes", "no gracias", "no es para nosotros", "no encaja",
		"no vamos a seguir",
		"geen interesse", "nee bedankt", "nee dank", "niet voor ons", "niets voor ons", "niet relevant", "niet mee verder",
		"non mi interessa", "non ci interessa", "non siamo interessati", "no grazie", "non fa per noi", "non e cosa per noi", "non andremo avanti",
		"nao tenho interesse", "nao temos interesse", "nao estamos interessados", "nao obrigad*", "nao e para nos", "nao vamos avancar")},
	{"noneed", words("no need", "don t need", "do not need", "have no use", "no use for", "kein bedarf", "keinen bedarf", "brauchen wir nicht",
		"keine verwendung", "pas besoin", "pas l utilite", "aucun besoin", "no necesitamos", "no lo necesitamos", "no le vemos utilidad",
		"geen behoefte", "niet nodig", "non ne abbiamo bisogno", "nao precisamos")},
	{"have", words("already use", "already have", "already using", "already work with", "happy with", "satisfied", "all set", "went with",
		"chose another", "signed with", "another provider", "another vendor", "another tool", "competitor",
		"bereits", "schon eine", "zufrieden", "anderen anbieter", "versorgt", "wechseln nicht",
		"utilisons deja", "avons deja", "satisfait*", "contents", "autre prestataire", "concurrent",
		"ya usamos", "ya tenemos", "ya trabajamos", "contentos", "satisfechos", "otro proveedor", "otra empresa",
		"gebruiken al", "hebben al", "tevreden", "andere partij", "niet overstappen",
		"usiamo gia", "abbiamo gia", "soddisfatti", "contenti", "altro fornitore",
		"ja usamos", "ja temos", "satisfeitos", "contentes", "outro fornecedor", "nao vamos mudar")},
	{"inhouse", words("in house", "ourselves", "our own", "intern ", "selbst", "en interne", "internamente", "nosotros mismos",
		"doen dit zelf", "doen het zelf", "da soli", "nos mesmos", "cold outreach", "kaltakquise", "prospection", "prospeccion")},
	{"sarcasm", words("just what", "genau das", "exactement ce", "justo lo que", "another sales", "another automated", "noch eine", "schon wieder",
		"encore un", "otro correo", "otro mensaje", "alweer", "weer een", "ennesima", "mais um", "groundbreaking", "impressive persistence",
		"fifth email", "fourth", "vierten", "quatrieme", "cuarto correo", "nice try")},
	{"notme", words("not the right person", "not the right contact", "wrong person", "wrong contact", "not my area", "not my department",
		"not responsible", "not my call", "not my decision", "not the decision maker", "not the one who", "don t make", "not involved",
		"isn t my area", "don t handle", "don t own", "don t buy", "not me", "i m in finance", "i work in", "wrong department",
		"nicht zustandig", "falsche", "falscher", "bei mir falsch", "nicht ich", "entscheide nicht", "keine entscheidungsbefugnis",
		"pas la bonne", "pas le bon interlocuteur", "pas mon domaine", "pas moi qui", "mauvais service", "erreur de destinataire",
		"n ai pas la main", "je m occupe de la",
		"no soy la persona", "no es mi area", "no decido", "no llevo", "equivocad*", "no soy quien", "yo llevo",
		"niet de juiste", "niet mijn afdeling", "ga ik niet over", "verkeerde", "beslis hier niet", "niet degene",
		"non sono la persona", "non e il mio", "non decido io", "sbagliat*", "mi occupo di",
		"nao sou a pessoa", "nao e a minha area", "nao sou eu que", "nao decido eu", "errada", "nao e o meu departamento")},
	{"redirect", words("contact", "reach out to", "talk to", "speak to", "speak with", "you want", "you d want", "you need to speak",
		"forward*", "passed", "cc d", "copying", "in charge", "handles", "owns", "runs", "looks after", "best person",
		"wenden sie sich", "ansprechpartner*", "zustandig ist", "weitergeleitet", "weiterleiten", "leite", "fragen sie", "kummert sich",
		"voyez avec", "contactez", "adressez", "transfere", "transmis", "fait suivre", "interlocut*", "c est elle qui", "c est lui qui",
		"habla con", "contacta", "escribe a", "escriba a", "reenviado", "te paso con", "pregunta a", "dirijase", "se encarga",
		"neem contact", "doorgestuurd", "moet je bij", "gaat hierover", "probeer",
		"contatta", "scrivi a", "inoltrat*", "girato", "se ne occupa", "prova con", "sentire",
		"fale com", "escreva para", "reencaminhei", "contacte", "quem trata", "tente")},
	{"left", words("no longer", "left the company", "i left", "moved on", "my replacement", "my successor", "replacement",
		"retired", "took over", "taken over", "has left", "different company", "changed roles", "not with the company",
		"nicht mehr bei", "nicht mehr im unternehmen", "nicht mehr fur", "nicht mehr tatig", "verlassen", "nachfolger*", "ruhestand", "rente",
		"anderes unternehmen", "meine aufgaben",
		"ne travaille plus", "ne fais plus partie", "quitte", "successeur", "remplacant*", "retraite", "repris mon poste",
		"ya no trabajo", "ya no formo", "deje la", "sustitut*", "jubil*", "asumido mis",
		"niet meer werkzaam", "werk niet meer", "niet meer bij", "opvolger", "pensioen", "taken overgenomen",
		"non lavoro piu", "non faccio piu parte", "lasciato", "sostitut*", "pensione", "preso il mio posto",
		"ja nao trabalho", "ja nao faco parte", "sai da", "substitut*", "reformad*", "minhas funcoes")},
	{"meet", words("call", "demo*", "meeting", "meet", "chat", "talk", "invite", "calendar", "slot", "zoom", "teams", "book", "schedule",
		"walkthrough", "walk me", "in action", "show me", "intro call",
		"termin*", "gesprach", "telefonier*", "einladung", "kalender", "vorstell*", "vorfuhrung", "reden", "sprechen", "zeigen", "rufen sie",
		"rendez vous", "appel*", "creneau", "echange*", "agenda", "visio", "invitation", "demonstration", "point", "montrez",
		"llamada", "llamem*", "reunion", "hablamos", "hablemos", "hablarlo", "invitacion", "calendario", "hueco", "videollamada", "ensename", "agend*",
		"bellen", "afspraak", "gesprek", "uitnodiging", "sparren", "laat maar zien", "laten zien", "plan ", "moment prikken",
		"chiamat*", "appuntamento", "invito", "sentiamoci", "ci sentiamo", "fammi vedere", "mostri", "parliamone",
		"chamada", "reuniao", "convite", "agendar", "marque", "marcar", "ligue*", "falamos", "conversar", "mostre", "mostrar")},
	{"yes", words("yes", "yeah", "yep", "sure", "happy to", "love to", "keen", "let s", "sounds good", "sounds promising", "worth a", "i m in",
		"count me in", "i m curious", "curious", "open to", "works for me", "go ahead", "go for it", "looking forward", "i d like", "would like",
		"ja", "gerne", "gern", "klingt gut", "passt", "bin dabei", "neugierig", "offen fur", "spannend", "machen wir",
		"oui", "volontiers", "avec plaisir", "d accord", "pourquoi pas", "partant", "preneur", "curieux", "ravi", "ca me va",
		"si", "claro", "con gusto", "vale", "me apunto", "encantad*", "me gustaria", "me cuadra", "me viene bien", "por que no", "venga",
		"graag", "prima", "leuk", "top", "benieuwd", "open voor", "waarom niet", "zeker", "schikt",
		"volentieri", "certo", "perfetto", "incuriosit*", "perche no", "va bene", "mi piacerebbe",
		"sim", "com gosto", "curioso", "porque nao", "bora", "gostava", "da me jeito")},
	{"interest", words("interested", "interesting", "interest", "interessiert", "interessant", "interessiert mich", "m interesse", "interesse",
		"interessant", "interesante", "me interesa", "interessante", "mi interessa", "ci interessa", "interessa me", "interessa nos")},
	{"need", words("we need", "looking for", "been looking", "exactly this", "exactly what", "struggling", "problem", "pain", "suchen genau",
		"genau so etwas", "brauchen da", "cherche", "exactement", "buscabamos", "justo lo que", "problema", "zoeken", "precies",
		"cerchiamo", "esattamente", "procuramos", "exatamente", "evaluating", "evalua*", "avaliar", "valutando", "kijken", "schauen uns",
		"etudions", "regardons", "on radar", "radar", "timely", "good timing", "timing is", "bon timing", "buen momento", "goede timing",
		"ottimo tempismo", "bom timing", "richtigen zeit", "a pic", "tombe bien")},
	{"ahead", words("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
		"spring", "summer", "autumn", "fall", "winter", "new year", "next year", "quarter", "q1", "q2", "q3", "q4", "months", "holidays",
		"januar", "februar", "marz", "juni", "juli", "oktober", "dezember", "fruhjahr", "sommer", "herbst", "nachstes jahr", "neuen jahr",
		"quartal", "monaten", "feiertage*", "messe", "halben jahr",
		"janvier", "fevrier", "mars", "avril", "juin", "juillet", "septembre", "octobre", "novembre", "decembre", "printemps", "ete",
		"automne", "rentree", "l an prochain", "annee prochaine", "trimestre", "mois", "fetes",
		"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre",
		"primavera", "verano", "otono", "ano que viene", "proximo ano", "meses", "fiestas", "navidad", "proximo ejercicio",
		"januari", "februari", "maart", "mei", "augustus", "oktober", "voorjaar", "zomer", "najaar", "volgend jaar", "kwartaal",
		"maanden", "feestdagen", "jaarwisseling", "nieuwe jaar",
		"gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "settembre", "ottobre", "estate", "autunno",
		"anno prossimo", "mesi", "feste",
		"janeiro", "fevereiro", "marco", "maio", "junho", "julho", "setembro", "outubro", "verao", "outono", "proximo ano", "festas")},
	{"defer", words("not now", "not right now", "right now", "at the moment", "currently", "bad timing", "terrible timing", "timing",
		"not a priority", "no budget", "budget", "busy", "swamped", "too early", "later", "revisit", "check back", "circle back",
		"reach out again", "try me again", "follow up in", "follow up after", "get back to me", "ask me again", "reconnect", "park this",
		"hiring freeze", "no capacity", "bandwidth", "heads down", "not before", "not this", "after the", "once",
		"aktuell", "momentan", "derzeit", "im moment", "zurzeit", "gerade", "kein budget", "zu fruh", "spater", "melden sie sich",
		"noch einmal", "nochmal", "noch mal", "nicht vor", "fruhestens", "erst im", "danach", "ausgelastet", "prioritat*", "kapazitat*",
		"pas pour le moment", "pour l instant", "en ce moment", "pas le bon moment", "pas de budget", "trop tot", "plus tard", "relance*",
		"recontacte*", "revenez", "reparl*", "pas avant", "priorit*", "deborde*", "a ce moment",
		"ahora no", "ahora mismo", "por ahora", "de momento", "presupuesto", "pronto", "mas adelante", "vuelve a", "escribeme",
		"retom*", "no antes", "a tope", "prioridad", "despues de", "entonces", "todavia",
		"nu even niet", "op dit moment", "momenteel", "geen budget", "te vroeg", "nog eens", "opnieuw", "na de", "daarna", "niet voor",
		"al momento", "per ora", "adesso", "budget", "presto", "piu avanti", "ricontatta*", "risentiamoci", "riparl*", "non prima",
		"dopo", "poi ",
		"agora nao", "neste momento", "orcamento", "cedo", "mais a frente", "mais tarde", "volte a", "depois", "nao antes", "prioridade")},
	{"away", words("out of office", "out of the office", "on leave", "annual leave", "parental leave", "maternity leave", "sick leave",
		"on holiday", "on vacation", "travelling", "away", "limited access", "no access", "not be checking", "will not be forwarded",
		"office is closed", "business trip", "conference",
		"nicht im buro", "ausser haus", "abwesend", "urlaub", "elternzeit", "dienstreise", "geschaftsreise", "keinen zugriff",
		"eingeschrankt", "unregelmassig", "nicht weitergeleitet", "geschlossen", "krank*", "nicht erreichbar",
		"absent*", "conges", "conge", "en deplacement", "acces limite", "ne sera pas transfere", "fermes", "arret maladie",
		"fuera de la oficina", "de vacaciones", "ausente", "de viaje", "de baja", "acceso limitado", "no sera reenviado", "cerrada",
		"afwezig", "niet op kantoor", "vakantie", "verlof", "beperkt", "niet doorgestuurd", "gesloten", "op reis", "ziek",
		"fuori ufficio", "fuori sede", "in ferie", "assente", "congedo", "trasferta", "accesso limitato", "non verra inoltrata",
		"malattia", "maternita", "chiuso",
		"fora do escritorio", "de ferias", "ausente", "licenca", "em viagem", "acesso limitado", "nao sera reencaminhad*", "fechado",
		"de baixa", "encontro me ausente")},
	{"back", words("back on", "be back", "i m back", "return", "upon my return", "when i m back", "reopen",
		"zuruck", "wieder erreichbar", "wieder im buro", "wieder fur sie da", "ruckkehr",
		"de retour", "a mon retour", "retour", "regreso", "de vuelta", "a mi vuelta", "volvere",
		"terug", "weer bereikbaar", "weer aanwezig", "rientr*", "al mio rientro", "regress*", "quando regressar")},
	{"identity", words("my address", "my email", "my e mail", "my details", "my contact", "my number", "gave you", "why me", "why are you",
		"meine adresse", "meine e mail", "meine kontaktdaten", "meine nummer", "mon adresse", "mon e mail", "mes coordonnees", "mon numero",
		"mi direccion", "mi correo", "mis datos de contacto", "mi numero", "mijn adres", "mijn e mail", "mijn e mailadres", "mijn nummer",
		"il mio indirizzo", "la mia email", "i miei contatti", "il mio numero", "o meu endereco", "o meu e mail", "os meus contactos", "o meu numero",
		"who is this", "who are you", "how did you get", "where did you get", "where did you find", "how did you find",
		"who gave you", "do i know you", "did we meet", "have we met", "did we speak", "which company", "is this automated", "real person",
		"wer sind sie", "woher haben sie", "kennen wir uns", "welcher firma", "automatische mail",
		"qui etes vous", "d ou tenez vous", "comment avez vous eu", "on se connait", "quelle societe", "message automatique",
		"quien eres", "de donde has sacado", "como conseguiste", "nos conocemos", "que empresa", "correo automatico",
		"wie bent u", "wie ben je", "hoe komt u aan", "hoe kom je aan", "waar heb je", "kennen we elkaar", "kennen wij elkaar",
		"welk bedrijf", "automatisch bericht",
		"chi e lei", "chi sei", "come ha avuto", "dove ha trovato", "ci conosciamo", "che azienda", "messaggio automatico",
		"quem e", "como conseguiu", "como arranjou", "onde encontrou", "conhecemo nos", "que empresa", "mensagem automatica")},
	{"ack", words("thanks", "thank you", "thx", "noted", "received", "got it", "take a look", "have a look", "will look", "will read",
		"think about", "let me think", "let me check", "get back to you", "come back to you", "keep it in mind", "we ll see",
		"danke", "zur kenntnis", "erhalten", "schaue", "denke daruber", "melde mich", "komme darauf", "mal sehen", "gesehen",
		"merci", "bien recu", "c est note", "je regarde", "reflechir", "je reviens vers", "a voir", "vu",
		"gracias", "recibido", "entendido", "lo miro", "lo pensare", "te digo algo", "ya veremos", "visto",
		"bedankt", "dank", "ontvangen", "kijk ernaar", "denk erover", "kom erop terug", "we zien wel", "gezien",
		"grazie", "ricevuto", "ci penso", "ci do un", "vedremo", "faccio sapere",
		"obrigad*", "recebido", "vou pensar", "vou ver", "vamos ver", "olhadela", "vista de olhos")},
	{"internal", words("internally", "with the team", "with my team", "run it by", "discuss it", "intern", "mit dem team", "en interne",
		"a l equipe", "internamente", "con el equipo", "con mi equipo", "intern door", "met het team", "con il team", "com a equipa")},
	{"ask", words("how much", "what does", "what s the", "what is the", "pricing", "price", "cost", "do you", "does it", "is there",
		"is it", "can you send", "can you share", "could you send", "how long", "how does", "how is", "how do", "which", "where is", "where do",
		"was kostet", "wie viel", "preis*", "kosten", "gibt es", "haben sie", "konnen sie", "wie lange", "wie sieht", "wo ",
		"combien", "tarif*", "prix", "y a t il", "avez vous", "pouvez vous", "est ce que", "quel*", "ou sont", "comment",
		"cuanto", "precio*", "hay ", "teneis", "tienen", "puedes", "se puede", "donde", "como", "que ",
		"wat kost", "prijs*", "is er", "hebben jullie", "kunt u", "kun je", "hoe ", "waar ",
		"quanto", "prezz*", "c e ", "avete", "puo", "dove", "come ",
		"quanto custa", "preco*", "ha ", "tem ", "pode", "onde", "como ")},
	{"product", words("integrat*", "api", "gdpr", "dsgvo", "rgpd", "avg", "trial", "pilot", "onboarding", "setup", "set up", "sso", "crm",
		"data", "hosted", "server*", "contract", "seat", "user*", "license", "support", "case study", "reference*", "one pager", "deck",
		"schnittstelle", "testphase", "einfuhrung", "einrichtung", "daten", "vertrag", "nutzer", "laufzeit", "referenz*", "unterlagen",
		"essai", "mise en place", "donnees", "engagement", "utilisateur*", "plaquette", "integration",
		"prueba", "implementacion", "datos", "permanencia", "usuario*", "caso de exito", "integra",
		"proefperiode", "implementatie", "gegevens", "looptijd", "gebruiker*",
		"prova", "implementazione", "dati", "durata", "utent*", "referenz*",
		"teste", "implementacao", "dados", "fidelizacao", "utilizador*")},
}

// clock is a time of day: "10am", "14:00", "15h", "14 Uhr".
var clock = regexp.MustCompile(`\b\d{1,2}([:.]\d{2})?\s?(am|pm|uhr|h\b)|\b\d{1,2}[:.]\d{2}\b`)

// weekdayCue is a day of the week or a near day in the seven languages.
var weekdayCue = words("monday", "tuesday", "wednesday", "thursday", "friday", "tomorrow", "next week", "this week", "mon", "tue",
	"wed", "thu", "fri",
	"montag", "dienstag", "mittwoch", "donnerstag", "freitag", "morgen", "nachste woche", "diese woche",
	"lundi", "mardi", "mercredi", "jeudi", "vendredi", "demain", "semaine prochaine",
	"lunes", "martes", "miercoles", "jueves", "viernes", "manana", "semana que viene", "proxima semana",
	"maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "volgende week",
	"lunedi", "martedi", "mercoledi", "giovedi", "venerdi", "domani", "prossima settimana",
	"segunda", "terca", "quarta", "quinta", "sexta", "amanha", "proxima semana")

// negators open a negation's scope: the next few words are read as
// negated ("not interested", "ne nous intéresse pas", "kein Interesse").
var negators = map[string]bool{"not": true, "no": true, "never": true, "don": true, "dont": true, "doesn": true, "isn": true,
	"won": true, "nicht": true, "kein": true, "keine": true, "keinen": true, "nie": true, "niemals": true, "ne": true, "pas": true,
	"jamais": true, "aucun": true, "nunca": true, "ningun": true, "niet": true, "geen": true, "nooit": true, "non": true, "mai": true,
	"nao": true, "nem": true, "nada": true, "nothing": true, "without": true, "ohne": true, "sans": true, "sin": true, "zonder": true,
	"senza": true, "sem": true}

// cueEntry is one phrase of a cue.
type cueEntry struct {
	cue int
	p   string
}

// cueIndex finds every cue of a folded text in one pass over its words:
// a phrase starts at a space of the text (fold puts one before every
// word), so the phrases are kept by their first four bytes.
type cueIndex struct {
	byKey     map[string][]cueEntry
	short     []cueEntry // phrases shorter than a key
	negatable []bool
}

// negatable are the cues negation turns around.
var negatable = map[string]bool{"yes": true, "interest": true, "meet": true, "need": true}

const cueKey = 4

// maxCues bounds the number of cue groups (features keeps their hits on
// the stack).
const maxCues = 32

var cueIdx = func() *cueIndex {
	if len(cues) > maxCues {
		panic("inbox: more cue groups than maxCues")
	}
	x := &cueIndex{byKey: map[string][]cueEntry{}, negatable: make([]bool, len(cues))}
	for i, c := range cues {
		x.negatable[i] = negatable[c.name]
		for _, p := range c.ps {
			if len(p) < cueKey {
				x.short = append(x.short, cueEntry{i, p})
				continue
			}
			x.byKey[p[:cueKey]] = append(x.byKey[p[:cueKey]], cueEntry{i, p})
		}
	}
	return x
}()

// match sets hit[i] for every cue i whose phrases occur in text, as
// cues[i].ps.in(text) would; for a cue that negation turns around (a yes,
// interest, a meeting, a need), an occurrence right after a negator ("not
// sure", "kein Interesse", "no me interesa") sets neg[i] instead.
func (x *cueIndex) match(text string, hit, neg []bool) {
	for _, e := range x.short {
		if !hit[e.cue] && strings.Contains(text, e.p) {
			hit[e.cue] = true
		}
	}
	for i := 0; i+cueKey <= len(text); i++ {
		if text[i] != ' ' {
			continue
		}
		for _, e := range x.byKey[text[i:i+cueKey]] {
			if !strings.HasPrefix(text[i:], e.p) {
				continue
			}
			if x.negatable[e.cue] && negatedAt(text, i) {
				neg[e.cue] = true
			} else {
				hit[e.cue] = true
			}
		}
	}
}

// negatedAt reports whether one of the two words before position i (a
// space) of a folded text is a negator.
func negatedAt(text string, i int) bool {
	end := i
	for range 2 {
		start := strings.LastIndexByte(text[:end], ' ')
		if start < 0 {
			return false
		}
		if negators[text[start+1:end]] {
			return true
		}
		end = start
	}
	return false
}
