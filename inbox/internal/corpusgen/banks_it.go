package main

func init() {
	banks["it"] = &bank{
		core: map[string][]string{
			"interested": {
				"Interessante, facciamo una call.", "Sì, volentieri. Va bene {day} alle {time}?", "Mandami un invito per {day}.",
				"Ottimo tempismo, stiamo valutando proprio questo. Quando sei libero?", "Non direi di no a una demo.",
				"È esattamente quello che cerchiamo. Me lo mostri {day}?", "Prenota pure uno slot qui: {link}", "Perfetto, {day} pomeriggio sono libero.",
				"Sono aperto a una breve chiacchierata.", "Volentieri una demo per il team.", "Interessante! Ci sentiamo {day}?",
				"Ok, mi hai incuriosito. Mezz'ora {day}?", "Chiamami pure {day} al {phone}.", "Sì, fissiamo un appuntamento.",
				"Potrebbe esserci utile. Quando sei disponibile?", "Invita anche {colleague}, per favore.", "Mi piacerebbe saperne di più, mandami un invito.",
				"{day} alle {time} va benissimo.", "Non è che non ci interessi, sentiamoci {day}.", "Perché no, fammi vedere cosa sa fare.",
				"Il nostro contratto con {tool} scade a breve, quindi parliamone.", "Certo, organizziamo una call su Teams.", "Sono curioso. Mandami qualche orario.",
				"Sì, una demo mi sarebbe utile.",
			},
			"question": {
				"Quanto costa per un team di {n} persone?", "Si integra con {tool}?", "Dove sono ospitati i dati?", "C'è una prova gratuita?",
				"Può mandarmi del materiale?", "Che differenza c'è con {tool}?", "Quanto dura l'implementazione?", "È conforme al GDPR?",
				"Avete clienti nel settore {industry}?", "Quali sono i prezzi?", "C'è una durata minima del contratto?", "Il prezzo è per utente o per casella?",
				"Ci sono costi di attivazione?", "Funziona anche con i messaggi LinkedIn?", "Avete un'API?", "Il supporto è incluso?", "C'è una versione in italiano?",
				"Possiamo provarlo prima con un solo team?", "Mi mandi un listino prezzi?", "I server sono in Europa?", "Come riconosce le risposte?",
				"Si può disdire mensilmente?", "Cosa succede ai nostri dati se disdiciamo?",
			},
			"not_now": {
				"Per ora no, risentiamoci in {season}.", "Niente budget quest'anno, forse l'anno prossimo.", "Brutto momento, ricontattami a {month}.",
				"Non prima di {month}, siamo pieni.", "Al momento non è una priorità, magari più avanti.", "Siamo in piena riorganizzazione. Scrivimi a {month}.",
				"È presto per noi, riparliamone in {season}.", "Questo trimestre no, forse il prossimo.", "Siamo legati a {tool} fino a {month}.",
				"Adesso non abbiamo tempo, riprova tra {n} mesi.", "Dopo le feste ne parliamo volentieri.", "Ora no, più avanti forse sì.",
				"Il budget è esaurito. L'anno prossimo ci guardiamo.", "Ricontattami dopo l'estate.", "Fino a {month} abbiamo altre priorità.",
			},
			"not_interested": {
				"Non mi interessa, grazie.", "No, grazie.", "Per favore toglietemi dalla lista.", "Usiamo già {tool} e siamo soddisfatti.", "Non fa per noi.",
				"Smettete di scrivermi.", "Non ne abbiamo bisogno.", "Lo facciamo internamente, quindi no.", "Cancellate i miei dati, per favore.",
				"Abbiamo già una soluzione.", "Non voglio essere ricontattato.", "Non è cosa per noi.", "Abbiamo scelto un altro fornitore.",
				"L'ennesima mail commerciale... No.", "Niente più email, grazie.", "No.", "Non siamo interessati.", "Disiscrivetemi.",
				"Non andremo avanti.", "Non è rilevante per la nostra azienda.",
			},
			"ooo": {
				"Sono fuori ufficio fino al {date} con accesso limitato alla posta.", "Grazie per il messaggio. Sono in ferie fino al {date}. Per urgenze: {email}.",
				"Sono assente fino al {date}.", "Sono in congedo fino al {date}. La sua email non verrà inoltrata.", "Sono in malattia e risponderò al mio rientro.",
				"Sono in trasferta e rientrerò il {date}.", "L'ufficio è chiuso fino al {date}.", "Sono in maternità fino al {date}.",
			},
			"wrong_person": {
				"Non sono la persona giusta, contatta {colleague}.", "Non lavoro più in {co}. Scrivi a {email}.", "Non è il mio ambito, decide l'ufficio acquisti.",
				"Interessante, ma decide {colleague}, non io.", "Per questo devi sentire {colleague}.", "Ho girato il tuo messaggio a {colleague}, se ne occupa lei.",
				"Mi occupo di {dept}, non di vendite. Prova con {colleague}.", "Non faccio più parte dell'azienda.", "Il mio sostituto è {colleague} ({email}).",
				"Non decido io, è la direzione.", "Sono solo uno stagista, scrivi a {email}.", "Persona sbagliata, scusa. Prova con il nostro responsabile commerciale.",
				"Sono in pensione da {month}.", "{colleague} ha preso il mio posto.", "Se ne occupa il marketing, non io.",
			},
			"unclear": {
				"Grazie!", "Chi è lei?", "Ok.", "Lo inoltro internamente.", "Ricevuto.", "Di cosa si tratta?", "Grazie per l'info.", "Ci conosciamo?",
				"Ci penso.", "Ne parlo con il team.", "Va bene.", "Vedremo.", "Come ha avuto il mio numero?", "Dove ha trovato il mio indirizzo?",
				"Interessante.", "Le faccio sapere.", "Buone feste!", "Buon anno!", "Mah.", "Visto.", "Grazie per il collegamento!",
				"Di che azienda è, scusi?", "È un messaggio automatico?", "Ci do un'occhiata.",
			},
		},
		parts: map[string][][]string{
			"interested": {
				{"", "Interessante.", "Ottimo tempismo.", "Mi interessa.", "Sì,", "Volentieri,"},
				{"ci sentiamo {day}?", "va bene {day} alle {time}?", "mandami un invito.", "prenota qui: {link}", "fammi vedere una demo.", "posso {day} o {day2}."},
			},
			"question": {
				{"", "Una domanda:", "Prima di tutto:", "Grazie. Domanda:"},
				{"quanto costa per {n} utenti?", "si integra con {tool}?", "dove sono i dati?", "c'è una prova?", "qual è la durata minima?"},
			},
			"not_now": {
				{"", "Grazie, ma", "Interessante, ma", "Bella idea, ma"},
				{"siamo pieni di lavoro", "il budget è finito", "siamo in riorganizzazione", "ora non è una priorità"},
				{"— risentiamoci in {season}.", "— scrivimi a {month}.", "— tra {n} mesi forse.", "— magari l'anno prossimo."},
			},
			"not_interested": {
				{"", "Grazie, ma", "Scusi,"},
				{"non ci interessa.", "non ne abbiamo bisogno.", "siamo contenti di {tool}.", "lo facciamo da soli."},
				{"", "Toglietemi dalla lista.", "Niente più email, grazie."},
			},
			"ooo": {
				{"Grazie per la sua email.", "Buongiorno,", ""},
				{"Sono fuori ufficio fino al {date}", "Sono in ferie fino al {date}", "Sono in viaggio fino al {date}"},
				{"con accesso limitato alla posta.", "e non leggo la posta.", "e risponderò al mio rientro."},
				{"", "Per urgenze: {email}.", "La sua email non verrà inoltrata."},
			},
			"wrong_person": {
				{"", "Grazie, ma", "Interessante, ma"},
				{"non sono la persona giusta.", "non è il mio reparto.", "non decido io."},
				{"Contatta {colleague}.", "Scrivi a {email}.", "Ho inoltrato a {colleague}."},
			},
			"unclear": {
				{"Grazie.", "Ok.", "Mah."},
				{"", "Ci do un'occhiata.", "Chi è lei?", "Di cosa si tratta?", "Lo inoltro."},
			},
		},
		extra:       map[string][]string{"interested": {"A presto!"}, "question": {"Grazie in anticipo."}, "not_interested": {"Buon lavoro."}, "wrong_person": {"Buona fortuna."}},
		away:        []string{"Sono in ferie fino al {date}, ma", "Sono in trasferta questa settimana, ma velocemente:", "Fuori fino a {day}, però"},
		softNo:      []string{"Sembra interessante, ma", "Bel prodotto, ma"},
		neutral:     []string{"Siamo un team di {n} persone.", "Oggi usiamo {tool}."},
		greet:       []string{"Ciao {name},", "Buongiorno,", "Gentile {name},", "Salve,", "Buongiorno {name},", "Gentile dott. {last},"},
		thanks:      []string{"Grazie per il messaggio.", "Grazie per la mail.", "Grazie per avermi scritto."},
		signoff:     []string{"Saluti,", "Cordiali saluti,", "Un saluto,", "Buona giornata,", "A presto,"},
		titles:      []string{"Direttore Commerciale", "Responsabile Marketing", "Amministratore", "Ufficio Acquisti"},
		disclaimer:  []string{"Questo messaggio è riservato. Se lo avete ricevuto per errore, vi preghiamo di cancellarlo."},
		mobile:      []string{"Inviato da iPhone", "Inviato dal mio smartphone"},
		quoteHead:   []string{"Il giorno {date} {name} ha scritto:", "Da: {name} <{email}>\nInviato: {date}\nA: {name}\nOggetto: {subject}"},
		outreach:    []string{"Ciao, aiutiamo i team commerciali a fissare più appuntamenti. Hai 15 minuti la prossima settimana?"},
		autoSubject: []string{"Risposta automatica: {subject}", "Fuori sede: {subject}", "Assente: {subject}"},
		leftAuto:    []string{"Non lavoro più presso {co}. Per favore scriva a {email}.", "{name} non fa più parte di {co}. Questa casella non è più attiva. Contatti {email}."},
		fills: map[string][]string{
			"day": {"lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "domani", "la prossima settimana"}, "month": {"gennaio", "marzo", "settembre", "aprile"},
			"season": {"primavera", "estate", "autunno", "gennaio"}, "date": {"4 dicembre", "11 gennaio", "14/12/2026", "lunedì 7 dicembre"},
			"time": {"10", "15:00", "9:30", "14"}, "dept": {"amministrazione", "risorse umane", "produzione", "IT"},
		},
	}
}
