package main

// The phrase banks: per language, per intent, the sentences a reply is
// built around (core), and the pieces around them. Placeholders in braces
// are filled from fills. Hard cases (mixed cues, double negation, sarcasm,
// redirects that sound interested, meeting times) are core sentences of
// the intent they mean.

var core = map[string]map[string][]string{
	"en": {
		"interested": {
			"Sounds interesting, let's set up a call.", "Yes, happy to take a look. Does {day} at {time} work?",
			"Timing is actually good, we're reviewing this now. Send me an invite.", "Sure, let's do 20 minutes {day}.",
			"I'd like to see a demo. I'm free {day} afternoon.",
			"Go ahead and book something with me for {day}.", "Could be useful for us. When are you free?",
			"We've been looking for exactly this. Can you do {day} at {time}?", "{day} {time} works for me, send the invite.",
			"I wouldn't say no to a quick demo.", "Not opposed to a chat — grab a slot here: {link}",
			"It's not like we're not looking. Let's talk {day}.", "Not interested in the whole suite, but the reporting part is worth a call.",
			"OK you got my attention. 15 minutes {day}?", "Happy to chat. My calendar: {link}",
			"Let's do it. I can do {time} on {day} or any time {day2}.", "Please loop in my colleague {colleague}, and let's find a time together.",
			"Yes — and bring pricing to the call.", "Can't promise anything, but I'm open to a conversation. {day}?",
			"Interesting timing, our contract with {tool} ends soon. Let's talk.", "Would love to see how this works in practice.",
			"Keen to learn more, set something up with my assistant.", "Works for me. Thursday or Friday morning?",
		},
		"question": {
			"How much does this cost for a team of {n}?", "Do you integrate with {tool}?", "What's the pricing model — per seat or per usage?",
			"Can you send over a case study from our industry?", "Where is the data hosted? We need it in the EU.",
			"Is there a free trial?", "How is this different from {tool}?", "How long does onboarding take?",
			"Do you support SSO with {tool}?", "What does the contract length look like?", "Can you share a one-pager I can forward?",
			"Is this GDPR compliant?", "Who else in {industry} uses it?", "Does it work with our CRM?",
			"Before we talk — what would this cost roughly?", "Do you have an API?", "Can you tell me more about how the setup works?",
			"What kind of results have customers seen?", "Quick question: is there a minimum commitment?",
		},
		"not_now": {
			"Not right now, maybe check back in {season}.", "We're locked into a contract until {month}. Reach out then.",
			"Bad timing — we're in the middle of a reorg. Try me again next quarter.", "Interesting, but no budget until next year.",
			"Could be relevant later. Ping me in {n} months.", "We're heads down on a launch until {month}. Let's revisit after that.",
			"Not a priority this quarter. Follow up in {season}?", "Let's reconnect after the holidays.",
			"Sounds good but not for the next few months. Circle back in {month}.", "It's not that we're not interested, just not this year.",
			"Too early for us. Maybe in {season} once the team is hired.", "We just signed with {tool}, ask me again when it renews in {month}.",
			"Love the idea, terrible timing. Can you follow up in {month}?", "Not before {month}, we're swamped.",
		},
		"not_interested": {
			"Not interested, thanks.", "No thanks.", "Please remove me from your list.", "We're all set, thanks.",
			"Please stop emailing me.", "We already use {tool} and are happy with it.",
			"Not a fit for us.", "Unsubscribe.", "Hard pass.", "We don't outsource this and never will.",
			"Oh great, another sales email. Just what my inbox needed.", "Thanks but no thanks.", "We'll pass.",
			"I'm not interested and I don't want to be contacted again.", "No. Please don't follow up.",
			"Wow, the fifth email this week. Impressive persistence — still no.", "We have no need for this.",
			"Delete my data please.", "This is spam.", "Sounds great for someone else. Not for us.",
			"Appreciate it, but we're not going to move forward.", "Nope.", "We build this in-house, so no.",
		},
		"ooo": {
			"I am out of the office until {date} with limited access to email. I will respond on my return.",
			"Thank you for your message. I'm on annual leave until {date}. For urgent matters please contact {email}.",
			"I'm currently away and will be back on {date}. I'll reply as soon as I can.",
			"I am on parental leave until {date}. Your email will not be forwarded.",
			"Thanks for your email. I'm travelling with limited access to email until {date}.",
			"I'm out of office until {day}. If urgent, please contact {colleague} at {email}.",
			"I am attending a conference this week and will respond when I'm back on {date}.",
			"I'm on vacation until {date}. I'll get back to you after my return.",
			"Out of office: back {date}.",
		},
		"wrong_person": {
			"I'm not the right person for this. You should talk to {colleague}, our head of sales.",
			"I no longer work at {co}. Please contact {colleague} at {email}.",
			"This isn't my area — procurement handles vendor decisions.", "Wrong person, sorry. Try our CTO.",
			"Sounds interesting! But I'm not the one who decides this — reach out to {colleague} ({email}).",
			"I left {co} in {month}, please update your records.", "You'd want {colleague}, she runs revenue ops.",
			"Love the pitch, but I'm in finance. {colleague} owns tooling for sales.", "Not my department. Forwarding you to {colleague}.",
			"I'm not responsible for this anymore; {colleague} took over.", "Please send this to our marketing lead instead, {email}.",
			"I've moved on from {co}. {colleague} is my replacement.", "Great timing, but it's {colleague}'s call, not mine. Her email is {email}.",
		},
		"unclear": {
			"Thanks!", "Who is this?", "ok", "Received.", "Hmm, let me think about it.", "I'll forward this internally.",
			"Thanks for connecting, {name}!", "Noted.", "Got it.", "How did you get my email?", "Which company are you with again?",
			"Let me check with the team.", "Interesting.", "?", "Happy new year!", "Sorry, what is this about?",
			"Thanks for the message, I'll have a look.", "Did we meet somewhere?", "Let me get back to you.", "Cool.",
		},
	},
	"de": {
		"interested": {
			"Klingt interessant, lassen Sie uns telefonieren.", "Ja, gerne. Passt Ihnen {day} um {time}?", "Gerne, schicken Sie mir eine Einladung für {day}.",
			"Das kommt zur richtigen Zeit, wir schauen uns gerade Lösungen an. Wann haben Sie Zeit?", "Ja bitte, 20 Minuten {day} passen.",
			"Eine kurze Demo wäre spannend. Ich bin {day} ab {time} frei.", "Ich wäre nicht abgeneigt, das mal zu sehen. Termin {day}?",
			"Nicht die ganze Plattform, aber das Reporting interessiert mich. Können wir sprechen?", "Hier ist mein Kalender: {link}",
			"Gern, buchen Sie einfach einen Termin bei mir.", "Das klingt nach etwas, das wir brauchen. Lassen Sie uns reden.",
			"Unser Vertrag mit {tool} läuft bald aus, daher gerne ein Gespräch.", "{day} {time} passt mir, bitte Einladung senden.",
			"Machen wir. Donnerstag oder Freitag Vormittag?", "Bin gespannt, zeigen Sie mal.",
		},
		"question": {
			"Was kostet das für ein Team von {n} Personen?", "Gibt es eine Schnittstelle zu {tool}?", "Wo werden die Daten gespeichert?",
			"Können Sie mir Unterlagen schicken?", "Wie unterscheidet sich das von {tool}?", "Gibt es eine kostenlose Testphase?",
			"Wie lange dauert die Einführung?", "Ist das DSGVO-konform?", "Haben Sie Referenzkunden aus {industry}?",
			"Wie sieht das Preismodell aus?", "Gibt es eine Mindestlaufzeit?", "Können Sie kurz erklären, wie die Einrichtung funktioniert?",
		},
		"not_now": {
			"Aktuell nicht, melden Sie sich gern im {season} wieder.", "Derzeit kein Budget, vielleicht nächstes Jahr.",
			"Schlechter Zeitpunkt, wir stecken mitten in einer Umstellung. Bitte im {month} nochmal.", "Nicht vor {month}, wir sind voll ausgelastet.",
			"Grundsätzlich spannend, aber erst im nächsten Quartal.", "Nicht dass es uns nicht interessiert — nur eben nicht dieses Jahr.",
			"Wir sind bis {month} an {tool} gebunden. Danach gerne.", "Im Moment passt es nicht, fragen Sie in {n} Monaten nochmal.",
			"Bitte nach der Messe noch mal melden.", "Momentan keine Kapazitäten, gerne später.",
		},
		"not_interested": {
			"Kein Interesse, danke.", "Nein danke.", "Bitte entfernen Sie mich aus Ihrem Verteiler.", "Wir nutzen bereits {tool} und sind zufrieden.",
			"Das ist nichts für uns.", "Bitte schreiben Sie mir nicht mehr.", "Kein Bedarf.", "Brauchen wir nicht.",
			"Toll, noch eine Verkaufsmail. Genau das, was ich heute brauchte.", "Wir machen das intern und werden das auch nicht ändern.",
			"Bitte löschen Sie meine Daten.", "Danke, aber wir werden das nicht weiterverfolgen.", "Nein.", "Betrifft uns nicht.",
		},
		"ooo": {
			"Ich bin bis einschließlich {date} nicht im Büro und habe keinen Zugriff auf meine E-Mails.",
			"Vielen Dank für Ihre Nachricht. Ich bin bis {date} im Urlaub. In dringenden Fällen wenden Sie sich an {email}.",
			"Ich bin derzeit außer Haus und ab dem {date} wieder erreichbar.", "Ich befinde mich in Elternzeit bis {date}. Ihre Nachricht wird nicht weitergeleitet.",
			"Ich bin auf Dienstreise und ab {day} wieder für Sie da.", "Abwesend bis {date}. Ihre E-Mail wird nach meiner Rückkehr bearbeitet.",
		},
		"wrong_person": {
			"Da sind Sie bei mir falsch, bitte wenden Sie sich an {colleague}.", "Ich bin nicht mehr bei {co} tätig. Bitte kontaktieren Sie {email}.",
			"Dafür bin ich nicht zuständig, das macht unser Einkauf.", "Klingt spannend, aber das entscheidet {colleague}, nicht ich. {email}",
			"Ich habe {co} im {month} verlassen.", "Richtiger Ansprechpartner ist {colleague} aus dem Vertrieb.", "Ich leite Sie an {colleague} weiter, sie ist zuständig.",
			"Falsche Abteilung, versuchen Sie es bei der IT.", "{colleague} hat meine Aufgaben übernommen, bitte an sie wenden.",
		},
		"unclear": {
			"Danke!", "Wer sind Sie?", "Ok.", "Ich leite das intern weiter.", "Erhalten.", "Woher haben Sie meine Adresse?", "Hm.",
			"Ich schaue es mir an.", "Danke für die Vernetzung!", "Worum geht es genau?", "Ich melde mich.", "Frohe Weihnachten!",
		},
	},
	"fr": {
		"interested": {
			"Ça m'intéresse, on peut s'appeler {day} ?", "Oui, avec plaisir. {day} à {time} ?", "Envoyez-moi une invitation pour {day} matin.",
			"Bon timing, nous étudions justement le sujet. Quand êtes-vous disponible ?", "Oui, parlons-en 20 minutes {day}.",
			"Je ne dirais pas non à une démo.", "Pas toute la plateforme, mais le module de reporting m'intéresse. On en parle ?",
			"Voici mon agenda : {link}", "Volontiers, calons un créneau.", "Notre contrat avec {tool} se termine bientôt, donc oui, échangeons.",
			"{day} {time} me va, envoyez l'invitation.", "Pourquoi pas, montrez-moi ça.", "Je suis partant pour un appel.",
			"Ce n'est pas que ça ne nous intéresse pas, au contraire : appelons-nous {day}.",
		},
		"question": {
			"Combien ça coûte pour une équipe de {n} personnes ?", "Est-ce compatible avec {tool} ?", "Où sont hébergées les données ?",
			"Pouvez-vous m'envoyer une plaquette ?", "Quelle différence avec {tool} ?", "Y a-t-il un essai gratuit ?",
			"Combien de temps prend la mise en place ?", "Êtes-vous conformes au RGPD ?", "Avez-vous des références dans {industry} ?",
			"Quels sont vos tarifs ?", "Y a-t-il un engagement minimum ?", "Comment se passe l'intégration concrètement ?",
		},
		"not_now": {
			"Pas pour le moment, recontactez-moi en {season}.", "Pas de budget cette année, peut-être l'an prochain.",
			"Mauvais timing, nous sommes en pleine réorganisation. Relancez-moi en {month}.", "Pas avant {month}, l'équipe est débordée.",
			"Intéressant, mais plutôt au prochain trimestre.", "Ce n'est pas que ça ne nous intéresse pas, mais pas cette année.",
			"Nous sommes engagés avec {tool} jusqu'en {month}. Revenez vers moi à ce moment-là.", "Pas le bon moment, on en reparle dans {n} mois.",
			"On en reparle après les fêtes.",
		},
		"not_interested": {
			"Pas intéressé, merci.", "Non merci.", "Merci de me retirer de votre liste.", "Nous utilisons déjà {tool} et en sommes satisfaits.",
			"Ça ne nous intéresse pas.", "Merci de ne plus m'écrire.", "Pas besoin.", "Ce n'est pas pour nous.",
			"Super, encore un mail commercial. Exactement ce qu'il me fallait.", "Nous faisons ça en interne et ça ne changera pas.",
			"Supprimez mes données, s'il vous plaît.", "Non.", "Aucun intérêt.", "Ça ne me concerne pas et ne m'intéresse pas.",
		},
		"ooo": {
			"Je suis absent du bureau jusqu'au {date} inclus, avec un accès limité à mes e-mails.",
			"Merci pour votre message. Je suis en congés jusqu'au {date}. En cas d'urgence, contactez {email}.",
			"Je suis actuellement absente et serai de retour le {date}.", "Je suis en congé maternité jusqu'au {date}. Votre message ne sera pas transféré.",
			"En déplacement jusqu'au {day}, je vous répondrai à mon retour.", "Absent jusqu'au {date}. Je traiterai votre e-mail à mon retour.",
		},
		"wrong_person": {
			"Je ne suis pas la bonne personne, voyez avec {colleague}.", "Je ne travaille plus chez {co}. Contactez {email}.",
			"Ce n'est pas mon domaine, c'est le service achats qui décide.", "Intéressant, mais ce n'est pas moi qui décide : écrivez à {colleague} ({email}).",
			"J'ai quitté {co} en {month}.", "Le bon interlocuteur est {colleague}, notre directeur commercial.", "Je vous transfère à {colleague}, c'est elle qui gère.",
			"Mauvais service, adressez-vous à la DSI.", "{colleague} a repris mon poste, merci de la contacter.",
		},
		"unclear": {
			"Merci !", "Qui êtes-vous ?", "Ok.", "Je transmets en interne.", "C'est noté.", "Comment avez-vous eu mon adresse ?", "Hmm.",
			"Je regarde.", "Merci pour la connexion !", "De quoi s'agit-il ?", "Je reviens vers vous.", "Bonne année !",
		},
	},
	"es": {
		"interested": {
			"Me interesa, ¿hablamos el {day}?", "Sí, claro. ¿Te va bien el {day} a las {time}?", "Envíame una invitación para el {day} por la mañana.",
			"Buen momento, justo estamos evaluando esto. ¿Cuándo tienes hueco?", "Sí, hagamos 20 minutos el {day}.",
			"No diría que no a una demo.", "No toda la plataforma, pero el módulo de informes sí me interesa. ¿Lo hablamos?",
			"Aquí tienes mi calendario: {link}", "Con gusto, agendemos una llamada.", "Nuestro contrato con {tool} termina pronto, así que sí, hablemos.",
			"El {day} a las {time} me viene bien, manda la invitación.", "¿Por qué no? Enséñamelo.", "Me apunto a una llamada.",
			"No es que no nos interese, al contrario: llamémonos el {day}.",
		},
		"question": {
			"¿Cuánto cuesta para un equipo de {n} personas?", "¿Se integra con {tool}?", "¿Dónde se alojan los datos?",
			"¿Me puedes enviar más información?", "¿En qué se diferencia de {tool}?", "¿Hay una prueba gratuita?",
			"¿Cuánto tarda la implementación?", "¿Cumplís con el RGPD?", "¿Tenéis clientes en {industry}?",
			"¿Qué precios tenéis?", "¿Hay permanencia mínima?", "¿Cómo funciona la puesta en marcha?",
		},
		"not_now": {
			"Ahora no, escríbeme en {season}.", "Este año no hay presupuesto, quizá el que viene.",
			"Mal momento, estamos en plena reorganización. Vuelve a escribirme en {month}.", "No antes de {month}, vamos a tope.",
			"Interesante, pero mejor el próximo trimestre.", "No es que no nos interese, pero este año no.",
			"Tenemos contrato con {tool} hasta {month}. Retomemos entonces.", "Por ahora no, hablamos dentro de {n} meses.",
			"Hablamos después de las fiestas.",
		},
		"not_interested": {
			"No me interesa, gracias.", "No, gracias.", "Por favor, elimíname de tu lista.", "Ya usamos {tool} y estamos contentos.",
			"No nos interesa.", "Deja de escribirme, por favor.", "No lo necesitamos.", "No es para nosotros.",
			"Genial, otro correo comercial. Justo lo que necesitaba hoy.", "Lo hacemos internamente y no va a cambiar.",
			"Borra mis datos, por favor.", "No.", "Ningún interés.", "Dame de baja.",
		},
		"ooo": {
			"Estoy fuera de la oficina hasta el {date} con acceso limitado al correo.",
			"Gracias por tu mensaje. Estoy de vacaciones hasta el {date}. Para urgencias, contacta con {email}.",
			"Me encuentro ausente y volveré el {date}.", "Estoy de baja por maternidad hasta el {date}. Tu correo no será reenviado.",
			"De viaje hasta el {day}, responderé a mi regreso.", "Ausente hasta el {date}. Atenderé tu correo a mi regreso.",
		},
		"wrong_person": {
			"No soy la persona adecuada, habla con {colleague}.", "Ya no trabajo en {co}. Escribe a {email}.",
			"No es mi área, eso lo decide compras.", "Suena interesante, pero no decido yo: escribe a {colleague} ({email}).",
			"Dejé {co} en {month}.", "La persona adecuada es {colleague}, nuestra directora comercial.", "Te paso con {colleague}, ella lo lleva.",
			"Departamento equivocado, prueba con IT.", "{colleague} ha asumido mis funciones, contacta con ella.",
		},
		"unclear": {
			"¡Gracias!", "¿Quién eres?", "Ok.", "Lo reenvío a mi equipo.", "Recibido.", "¿Cómo conseguiste mi correo?", "Mmm.",
			"Lo miro.", "¡Gracias por conectar!", "¿De qué se trata?", "Te digo algo.", "¡Feliz año!",
		},
	},
	"nl": {
		"interested":     {"Klinkt interessant, laten we bellen.", "Ja, graag. Past {day} om {time}?", "Stuur maar een uitnodiging voor {day}.", "Goede timing, we kijken hier net naar. Wanneer heb je tijd?", "Ik zou een demo niet afslaan."},
		"question":       {"Wat kost dit voor een team van {n} mensen?", "Werkt het samen met {tool}?", "Waar worden de gegevens opgeslagen?", "Is er een gratis proefperiode?", "Kunt u meer informatie sturen?"},
		"not_now":        {"Nu even niet, probeer het in {season} nog eens.", "Geen budget dit jaar, misschien volgend jaar.", "Slechte timing, neem in {month} weer contact op.", "Niet voor {month}, we zitten vol."},
		"not_interested": {"Geen interesse, bedankt.", "Nee, dank je.", "Haal me van uw lijst af.", "We gebruiken al {tool} en zijn tevreden.", "Niet voor ons.", "Stop met mailen alstublieft."},
		"ooo":            {"Ik ben afwezig tot en met {date} en heb beperkt toegang tot mijn e-mail.", "Bedankt voor uw bericht. Ik ben met vakantie tot {date}. Voor dringende zaken: {email}.", "Ik ben niet op kantoor tot {date}."},
		"wrong_person":   {"Ik ben niet de juiste persoon, neem contact op met {colleague}.", "Ik werk niet meer bij {co}. Mail {email}.", "Dat is niet mijn afdeling, inkoop beslist hierover.", "Klinkt goed, maar {colleague} beslist dit, niet ik."},
		"unclear":        {"Bedankt!", "Wie bent u?", "Ok.", "Ik stuur het intern door.", "Ontvangen.", "Waar gaat dit over?"},
	},
	"it": {
		"interested":     {"Interessante, facciamo una call.", "Sì, volentieri. Va bene {day} alle {time}?", "Mandami un invito per {day}.", "Ottimo tempismo, stiamo valutando proprio questo. Quando sei libero?", "Non direi di no a una demo."},
		"question":       {"Quanto costa per un team di {n} persone?", "Si integra con {tool}?", "Dove sono ospitati i dati?", "C'è una prova gratuita?", "Può mandarmi del materiale?"},
		"not_now":        {"Per ora no, risentiamoci in {season}.", "Niente budget quest'anno, forse l'anno prossimo.", "Brutto momento, ricontattami a {month}.", "Non prima di {month}, siamo pieni."},
		"not_interested": {"Non mi interessa, grazie.", "No, grazie.", "Per favore toglietemi dalla lista.", "Usiamo già {tool} e siamo soddisfatti.", "Non fa per noi.", "Smettete di scrivermi."},
		"ooo":            {"Sono fuori ufficio fino al {date} con accesso limitato alla posta.", "Grazie per il messaggio. Sono in ferie fino al {date}. Per urgenze: {email}.", "Sono assente fino al {date}."},
		"wrong_person":   {"Non sono la persona giusta, contatta {colleague}.", "Non lavoro più in {co}. Scrivi a {email}.", "Non è il mio ambito, decide l'ufficio acquisti.", "Interessante, ma decide {colleague}, non io."},
		"unclear":        {"Grazie!", "Chi è lei?", "Ok.", "Lo inoltro internamente.", "Ricevuto.", "Di cosa si tratta?"},
	},
	"pt": {
		"interested":     {"Parece interessante, vamos marcar uma chamada.", "Sim, claro. Pode ser {day} às {time}?", "Mande-me um convite para {day}.", "Bom timing, estamos a avaliar isto. Quando está disponível?", "Não diria não a uma demo."},
		"question":       {"Quanto custa para uma equipa de {n} pessoas?", "Integra com {tool}?", "Onde ficam os dados?", "Há um período de teste gratuito?", "Pode enviar mais informações?"},
		"not_now":        {"Agora não, fale comigo em {season}.", "Sem orçamento este ano, talvez no próximo.", "Mau momento, volte a contactar em {month}.", "Não antes de {month}, estamos cheios."},
		"not_interested": {"Não tenho interesse, obrigado.", "Não, obrigado.", "Por favor, retire-me da lista.", "Já usamos {tool} e estamos satisfeitos.", "Não é para nós.", "Pare de me enviar e-mails."},
		"ooo":            {"Estou fora do escritório até {date} com acesso limitado ao e-mail.", "Obrigado pela mensagem. Estou de férias até {date}. Para urgências: {email}.", "Estou ausente até {date}."},
		"wrong_person":   {"Não sou a pessoa certa, fale com {colleague}.", "Já não trabalho na {co}. Escreva para {email}.", "Não é a minha área, quem decide são as compras.", "Interessante, mas quem decide é {colleague}, não eu."},
		"unclear":        {"Obrigado!", "Quem é?", "Ok.", "Vou encaminhar internamente.", "Recebido.", "Do que se trata?"},
	},
}

// away is a person's own mention of being away, put before a question, a
// yes or a later: the reply is a person's, not an auto-reply.
var away = map[string][]string{
	"en": {"I'm out of office until {date}, but", "I'm travelling until {day} —", "Currently on leave until {date}, however", "Away this week, but quickly:"},
	"de": {"Ich bin bis {date} im Urlaub, aber", "Bin bis {day} unterwegs —", "Ich bin gerade nicht im Büro, trotzdem kurz:"},
	"fr": {"Je suis en congés jusqu'au {date}, mais", "En déplacement jusqu'à {day} —", "Absent cette semaine, mais rapidement :"},
	"es": {"Estoy de vacaciones hasta el {date}, pero", "De viaje hasta el {day} —", "Estoy fuera esta semana, pero rápido:"},
	"nl": {"Ik ben tot {date} met vakantie, maar"},
	"it": {"Sono in ferie fino al {date}, ma"},
	"pt": {"Estou de férias até {date}, mas"},
}

var greet = map[string][]string{
	"en": {"Hi {name},", "Hello {name},", "Hey {name}!", "Hi,", "{name},", "Dear {name},"},
	"de": {"Hallo {name},", "Guten Tag,", "Hallo Frau {last},", "Sehr geehrter Herr {last},", "Hi {name},"},
	"fr": {"Bonjour {name},", "Bonjour,", "Bonjour Madame {last},", "Salut {name},"},
	"es": {"Hola {name},", "Buenos días,", "Hola,", "Estimado {name}:"},
	"nl": {"Hoi {name},", "Beste {name},", "Goedemiddag,"},
	"it": {"Ciao {name},", "Buongiorno,", "Gentile {name},"},
	"pt": {"Olá {name},", "Bom dia,", "Caro {name},"},
}

var thanks = map[string][]string{
	"en": {"Thanks for reaching out.", "Thanks for the note.", "Appreciate the message.", "Thanks for getting in touch."},
	"de": {"Danke für Ihre Nachricht.", "Vielen Dank für die Mail.", "Danke für die Anfrage."},
	"fr": {"Merci pour votre message.", "Merci de m'avoir contacté.", "Merci pour le mail."},
	"es": {"Gracias por tu mensaje.", "Gracias por escribir.", "Gracias por el correo."},
	"nl": {"Bedankt voor je bericht."},
	"it": {"Grazie per il messaggio."},
	"pt": {"Obrigado pela mensagem."},
}

var signoff = map[string][]string{
	"en": {"Best,", "Thanks,", "Cheers,", "Regards,", "Kind regards,", "Best regards,"},
	"de": {"Viele Grüße", "Beste Grüße", "Mit freundlichen Grüßen", "VG"},
	"fr": {"Cordialement,", "Bien à vous,", "Bonne journée,"},
	"es": {"Saludos,", "Un saludo,", "Atentamente,"},
	"nl": {"Groet,", "Met vriendelijke groet,"},
	"it": {"Saluti,", "Cordiali saluti,"},
	"pt": {"Cumprimentos,", "Abraço,"},
}

var mobile = []string{"Sent from my iPhone", "Von meinem iPhone gesendet", "Envoyé de mon iPhone", "Enviado desde mi iPhone", "Get Outlook for Android"}

var disclaimer = map[string][]string{
	"en": {"CONFIDENTIALITY NOTICE: This e-mail and any attachments are confidential and intended solely for the addressee. If you have received it in error, please notify the sender and delete it."},
	"de": {"Diese E-Mail enthält vertrauliche Informationen. Wenn Sie nicht der richtige Adressat sind, informieren Sie bitte sofort den Absender und vernichten Sie diese Mail."},
	"fr": {"Ce message et ses pièces jointes sont confidentiels et destinés exclusivement à leur destinataire. Si vous l'avez reçu par erreur, merci de le supprimer."},
	"es": {"Este mensaje es confidencial y se dirige exclusivamente a su destinatario. Si lo ha recibido por error, por favor elimínelo."},
	"nl": {"Dit bericht is vertrouwelijk. Indien u dit bericht onterecht ontvangt, verzoeken wij u het te verwijderen."},
	"it": {"Questo messaggio è riservato. Se lo avete ricevuto per errore, vi preghiamo di cancellarlo."},
	"pt": {"Esta mensagem é confidencial. Se a recebeu por engano, por favor elimine-a."},
}

var quoteHead = map[string][]string{
	"en": {"On {wday}, {date} at 9:14 AM {name} wrote:", "-----Original Message-----\nFrom: {name} <{email}>\nSent: {date}\nSubject: {subject}"},
	"de": {"Am {date} um 09:14 schrieb {name}:", "Von: {name} <{email}>\nGesendet: {date}\nBetreff: {subject}"},
	"fr": {"Le {date} à 09:14, {name} a écrit :", "De : {name} <{email}>\nEnvoyé : {date}\nObjet : {subject}"},
	"es": {"El {date}, {name} escribió:", "De: {name} <{email}>\nEnviado: {date}\nAsunto: {subject}"},
	"nl": {"Op {date} schreef {name}:"},
	"it": {"Il giorno {date} {name} ha scritto:"},
	"pt": {"Em {date}, {name} escreveu:"},
}

var outreach = []string{
	"Hi, quick question: are you the right person to talk to about outbound at {co}? We help teams book more meetings. Would a 15-minute call make sense?",
	"Hallo, wir helfen Vertriebsteams, mehr Termine zu buchen. Hätten Sie nächste Woche 15 Minuten?",
	"Bonjour, nous aidons les équipes commerciales à décrocher plus de rendez-vous. Seriez-vous disponible pour un échange ?",
	"Hola, ayudamos a equipos de ventas a conseguir más reuniones. ¿Te interesa una llamada de 15 minutos?",
}

var fills = map[string][]string{
	"name":      {"Anna", "Tom", "Lea", "Marco", "Sofia", "Jonas", "Claire", "Pablo", "Emma", "Lukas", "Inès", "Lucía"},
	"last":      {"Keller", "Martin", "García", "Rossi", "de Vries", "Schmidt", "Dubois", "López"},
	"colleague": {"Maria Lopez", "Jan Becker", "Sophie Laurent", "Carlos Ruiz", "Priya Shah", "Frau Lang", "Mark Stone", "Julia Weber"},
	"email":     {"maria.lopez@globex.test", "einkauf@acme.test", "s.laurent@initech.test", "compras@hooli.test", "office@umbrella.test"},
	"co":        {"Globex", "Acme", "Initech", "Hooli", "Umbrella", "Stark GmbH", "Vandelay SA"},
	"tool":      {"HubSpot", "Salesforce", "Outreach", "Pipedrive", "Lemlist", "Apollo", "Slack"},
	"industry":  {"SaaS", "logistics", "insurance", "retail", "Maschinenbau", "la banque", "la industria"},
	"n":         {"5", "12", "20", "40", "three", "six"},
	"link":      {"cal.example.test/jm", "https://calendly.test/anna-k/30min", "meet.example.test/lea"},
	"time":      {"10:00", "2pm", "14 Uhr", "15h", "11:30", "9am", "16.00"},
	"subject":   {"Quick question", "Outbound at {co}", "Idee für Ihr Team", "Une idée", "Una pregunta", "Intro"},
}

// Per-language fills: days, months, seasons and dates.
var langFills = map[string]map[string][]string{
	"en": {"day": {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "tomorrow", "next week"}, "month": {"January", "March", "June", "September", "October"},
		"season": {"spring", "the summer", "Q2", "the new year", "autumn"}, "date": {"December 7th", "14 December", "2027-01-11", "12/08", "Monday 4 January"}},
	"de": {"day": {"Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "morgen", "nächste Woche"}, "month": {"Januar", "März", "Juni", "September", "Oktober"},
		"season": {"Frühjahr", "Sommer", "Herbst", "neuen Jahr"}, "date": {"4. Dezember", "14.12.2026", "11.01.2027", "7. Januar"}},
	"fr": {"day": {"lundi", "mardi", "mercredi", "jeudi", "vendredi", "demain", "la semaine prochaine"}, "month": {"janvier", "mars", "juin", "septembre", "octobre"},
		"season": {"printemps", "septembre", "janvier"}, "date": {"4 décembre", "15/12/2026", "11 janvier", "lundi 7 décembre"}},
	"es": {"day": {"lunes", "martes", "miércoles", "jueves", "viernes", "mañana", "la semana que viene"}, "month": {"enero", "marzo", "junio", "septiembre", "octubre"},
		"season": {"primavera", "verano", "otoño", "enero"}, "date": {"7 de diciembre", "15/12/2026", "11 de enero", "lunes 4 de enero"}},
	"nl": {"day": {"maandag", "dinsdag", "donderdag", "vrijdag", "morgen"}, "month": {"januari", "maart", "september"}, "season": {"het voorjaar", "de zomer", "het najaar"}, "date": {"4 december", "11 januari", "14-12-2026"}},
	"it": {"day": {"lunedì", "martedì", "giovedì", "venerdì", "domani"}, "month": {"gennaio", "marzo", "settembre"}, "season": {"primavera", "estate", "autunno"}, "date": {"4 dicembre", "11 gennaio", "14/12/2026"}},
	"pt": {"day": {"segunda", "terça", "quinta", "sexta", "amanhã"}, "month": {"janeiro", "março", "setembro"}, "season": {"primavera", "verão", "outono"}, "date": {"4 de dezembro", "11 de janeiro", "14/12/2026"}},
}

// autoSubjects and autoHeaders make some out-of-office messages look as
// mail servers send them.
var autoSubjects = map[string][]string{
	"en": {"Automatic reply: {subject}", "Out of Office: {subject}", "Auto: {subject}"},
	"de": {"Abwesenheitsnotiz: {subject}", "Automatische Antwort: {subject}"},
	"fr": {"Réponse automatique : {subject}", "Absence : {subject}"},
	"es": {"Respuesta automática: {subject}", "Fuera de la oficina: {subject}"},
	"nl": {"Automatisch antwoord: {subject}"},
	"it": {"Risposta automatica: {subject}"},
	"pt": {"Resposta automática: {subject}"},
}

var autoHeaders = []map[string]string{{"Auto-Submitted": "auto-replied"}, {"X-Autoreply": "yes"}, {"Precedence": "auto_reply"}, {"X-Apple-Action": "vacation"}}
