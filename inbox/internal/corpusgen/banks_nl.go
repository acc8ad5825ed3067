package main

func init() {
	banks["nl"] = &bank{
		core: map[string][]string{
			"interested": {
				"Klinkt interessant, laten we bellen.", "Ja, graag. Past {day} om {time}?", "Stuur maar een uitnodiging voor {day}.",
				"Goede timing, we kijken hier net naar. Wanneer heb je tijd?", "Ik zou een demo niet afslaan.",
				"Dit is precies wat we zoeken. Kun je het {day} laten zien?", "Leuk, plan maar een afspraak in: {link}",
				"Prima, ik heb {day} tussen {time} en vijf tijd.", "Ik sta open voor een kort gesprek.", "Graag een demo voor het team.",
				"Interessant! Kunnen we {day} even sparren?", "Oké, je hebt mijn aandacht. Een half uurtje {day}?",
				"Bel me gerust {day} op {phone}.", "Ja, laten we een moment prikken.", "Dat kan ons helpen. Wanneer kun jij?",
				"Mooi, nodig {colleague} ook uit.", "Ik wil er graag meer over weten, stuur een uitnodiging.", "Top, {day} om {time} schikt mij.",
				"Het is niet zo dat we geen interesse hebben, laten we {day} bellen.", "Waarom niet, laat maar zien wat het kan.",
				"Ons contract met {tool} loopt af, dus een gesprek komt goed uit.", "Zeker, zullen we een Teams-call plannen?",
				"Ik ben benieuwd. Stuur een paar tijden door.", "Ja hoor, een demo lijkt me nuttig.",
			},
			"question": {
				"Wat kost dit voor een team van {n} mensen?", "Werkt het samen met {tool}?", "Waar worden de gegevens opgeslagen?",
				"Is er een gratis proefperiode?", "Kunt u meer informatie sturen?", "Wat is het verschil met {tool}?",
				"Hoe lang duurt de implementatie?", "Is het AVG-proof?", "Hebben jullie klanten in {industry}?", "Wat zijn de prijzen?",
				"Is er een minimale contractduur?", "Rekenen jullie per gebruiker of per mailbox?", "Zijn er opstartkosten?",
				"Werkt het ook met LinkedIn-berichten?", "Hebben jullie een API?", "Is support inbegrepen?", "Is er een Nederlandse versie?",
				"Kunnen we het eerst met één team testen?", "Kun je een prijslijst sturen?", "Staan de servers in Europa?",
				"Hoe herkent het systeem de antwoorden?", "Kunnen we maandelijks opzeggen?", "Wat gebeurt er met onze data als we stoppen?",
			},
			"not_now": {
				"Nu even niet, probeer het in {season} nog eens.", "Geen budget dit jaar, misschien volgend jaar.", "Slechte timing, neem in {month} weer contact op.",
				"Niet voor {month}, we zitten vol.", "Op dit moment geen prioriteit, misschien later dit jaar.", "We zitten midden in een reorganisatie. Mail me in {month}.",
				"Te vroeg voor ons, kom in {season} maar terug.", "Dit kwartaal niet meer, volgend kwartaal misschien.", "We zijn gebonden aan {tool} tot {month}.",
				"Even geen ruimte voor, vraag het over {n} maanden nog eens.", "Na de feestdagen pakken we dit graag op.", "Nu niet, later misschien wel.",
				"Het budget is op. Volgend jaar kijken we er weer naar.", "Graag na de zomer opnieuw contact.", "We hebben andere prioriteiten tot {month}.",
			},
			"not_interested": {
				"Geen interesse, bedankt.", "Nee, dank je.", "Haal me van uw lijst af.", "We gebruiken al {tool} en zijn tevreden.", "Niet voor ons.",
				"Stop met mailen alstublieft.", "Nee bedankt.", "Hier hebben we geen behoefte aan.", "Wij doen dit zelf, dus nee.",
				"Verwijder mijn gegevens alstublieft.", "We hebben al een oplossing.", "Ik wil niet meer benaderd worden.", "Dit is niets voor ons.",
				"We hebben voor een andere partij gekozen.", "Weer een verkoopmail... Nee.", "Graag geen mails meer.", "Nee.",
				"Daar hebben we geen interesse in.", "Uitschrijven graag.", "We gaan hier niet mee verder.", "Niet relevant voor ons bedrijf.",
			},
			"ooo": {
				"Ik ben afwezig tot en met {date} en heb beperkt toegang tot mijn e-mail.", "Bedankt voor uw bericht. Ik ben met vakantie tot {date}. Voor dringende zaken: {email}.",
				"Ik ben niet op kantoor tot {date}.", "Ik ben met verlof tot {date}. Uw bericht wordt niet doorgestuurd.",
				"Ik ben ziek en reageer zodra ik terug ben.", "Ik ben op reis en vanaf {date} weer bereikbaar.", "Ons kantoor is gesloten tot {date}.",
				"Ik ben met zwangerschapsverlof tot {date}.",
			},
			"wrong_person": {
				"Ik ben niet de juiste persoon, neem contact op met {colleague}.", "Ik werk niet meer bij {co}. Mail {email}.",
				"Dat is niet mijn afdeling, inkoop beslist hierover.", "Klinkt goed, maar {colleague} beslist dit, niet ik.",
				"Hiervoor moet je bij {colleague} zijn.", "Ik heb je bericht doorgestuurd naar {colleague}, die gaat hierover.",
				"Ik zit op {dept}, niet op sales. Probeer {colleague}.", "Ik ben niet meer werkzaam bij dit bedrijf.", "Mijn opvolger is {colleague} ({email}).",
				"Daar ga ik niet over, dat is de directie.", "Ik ben maar stagiair, mail liever {email}.", "Verkeerde persoon, sorry. Probeer onze salesmanager.",
				"Ik ben sinds {month} met pensioen.", "{colleague} heeft mijn taken overgenomen.", "Hiervoor is marketing verantwoordelijk, niet ik.",
			},
			"unclear": {
				"Bedankt!", "Wie bent u?", "Ok.", "Ik stuur het intern door.", "Ontvangen.", "Waar gaat dit over?", "Dank voor de info.",
				"Kennen we elkaar?", "Ik denk erover na.", "Ik bespreek het met het team.", "Prima.", "We zien wel.", "Hoe kom je aan mijn nummer?",
				"Waar heb je mijn adres vandaan?", "Interessant.", "Ik kom erop terug.", "Fijne feestdagen!", "Gelukkig nieuwjaar!", "Hmm.",
				"Gezien.", "Dank voor de connectie!", "Van welk bedrijf ben je ook alweer?", "Is dit een automatisch bericht?", "Ik kijk ernaar.",
			},
		},
		parts: map[string][][]string{
			"interested": {
				{"", "Klinkt goed.", "Goede timing.", "Interessant.", "Ja,", "Graag,"},
				{"kunnen we {day} bellen?", "past {day} om {time}?", "stuur een uitnodiging.", "plan iets in via {link}", "laat maar een demo zien.", "ik kan {day} of {day2}."},
			},
			"question": {
				{"", "Korte vraag:", "Eerst een vraag:", "Bedankt. Vraagje:"},
				{"wat kost het voor {n} gebruikers?", "werkt het met {tool}?", "waar staan de gegevens?", "is er een proefperiode?", "wat is de minimale looptijd?"},
			},
			"not_now": {
				{"", "Bedankt, maar", "Interessant, maar", "Leuk idee, maar"},
				{"we hebben het te druk", "het budget is op", "we zitten in een reorganisatie", "het heeft nu geen prioriteit"},
				{"— probeer het in {season} nog eens.", "— mail me in {month}.", "— over {n} maanden misschien.", "— volgend jaar wellicht."},
			},
			"not_interested": {
				{"", "Bedankt, maar", "Sorry,"},
				{"geen interesse.", "we hebben dit niet nodig.", "we zijn tevreden met {tool}.", "we doen het zelf."},
				{"", "Haal me van de lijst.", "Graag geen mails meer."},
			},
			"ooo": {
				{"Bedankt voor uw bericht.", "Beste,", ""},
				{"Ik ben afwezig tot {date}", "Ik ben met vakantie tot {date}", "Ik ben op reis tot {date}"},
				{"en lees mijn e-mail niet.", "met beperkte toegang tot e-mail.", "en reageer na terugkomst."},
				{"", "Voor dringende zaken: {email}.", "Uw e-mail wordt niet doorgestuurd."},
			},
			"wrong_person": {
				{"", "Bedankt, maar", "Klinkt leuk, maar"},
				{"ik ben niet de juiste persoon.", "dit is niet mijn afdeling.", "ik beslis hier niet over."},
				{"Neem contact op met {colleague}.", "Mail {email}.", "Ik heb het doorgestuurd naar {colleague}."},
			},
			"unclear": {
				{"Bedankt.", "Ok.", "Hmm."},
				{"", "Ik kijk ernaar.", "Wie bent u?", "Waar gaat het over?", "Ik stuur het door."},
			},
		},
		extra:       map[string][]string{"interested": {"Tot dan!"}, "question": {"Alvast bedankt."}, "not_interested": {"Succes verder."}, "wrong_person": {"Succes."}},
		away:        []string{"Ik ben tot {date} met vakantie, maar", "Ik zit deze week in het buitenland, maar kort:", "Ben tot {day} weg, maar"},
		softNo:      []string{"Ziet er goed uit, maar", "Leuk product, maar"},
		neutral:     []string{"We zijn een team van {n} mensen.", "We werken nu met {tool}."},
		greet:       []string{"Hoi {name},", "Beste {name},", "Goedemiddag,", "Hallo {name},", "Goedemorgen,", "Beste heer {last},", "Beste mevrouw {last},"},
		thanks:      []string{"Bedankt voor je bericht.", "Dank voor je mail.", "Bedankt voor uw e-mail."},
		signoff:     []string{"Groet,", "Met vriendelijke groet,", "Groetjes,", "Mvg,", "Hartelijke groet,"},
		titles:      []string{"Directeur", "Salesmanager", "Hoofd Marketing", "Inkoper"},
		disclaimer:  []string{"Dit bericht is vertrouwelijk. Indien u dit bericht onterecht ontvangt, verzoeken wij u het te verwijderen."},
		mobile:      []string{"Verzonden vanaf mijn iPhone", "Verstuurd vanaf mijn telefoon"},
		quoteHead:   []string{"Op {date} schreef {name}:", "Van: {name} <{email}>\nVerzonden: {date}\nAan: {name}\nOnderwerp: {subject}"},
		outreach:    []string{"Hoi, wij helpen salesteams aan meer afspraken. Heb je volgende week 15 minuten?"},
		autoSubject: []string{"Automatisch antwoord: {subject}", "Afwezig: {subject}", "Out of office: {subject}"},
		leftAuto:    []string{"Ik ben niet meer werkzaam bij {co}. Stuur uw bericht naar {email}.", "{name} werkt niet meer bij {co}. Deze mailbox wordt niet gelezen. Neem contact op met {email}."},
		fills: map[string][]string{
			"day": {"maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "morgen", "volgende week"}, "month": {"januari", "maart", "september", "april"},
			"season": {"het voorjaar", "de zomer", "het najaar", "het nieuwe jaar"}, "date": {"4 december", "11 januari", "14-12-2026", "maandag 7 december"},
			"time": {"10:00", "14.00", "half drie", "9 uur"}, "dept": {"financiën", "HR", "de administratie", "IT"},
		},
	}
}
