package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/senders"
)

const mailSequences = `
      - name: Mail only
        client: Globex
        senders: [mail]
        steps:
          - {id: hi, type: email, subject: "Hello {{first_name}}", body: "Hi {{first_name}}, a question."}
          - {id: pause, type: wait, days: 3}
          - {id: again, type: email, subject: "Again", body: "Following up."}
`

// thread returns the lead's only thread with its messages.
func (e *rig) thread(leadID string) *inbox.ThreadView {
	e.t.Helper()
	page, err := e.pl.Inbox.List(context.Background(), e.p, inbox.Filter{LeadID: leadID, Limit: 10})
	if err != nil || len(page.Data) != 1 {
		e.t.Fatalf("thread of lead %s: %v (%d threads)", leadID, err, len(page.Data))
	}
	v, err := e.pl.Inbox.Get(context.Background(), e.p, page.Data[0].ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *rig) count(kind, leadID string) int {
	e.t.Helper()
	n, err := e.db.NewSelect().Table("events").Where("kind = ? AND lead_id = ?", kind, leadID).Count(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return int(n)
}

func TestRepliesLandInThreads(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, mailSequences, "mail")
		e.activate("Mail only")
		ann := e.lead("Ann Lee", nil)
		e.enrol("Mail only", ann)
		e.runUntil(monday.Add(6 * time.Hour))

		// The runner's email is the thread's first message.
		v := e.thread(ann)
		is.Equal(v.Channel, senders.Email)
		is.Equal(v.SenderID, e.ids["mail"])
		is.Equal(len(v.Messages), 1)
		is.Equal(v.Messages[0].Direction, inbox.Out)
		is.Equal(*v.Messages[0].Subject, "Hello Ann")
		is.Equal(v.Messages[0].Body, "Hi Ann, a question.")
		is.Equal(v.Intent, nil)
		is.Equal(v.Unread, false)

		// Her reply lands in the thread, is read as interested, fires
		// message.classified once and stops the enrollment.
		reply := senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: ann, At: e.clock.Now(), ProviderMessageID: "p-1",
			Subject: "Re: Hello Ann", Body: "Sounds interesting, happy to chat. How about Thursday afternoon?"}
		e.net.Deliver(reply)
		e.runUntil(e.clock.Now().Add(time.Minute))
		v = e.thread(ann)
		is.Equal(len(v.Messages), 2)
		in := v.Messages[1]
		is.Equal(in.Direction, inbox.In)
		is.Equal(*in.Intent, inbox.Interested)
		is.Equal(in.AutoReply, false)
		is.Equal(*v.Intent, inbox.Interested)
		is.Equal(*v.IntentSource, inbox.SourceAuto)
		is.Equal(v.Unread, true)
		is.Equal(*v.SequenceID, e.ids["Mail only"])
		is.Equal(e.enrollment(ann).Status, enrollments.Replied)
		is.Equal(e.count("message.classified", ann), 1)

		// The same provider message again changes nothing.
		e.net.Deliver(reply)
		e.runUntil(e.clock.Now().Add(time.Minute))
		is.Equal(len(e.thread(ann).Messages), 2)
		is.Equal(e.count("message.classified", ann), 1)
		is.Equal(e.count("reply.received", ann), 1)

		// A reply from a lead the workspace does not have is skipped, and
		// holds back nothing handed over with it.
		e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: "0193a000-0000-7000-8000-000000000000",
			At: e.clock.Now(), ProviderMessageID: "p-x", Body: "Hello?"})
		e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: ann, At: e.clock.Now(), ProviderMessageID: "p-2",
			Body: "Also: what does it cost?"})
		e.runUntil(e.clock.Now().Add(time.Minute))
		is.Equal(len(e.thread(ann).Messages), 3)
		is.Equal(*e.thread(ann).Intent, inbox.Question) // the latest reply a person wrote

		// A manual intent fires message.classified again only when it changes.
		th, err := e.pl.Inbox.SetIntent(ctx, e.p, v.ID, inbox.NotNow)
		is.NoErr(err)
		is.Equal(*th.IntentSource, inbox.SourceManual)
		is.Equal(e.count("message.classified", ann), 3)
		_, err = e.pl.Inbox.SetIntent(ctx, e.p, v.ID, inbox.NotNow)
		is.NoErr(err)
		is.Equal(e.count("message.classified", ann), 3)
		_, err = e.pl.Inbox.SetIntent(ctx, e.p, v.ID, "maybe")
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		e.noViolations()
	})
}

func TestReplyStopsTheLeadInEverySequence(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, mailSequences, "Berlin CTOs", "mail")
		e.activate("Mail only")
		e.activate("Berlin CTOs")
		bea := e.lead("Bea Ruiz", nil)
		first := e.enrol("Mail only", bea).EnrollmentIDs[0]
		e.runUntil(monday.Add(6 * time.Hour))
		is.Equal(len(e.thread(bea).Messages), 1)
		// She leaves the first sequence and enters the second, which waits
		// for her to accept an invitation.
		_, err := e.svc.Exit(ctx, e.p, first)
		is.NoErr(err)
		e.enrol("Berlin CTOs", bea)
		e.runUntil(monday.Add(8 * time.Hour))
		is.Equal(*e.enrollment(bea).WaitingFor, "awaiting_acceptance")

		// She answers the first sequence's email: the second one stops.
		e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: bea, At: e.clock.Now(), ProviderMessageID: "p-2",
			Body: "Not interested, please remove me from your list."})
		e.runUntil(e.clock.Now().Add(time.Minute))
		en := e.enrollment(bea)
		is.Equal(en.SequenceID, e.ids["Berlin CTOs"])
		is.Equal(en.Status, enrollments.Replied)
		is.Equal(*e.thread(bea).Intent, inbox.NotInterested)
		l, err := e.leads.Get(ctx, e.p, bea)
		is.NoErr(err)
		is.True(l.Replied)
		// Nothing more goes to her from any sequence.
		sent := len(e.net.Performed())
		e.runUntil(monday.AddDate(0, 0, 10))
		for _, p := range e.net.Performed()[sent:] {
			is.True(p.LeadID != bea)
		}
		e.noViolations()
	})
}

func TestOutOfOfficeWaitsForTheReturnDate(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, mailSequences, "mail")
		e.activate("Mail only")
		cy, dan := e.lead("Cy Young", nil), e.lead("Dan Ito", nil)
		e.enrol("Mail only", cy, dan)
		e.runUntil(monday.Add(6 * time.Hour))
		now := e.clock.Now()
		// Cy's auto-reply names a date; Dan's says nothing of when. The
		// network knows they are auto-replies but does not say so (as no
		// provider does): the headers, subject and wording tell.
		e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: cy, At: now, ProviderMessageID: "p-3", AutoReply: true,
			Subject: "Automatic reply: Hello Cy", Headers: map[string]string{"Auto-Submitted": "auto-replied"},
			Body: "I am out of the office until 16 November with limited access to email."})
		e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: dan, At: now, ProviderMessageID: "p-4", AutoReply: true,
			Subject: "Abwesenheitsnotiz", Body: "Ich bin derzeit nicht im Büro."})
		e.runUntil(now.Add(time.Minute))
		ce, de := e.enrollment(cy), e.enrollment(dan)
		is.Equal(ce.Status, enrollments.Active)
		is.Equal(*ce.WaitingFor, "out_of_office")
		is.True(ce.NextRunAt.Equal(time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)))
		is.True(de.NextRunAt.Equal(now.Add(engine.OutOfOfficeDelay)))
		v := e.thread(cy)
		is.Equal(*v.Intent, inbox.OutOfOffice)
		is.True(v.Messages[1].AutoReply)
		l, err := e.leads.Get(context.Background(), e.p, cy)
		is.NoErr(err)
		is.True(!l.Replied)
		// The follow-up goes out after the return date.
		e.runUntil(time.Date(2026, 11, 17, 12, 0, 0, 0, time.UTC))
		is.Equal(len(e.thread(cy).Messages), 3)
		is.Equal(e.enrollment(cy).Status, enrollments.Finished)
		e.noViolations()
	})
}

// TestOneBatchKeepsEachLeadsOrder: a batch of reports writes its
// reply-stops together, yet a later report of the same lead sees them.
func TestOneBatchKeepsEachLeadsOrder(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, mailSequences, "mail")
		e.activate("Mail only")
		eve, fay := e.lead("Eve Ng", nil), e.lead("Fay Wu", nil)
		e.enrol("Mail only", eve, fay)
		e.runUntil(monday.Add(6 * time.Hour))
		now := e.clock.Now()
		// Eve replies twice, then her address bounces; Fay replies once.
		for i, body := range []string{"Sounds good, Thursday?", "Also, what does it cost?"} {
			e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: eve, At: now, ProviderMessageID: fmt.Sprint("eve-", i), Body: body})
		}
		e.net.Deliver(senders.Inbound{Kind: senders.InboundBounce, SenderID: e.ids["mail"], LeadID: eve, At: now, Message: "550 gone"})
		e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: fay, At: now, ProviderMessageID: "fay-0", Body: "Not interested."})
		e.runUntil(now.Add(time.Minute))
		for _, l := range []string{eve, fay} {
			is.Equal(e.enrollment(l).Status, enrollments.Replied)
			is.Equal(e.count("enrollment.replied", l), 1)
			is.Equal(e.count("enrollment.failed", l), 0)
			got, err := e.leads.Get(context.Background(), e.p, l)
			is.NoErr(err)
			is.True(got.Replied)
		}
		is.Equal(len(e.thread(eve).Messages), 3)
	})
}

// TestAwayPersonsReplyStops: a person who answers and says they are away
// wrote a reply: it stops the enrollment (reply-stop), and the return date
// is a note on the thread, not a delay. A "no longer with the company"
// auto-reply stops it too and records who replaces the lead.
func TestAwayPersonsReplyStops(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, mailSequences, "mail")
		e.activate("Mail only")
		eli, fin := e.lead("Eli Stone", nil), e.lead("Fin Moss", nil)
		e.enrol("Mail only", eli, fin)
		e.runUntil(monday.Add(6 * time.Hour))
		now := e.clock.Now()
		e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: eli, At: now, ProviderMessageID: "p-5",
			Subject: "Re: Hello Eli", Body: "Interested! I'm out of office until 3 Dec though — can we talk the week after?\n\nOn Mon, Nov 2, 2026 at 9:00 AM Anna wrote:\n> Hi Eli, a question."})
		e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["mail"], LeadID: fin, At: now, ProviderMessageID: "p-6", AutoReply: true,
			Subject: "Automatic reply: Hello Fin", Headers: map[string]string{"Auto-Submitted": "auto-replied"},
			Body: "I no longer work at Globex. Please contact Gina Park (gina.park@globex.example) instead."})
		e.runUntil(now.Add(time.Minute))

		is.Equal(e.enrollment(eli).Status, enrollments.Replied)
		v := e.thread(eli)
		is.True(*v.Intent != inbox.OutOfOffice) // a person (the model may be unsure of the rest: it then asks for review)
		is.True(!v.Messages[1].AutoReply)
		is.True(v.ReturnsAt != nil && v.ReturnsAt.Equal(time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))) // the return date, as a note
		is.Equal(e.count(inbox.EventReplyReceived, eli), 1)
		l, err := e.leads.Get(context.Background(), e.p, eli)
		is.NoErr(err)
		is.True(l.Replied)

		is.Equal(e.enrollment(fin).Status, enrollments.Replied)
		w := e.thread(fin)
		is.Equal(*w.Intent, inbox.WrongPerson)
		is.True(w.Messages[1].AutoReply)
		is.Equal(apikit.Deref(w.ReplacementName), "Gina Park")
		is.Equal(apikit.Deref(w.ReplacementEmail), "gina.park@globex.example")

		// Nothing more goes to either.
		sent := len(e.net.Performed())
		e.runUntil(monday.AddDate(0, 0, 10))
		for _, p := range e.net.Performed()[sent:] {
			is.True(p.LeadID != eli && p.LeadID != fin)
		}
		e.noViolations()
	})
}
