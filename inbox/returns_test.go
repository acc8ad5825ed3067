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
		// Friday 4 December is the last day away: back the Monday after.
		{body: "Ich bin bis einschließlich 4. Dezember nicht im Büro. In dringenden Fällen wenden Sie sich bitte an meine Kollegin.",
			auto: true, intent: OutOfOffice, returns: day(12, 7)},
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

// TestReturnDates: an explicit date beats a weekday beside it or
// elsewhere; a range's last day, or an inclusive end, gives the next
// working day when no return is written; numbers are read day first
// except in American English, with the year inferred forward from the
// day received; in the seven languages.
func TestReturnDates(t *testing.T) {
	is := is.New(t)
	nov23 := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC) // a Monday: "next Monday" is 30 November
	dec18 := time.Date(2026, 12, 18, 9, 0, 0, 0, time.UTC)
	day := func(y int, m time.Month, d int) string {
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	}
	for _, c := range []struct {
		received time.Time
		body     string
		want     string
	}{
		// A weekday beside a date is that date, not the next such weekday.
		{nov23, "I am out of the office until Monday, Dec 7th.", day(2026, 12, 7)},
		{nov23, "Ich bin bis Mittwoch, 9.12. nicht im Büro.", day(2026, 12, 9)},
		{nov23, "I'm away and will return on Thursday 3 December.", day(2026, 12, 3)},
		{nov23, "Je suis absent jusqu'au lundi 7 décembre.", day(2026, 12, 7)},
		{nov23, "Estoy fuera de la oficina hasta el lunes 7 de diciembre.", day(2026, 12, 7)},
		{nov23, "Sono fuori ufficio fino a lunedì 7 dicembre.", day(2026, 12, 7)},
		{nov23, "Estou fora do escritório até segunda-feira, 7 de dezembro.", day(2026, 12, 7)},
		{nov23, "Ik ben afwezig tot maandag 7 december.", day(2026, 12, 7)},
		{nov23, "Back in the office next Monday (November 30).", day(2026, 11, 30)},
		// A written return beats the absence's end, and a weekday after
		// an absence's last day counts from it.
		{nov23, "I am away through Friday, December 4, returning Monday, December 7.", day(2026, 12, 7)},
		{nov23, "I am away on leave until Friday 4 December, back Monday.", day(2026, 12, 7)},
		{nov23, "Estoy en una feria hasta el miércoles 2 de diciembre; a partir del jueves estaré de nuevo en la oficina.", day(2026, 12, 3)},
		{nov23, "I'm out today and tomorrow, back on Wednesday.", day(2026, 11, 25)},
		// Numbers: day first, month first in American English; the reading
		// that gives a date ahead when only one does.
		{nov23, "I'm out of office, returning 02/12/2026.", day(2026, 12, 2)},
		{nov23, "I'm on annual leave until 01/12.", day(2026, 12, 1)},
		{nov23, "I'm on vacation until 01/12.", day(2027, 1, 12)},
		{nov23, "I am out of the office until 12/7.", day(2026, 12, 7)},
		{nov23, "Ik ben met verlof tot 11.12.2026.", day(2026, 12, 11)},
		// A range's last day, or an inclusive end, is followed by the next
		// working day.
		{nov23, "I'm on annual leave from 20/11/2026 to 01/12/2026 inclusive.", day(2026, 12, 2)},
		{nov23, "I'm out of the office through December 4.", day(2026, 12, 7)},
		{nov23, "Ich bin vom 30.11. bis 04.12. im Urlaub.", day(2026, 12, 7)},
		{nov23, "Ik ben met vakantie tot en met 4 december.", day(2026, 12, 7)},
		{nov23, "Je suis absente du 30/11 au 04/12.", day(2026, 12, 7)},
		{nov23, "Sarò assente fino al 2 dicembre compreso.", day(2026, 12, 3)},
		{nov23, "Estarei fora de 23 a 27 de novembro.", day(2026, 11, 30)},
		{nov23, "I'm on vacation Nov 30 - Dec 4.", day(2026, 12, 7)},
		// "ab" starts an absence unless the writer is there again.
		{time.Date(2026, 11, 18, 9, 0, 0, 0, time.UTC), "Ich bin ab 20.11. im Urlaub und ab 7.12. wieder im Büro.", day(2026, 12, 7)},
		// The year runs forward from the day received.
		{dec18, "Ich bin vom 21.12. bis 8.1. nicht im Büro.", day(2027, 1, 11)},
		{dec18, "Estoy de vacaciones. Me reincorporo el 11 de enero.", day(2027, 1, 11)},
		{dec18, "Sono in ferie fino all'8 gennaio.", day(2027, 1, 8)},
		// No day named, no date.
		{nov23, "I'm on maternity leave until June 2027.", ""},
	} {
		got, err := Rules{}.Classify(context.Background(), Incoming{Headers: map[string]string{"Auto-Submitted": "auto-replied"}, Body: c.body, ReceivedAt: c.received})
		is.NoErr(err)
		read := ""
		if got.ReturnsAt != nil {
			read = got.ReturnsAt.Format(time.DateOnly)
		}
		is.Equal(read, c.want) // return date
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
		{"Re: hello", "Wrong person, sorry. Please write to Tom Berg instead: https://www.linkedin.com/in/Tom-Berg-42/", false,
			&Replacement{Name: "Tom Berg", LinkedIn: "tom-berg-42"}},
	} {
		got, err := Rules{}.Classify(context.Background(), Incoming{Subject: c.subject, Body: c.body, ReceivedAt: time.Now()})
		is.NoErr(err)
		is.Equal(got.Intent, WrongPerson)
		is.Equal(got.AutoReply, c.auto)
		is.Equal(got.Replacement, c.want)
	}
}
