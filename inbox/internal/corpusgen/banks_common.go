package main

// The phrase banks: per language (banks_en.go, banks_de.go, …), per
// intent, the sentences a reply is built around and the pieces around
// them. Placeholders in braces are filled from the language's fills, then
// from these.

var fills = map[string][]string{
	"name": {"Anna", "Tom", "Lea", "Marco", "Sofia", "Jonas", "Claire", "Pablo", "Emma", "Lukas", "Inès", "Lucía", "Daan", "Giulia",
		"João", "Mike", "Sarah", "Ahmed", "Priya", "Kenji", "Olga", "Fatima", "Ben", "Chloé", "Nils", "Marta", "Rui", "Femke"},
	"last": {"Keller", "Martin", "García", "Rossi", "de Vries", "Schmidt", "Dubois", "López", "Jansen", "Ferrari", "Silva", "Müller",
		"O'Brien", "Nowak", "Kaya", "Smith", "Bianchi", "Moreau", "Costa", "Bakker", "Wagner", "Evans"},
	"colleague": {"Maria Lopez", "Jan Becker", "Sophie Laurent", "Carlos Ruiz", "Priya Shah", "Frau Lang", "Mark Stone", "Julia Weber",
		"Herr Brandt", "Lotte de Boer", "Paolo Greco", "Ana Sousa", "Kevin O'Neill", "Nadia Benali", "Stefan Krause", "Elena Marino",
		"Tom", "Sarah", "Lena", "Jeroen", "Francesca", "Miguel"},
	"email": {"maria.lopez@globex.test", "einkauf@acme.test", "s.laurent@initech.test", "compras@hooli.test", "office@umbrella.test",
		"sales@vandelay.test", "info@stark.test", "j.becker@wayne.test", "procurement@soylent.test", "marketing@tyrell.test",
		"hello@cyberdyne.test", "p.shah@wonka.test"},
	"co": {"Globex", "Acme", "Initech", "Hooli", "Umbrella", "Stark GmbH", "Vandelay SA", "Wayne BV", "Soylent Srl", "Tyrell Lda",
		"Cyberdyne", "Wonka Ltd", "Nakatomi AG", "Oscorp"},
	"tool": {"HubSpot", "Salesforce", "Outreach", "Pipedrive", "Lemlist", "Apollo", "Slack", "Salesloft", "Zoho", "Dynamics",
		"Gmail", "Outlook", "Close", "Reply.io"},
	"industry": {"SaaS", "logistics", "insurance", "retail", "Maschinenbau", "la banque", "la industria", "manufacturing", "healthcare"},
	"n":        {"5", "8", "12", "20", "25", "40", "60", "3", "6", "10"},
	"link": {"cal.example.test/jm", "https://calendly.test/anna-k/30min", "meet.example.test/lea", "https://book.test/tom",
		"calendar.test/pvries"},
	"phone": {"+49 30 1234 5678", "+44 20 7946 0018", "+33 1 42 68 53 00", "+34 912 345 678", "+31 20 123 4567", "+39 02 1234 5678",
		"+351 21 123 4567", "+1 (415) 555-0132", "M: +49 171 2345678", "Tel. 0211 987654"},
	"site": {"globex.test", "acme.test", "initech.test", "hooli.test", "wonka.test"},
	"subject": {"Quick question", "Outbound at {co}", "Idee für Ihr Team", "Une idée", "Una pregunta", "Intro", "{name} <> {co}",
		"More meetings for {co}", "Following up", "Your sales team", "Kurze Frage", "Idee voor {co}", "Un'idea", "Uma ideia",
		"15 minutes?", "Re: Quick question"},
}

// autoHeaders make some auto-replies look as mail servers send them.
var autoHeaders = []map[string]string{{"Auto-Submitted": "auto-replied"}, {"X-Autoreply": "yes"}, {"Precedence": "auto_reply"},
	{"X-Apple-Action": "vacation"}, {"Auto-Submitted": "auto-generated"}}

// outreachEN is the English message a reply may quote.
var outreachEN = []string{
	"Hi, quick question: are you the right person to talk to about outbound at {co}? We help teams book more meetings. Would a 15-minute call make sense?",
	"Hi {name},\nI noticed {co} is hiring SDRs. We help sales teams spend less time sorting replies.\nOpen to a quick chat next week?",
	"Hey {name}, just bumping this to the top of your inbox. Worth a conversation?",
}
