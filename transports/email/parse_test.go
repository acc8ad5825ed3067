package email

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/senders"
)

func readEML(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestParseReplies reads replies as mail clients write them: each
// client's encodings and charsets come out as UTF-8 text, with the ids
// the reply answers newest first.
func TestParseReplies(t *testing.T) {
	cases := []struct {
		file, from, name, subject, id string
		ids                           []string
		text                          []string // lines the text holds
		at                            time.Time
	}{
		{file: "gmail-reply.eml", from: "juergen.mueller@globex.test", name: "Jürgen Müller",
			subject: "Re: Kurze Frage zu Ihrer Anfrage – grüße", id: "CAFx7Qk9vZ1=gmail+reply@mail.gmail.com",
			ids:  []string{"second.0002@leadline.test", "first.0001@leadline.test"},
			text: []string{"Thanks for reaching out — yes, we're interested.", "Jürgen", "> would a short call next week work?"},
			at:   time.Date(2026, 11, 23, 9, 2, 3, 0, time.UTC)},
		{file: "outlook-reply.eml", from: "bob@acme.test", name: "Bob Builder", subject: "RE: Quick question",
			id:   "AM9PR07MB1234ABCD5678EF90@AM9PR07MB1234.eurprd07.prod.outlook.test",
			ids:  []string{"quick.0003@leadline.test"},
			text: []string{"I’m not the right person – please contact our buyer, Zoë Café."},
			at:   time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)},
		{file: "apple-reply.eml", from: "carla@example.test", name: "Carla Diaz", subject: "Re: Our deck",
			id: "6F1A2B3C-4D5E-6F70-8192-A3B4C5D6E7F8@example.test", ids: []string{"deck.0004@leadline.test"},
			text: []string{"Sounds good, send me the deck. 👍", "Sent from my iPhone"},
			at:   time.Date(2026, 11, 23, 9, 45, 12, 0, time.UTC)},
		{file: "thunderbird-reply.eml", from: "rene@globex.test", name: "René Géraud", subject: "Re: Proposé : déjeuner",
			id:   "8d2e4f6a-1b3c-4d5e-9f70-a1b2c3d4e5f6@globex.test",
			ids:  []string{"lunch.0006@leadline.test", "lunch.0005@leadline.test"},
			text: []string{"Je suis intéressé, appelez-moi à 14h.", "René Géraud"},
			at:   time.Date(2026, 11, 23, 10, 20, 33, 0, time.UTC)},
		{file: "html-only.eml", from: "dana@acme.test", name: "Dana Lee", subject: "Re: shall we talk?",
			id: "html-only.0007@acme.test", ids: []string{"talk.0008@leadline.test"},
			text: []string{"Hi Anna,\n\nLet's do it & talk on Friday.\nCheers,\nDana", "Dana Lee CTO", "> Hi Dana,\n>\n> shall we talk?"},
			at:   time.Date(2026, 11, 24, 13, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			is := is.New(t)
			p, err := Parse(readEML(t, c.file))
			is.NoErr(err)
			is.Equal(p.From, c.from)
			is.Equal(p.FromName, c.name)
			is.Equal(p.Subject, c.subject)
			is.Equal(p.MessageID, c.id)
			is.True(p.Date.Equal(c.at))
			is.True(p.Report == nil)
			is.True(!p.AutoReply)
			for _, l := range c.text {
				is.True(strings.Contains(p.Text, l)) // the text holds l
			}
			is.True(!strings.Contains(p.Text, "\r"))
			is.True(!strings.Contains(p.Text, "<div") && !strings.Contains(p.Text, "<p")) // no HTML
			in, err := p.Inbound()
			is.NoErr(err)
			is.Equal(in.Kind, senders.InboundReply)
			is.Equal(in.LeadID, "")
			is.Equal(in.ProviderMessageID, c.id)
			is.Equal(in.Subject, c.subject)
			is.Equal(in.Body, p.Text)
			is.True(in.At.Equal(c.at))
			is.Equal(in.Match.MessageIDs, c.ids)
			is.Equal(in.Match.Email, c.from)
		})
	}
}

func TestParseAutoReply(t *testing.T) {
	is := is.New(t)
	p, err := Parse(readEML(t, "auto-reply.eml"))
	is.NoErr(err)
	is.True(p.AutoReply)
	is.Equal(p.Headers, map[string]string{"Auto-Submitted": "auto-replied", "Precedence": "auto_reply"})
	in, err := p.Inbound()
	is.NoErr(err)
	is.Equal(in.Kind, senders.InboundReply) // the inbox keeps it, as an auto-reply
	is.True(in.AutoReply)
	is.Equal(in.Headers["Auto-Submitted"], "auto-replied")
	is.Equal(in.Match.MessageIDs, []string{"quick.0010@leadline.test"})
	is.True(strings.Contains(in.Body, "contact Åsa Berg"))
}

// TestParseBounces reads delivery status notifications: a failed
// recipient is a bounce about the original message; a delay is not.
func TestParseBounces(t *testing.T) {
	t.Run("postfix", func(t *testing.T) {
		is := is.New(t)
		p, err := Parse(readEML(t, "postfix-bounce.eml"))
		is.NoErr(err)
		is.True(p.Report != nil)
		is.Equal(p.Report.OriginalMessageID, "x3@leadline.test") // from the returned message
		is.Equal(len(p.Report.Recipients), 1)
		r := p.Report.Recipients[0]
		is.Equal(r.Recipient, "nobody@bounce.test")
		is.Equal(r.Action, "failed")
		is.Equal(r.Status, "5.1.1")
		is.True(strings.HasPrefix(r.Diagnostic, "550 5.1.1 <nobody@bounce.test>: Recipient address rejected"))
		in, err := p.Inbound()
		is.NoErr(err)
		is.Equal(in.Kind, senders.InboundBounce)
		is.Equal(in.ProviderMessageID, "20261125150125.7954AC0595@mail.leadline.test")
		is.Equal(in.Match.MessageIDs, []string{"x3@leadline.test"})
		is.Equal(in.Match.Email, "nobody@bounce.test") // the lead's address that bounced
		is.True(strings.HasPrefix(in.Message, "5.1.1 nobody@bounce.test: 550 5.1.1"))
		is.True(!in.AutoReply)
	})
	t.Run("exchange", func(t *testing.T) {
		is := is.New(t)
		p, err := Parse(readEML(t, "exchange-ndr.eml"))
		is.NoErr(err)
		is.Equal(p.Report.OriginalMessageID, "gone.0013@leadline.test") // text/rfc822-headers
		in, err := p.Inbound()
		is.NoErr(err)
		is.Equal(in.Kind, senders.InboundBounce)
		is.Equal(in.Match.Email, "gone.person@acme.test")
		is.True(strings.HasPrefix(in.Message, "5.1.10 gone.person@acme.test: 550 5.1.10 RESOLVER.ADR.RecipientNotFound"))
	})
	t.Run("delay", func(t *testing.T) {
		is := is.New(t)
		p, err := Parse(readEML(t, "postfix-delay.eml"))
		is.NoErr(err)
		is.Equal(p.Report.OriginalMessageID, "slow.0011@leadline.test")
		is.Equal(p.Report.Recipients[0].Status, "4.7.1")
		is.True(!p.Report.Recipients[0].Failed())
		_, err = p.Inbound()
		is.True(errors.Is(err, ErrNothingToReport)) // a delay is not a bounce
	})
	t.Run("original id from headers", func(t *testing.T) {
		is := is.New(t)
		raw := "From: MAILER-DAEMON@acme.test\r\nX-Original-Message-ID: <orig.1@leadline.test>\r\nMessage-ID: <dsn.1@acme.test>\r\n" +
			"Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\n" +
			"Reporting-MTA: dns; acme.test\r\n\r\nFinal-Recipient: rfc822; x@acme.test\r\nStatus: 5.2.1\r\n\r\n--b--\r\n"
		p, err := Parse([]byte(raw))
		is.NoErr(err)
		in, err := p.Inbound()
		is.NoErr(err)
		is.Equal(in.Kind, senders.InboundBounce)
		is.Equal(in.Match.MessageIDs, []string{"orig.1@leadline.test"})
		is.Equal(in.Message, "5.2.1 x@acme.test")
	})
}

func TestParseLenient(t *testing.T) {
	is := is.New(t)
	// Ids without brackets, a From the strict parser refuses, an unknown
	// charset, no Content-Type: still read.
	raw := "From: Joe Q. Public <JOE@example.test>\r\nIn-Reply-To: a.1@leadline.test\r\nReferences: a.0@leadline.test a.1@leadline.test\r\n" +
		"Subject: =?x-unknown?Q?hi?=\r\n\r\nplain body\r\n\r\n"
	p, err := Parse([]byte(raw))
	is.NoErr(err)
	is.Equal(p.From, "joe@example.test")
	is.Equal(p.InReplyTo, []string{"a.1@leadline.test"})
	is.Equal(p.References, []string{"a.1@leadline.test", "a.0@leadline.test"})
	is.Equal(p.Text, "plain body")
	in, err := p.Inbound()
	is.NoErr(err)
	is.Equal(in.Match.MessageIDs, []string{"a.1@leadline.test", "a.0@leadline.test"})

	_, err = Parse([]byte(" bad header\r\n"))
	is.True(err != nil)
}

func TestHTMLText(t *testing.T) {
	is := is.New(t)
	is.Equal(htmlText(`<html><head><title>x</title><style>p{}</style></head><body><script>alert(1)</script>`+
		`<ul><li>one</li><li>t<b>wo</b> &lt;3</li></ul><img alt="logo"><p>a&nbsp;b</p></body></html>`), "- one\n- two <3\nlogo\na b")
}
