package email_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/mailtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
)

// TestBounceGuardOnRealServers: a mailbox sends 30 emails through the real
// Postfix, 3 of them to a domain whose server refuses them; Postfix's
// delivery reports come back over IMAP as hard bounces (5.1.1), the bounce
// guard stops the mailbox (10% against its bar of 5%), and the next lead's
// email waits for a manager instead of going out.
func TestBounceGuardOnRealServers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		box := mailtest.Mailbox(t)
		m := newMailWorld(t, d, box, `        caps: {email: 100}
        hourly_cap: 0
        max_bounce_rate: 0.05`, `
          - {id: hi, type: email, subject: "Hello {{first_name}}", body: "Hi {{first_name}}, a question for you."}`)
		pl, clock, creds, w, p := m.pl, m.clock, m.creds, m.w, m.p
		lead := func(i int, domain string) string {
			name, addr := fmt.Sprintf("Lead %d", i), fmt.Sprintf("t-guard-%d-%d@%s", i, time.Now().UnixNano(), domain)
			l, err := pl.Leads.Upsert(ctx, p, leads.LeadInput{Name: &name, EmailWork: &addr})
			is.NoErr(err)
			return l.Lead.ID
		}
		var ids []string
		for i := range 30 {
			domain := mailtest.Domain
			if i%10 == 0 {
				domain = "bounce.test" // refused by its server: a hard bounce
			}
			ids = append(ids, lead(i, domain))
		}
		q, err := pl.Sequences.ByName(ctx, w.ID, "Mail run")
		is.NoErr(err)
		is.NoErr(pl.Sequences.ActivateByName(ctx, w.ID, "Mail run"))
		_, err = pl.Enrollments.Commit(ctx, p, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: ids, Confirm: true})
		is.NoErr(err)
		runner := pl.Runner()
		tick := func() {
			t.Helper()
			_, err := runner.Tick(ctx)
			is.NoErr(err)
		}
		tick()
		is.Equal(len(box.Messages(t, "Sent")), 30)
		box.Wait(t, 3) // the three delivery reports
		s, err := pl.Senders.ByName(ctx, w.ID, "mail")
		is.NoErr(err)
		n, err := pl.Readers(creds)[0].(*email.Reader).Once(ctx, s)
		is.NoErr(err)
		is.Equal(n, 3)
		// The next health check finds 3 hard bounces in 30 sends.
		clock.Advance(2 * time.Hour)
		tick()
		s, err = pl.Senders.ByName(ctx, w.ID, "mail")
		is.NoErr(err)
		is.Equal(s.Health, senders.Warning)
		is.Equal(s.HealthReasons[0].Code, senders.GuardHighBounceRate)

		// A lead enrolled now waits for a manager; nothing more is sent.
		late := lead(30, mailtest.Domain)
		_, err = pl.Enrollments.Commit(ctx, p, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: []string{late}, Confirm: true})
		is.NoErr(err)
		clock.Advance(time.Minute)
		tick()
		en, err := pl.Enrollments.List(ctx, p, enrollments.Filter{LeadID: late, Limit: 1})
		is.NoErr(err)
		is.Equal(*en.Data[0].WaitingFor, senders.GuardHighBounceRate)
		is.Equal(len(box.Messages(t, "Sent")), 30)
	})
}
