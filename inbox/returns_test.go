package inbox

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestAwayPersonIsAPerson: only machine evidence makes an auto-reply; a
// person who also says they are away wrote a person's reply, with its
// return date as a note.
func TestAwayPersonIsAPerson(t *testing.T) {
	is := is.New(t)
	received := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC) // a Monday
	day := func(m time.Month, d int) *time.Time { t := time.Date(2026, m, d, 0, 0, 0, 0, time.UTC); return &t }
	for _, c := range []struct {
		subject string
		headers map[string]string
		body    string
		auto    bool
		intent  Intent
		returns *time.Time
	}{
		{body: "Interested! I'm out of office until 3 Dec though — can we talk the week after?", intent: Interested, returns: day(12, 3)},
		{body: "I'm on vacation until December 7th. Interested though, let's talk when I'm back.", intent: Interested, returns: day(12, 7)},
		{body: "Out of office till Friday. What does it cost for 10 seats", intent: Question, returns: day(11, 27)},
		{body: "Thank you for your email. I am out of the office until 2026-12-01 with limited access to email.", auto: true, intent: OutOfOffice, returns: day(12, 1)},
		{body: "Ich bin bis einschließlich 4. Dezember nicht im Büro. In dringenden Fällen wenden Sie sich bitte an meine Kollegin.",
			auto: true, intent: OutOfOffice, returns: day(12, 4)},
		// The return date, not the latest date anywhere.
		{headers: map[string]string{"Auto-Submitted": "auto-replied"}, body: "I'm out of office until 7 December. Our offices are closed on 24 December.",
			auto: true, intent: OutOfOffice, returns: day(12, 7)},
		{subject: "Réponse automatique", body: "Je suis en congés, de retour le 10 décembre. La réunion du 20 décembre est maintenue.",
			auto: true, intent: OutOfOffice, returns: day(12, 10)},
		{subject: "Abwesenheitsnotiz", body: "Vom 30.11. bis 11.12. bin ich im Urlaub. Ab dem 14.12. bin ich wieder im Büro.", auto: true, intent: OutOfOffice, returns: day(12, 14)},
		{subject: "Respuesta automática", body: "Estoy de vacaciones hasta el 9 de diciembre. La feria del 20 de diciembre sigue en pie.",
			auto: true, intent: OutOfOffice, returns: day(12, 9)},
		{subject: "Automatic reply", body: "I'm away. Meetings on 1 December and 9 December are cancelled.", auto: true, intent: OutOfOffice},
		// A person's message names no return date: a meeting date is none.
		{body: "Interested — I'm away now, but free for a call on 9 December?"},
	} {
		got, err := Rules{}.Classify(context.Background(), Incoming{Subject: c.subject, Headers: c.headers, Body: c.body, ReceivedAt: received})
		is.NoErr(err)
		is.Equal(got.AutoReply, c.auto) // auto-reply
		if c.intent != "" {
			is.Equal(got.Intent, c.intent) // intent
		}
		is.Equal(got.ReturnsAt, c.returns) // return date
	}
}

// TestRelativeDatesInTheSendersZone: "back tomorrow", sent late on a
// Sunday in San Francisco, is Monday there, though it is Monday morning in
// Tokyo and Tuesday is tomorrow there.
func TestRelativeDatesInTheSendersZone(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 29, 23, 30, 0, 0, time.UTC) // Sunday 15:30 in San Francisco, Monday 08:30 in Tokyo
	for zone, want := range map[string]int{"Sun, 29 Nov 2026 15:30:00 -0800": 30, "Mon, 30 Nov 2026 08:30:00 +0900": 1} {
		got, err := Rules{}.Classify(context.Background(), Incoming{Subject: "Out of office", Headers: map[string]string{"Date": zone},
			Body: "I'm out today, back tomorrow.", ReceivedAt: at})
		is.NoErr(err)
		is.True(got.ReturnsAt != nil)
		is.Equal(got.ReturnsAt.Day(), want) // the sender's tomorrow
	}
}

// TestNoLongerWithTheCompany: such an auto-reply is wrong_person and
// names the replacement when it gives one.
func TestNoLongerWithTheCompany(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		subject, body string
		auto          bool
		want          *Replacement
	}{
		{"Automatic reply: Quick question", "I no longer work at Acme. Please contact David Kim (david.kim@acme.example) for anything related.", true,
			&Replacement{Name: "David Kim", Email: "david.kim@acme.example"}},
		{"Automatische Antwort", "Ich bin nicht mehr bei der Muster GmbH tätig. Bitte wenden Sie sich an Frau Petra Lang.", true,
			&Replacement{Name: "Frau Petra Lang"}},
		{"Réponse automatique", "Je ne travaille plus chez Exemple. Merci d'écrire à contact@exemple.fr.", true, &Replacement{Email: "contact@exemple.fr"}},
		{"Auto: hello", "This mailbox is no longer monitored: I have left the company.", true, nil},
		{"Re: hello", "I'm not the right person, you should talk to Maria Lopez <maria@globex.example>.", false,
			&Replacement{Name: "Maria Lopez", Email: "maria@globex.example"}},
	} {
		got, err := Rules{}.Classify(context.Background(), Incoming{Subject: c.subject, Body: c.body, ReceivedAt: time.Now()})
		is.NoErr(err)
		is.Equal(got.Intent, WrongPerson)
		is.Equal(got.AutoReply, c.auto)
		is.Equal(got.Replacement, c.want)
	}
}
