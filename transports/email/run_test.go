package email_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/mailtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/transports/email"
	"github.com/leadline/leadline/workspace"
)

// mailWorld is a workspace whose one mailbox, mail, sends through the test
// servers as box (spacing off, so that one tick sends what is due), and
// whose one sequence, Mail run, has steps (YAML list items).
type mailWorld struct {
	pl    *platform.Platform
	clock *apikit.FakeClock
	creds mailtest.Secrets
	w     *workspace.Workspace
	p     apikit.Principal
}

// newMailWorld applies the world; sender holds more of the sender's
// settings (YAML lines at its indentation, or "").
func newMailWorld(t *testing.T, d *db.DB, box mailtest.Box, sender, steps string) mailWorld {
	t.Helper()
	ctx := context.Background()
	clock := apikit.NewFakeClock(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)) // a Monday
	pl := platform.New(platform.Config{DB: d, Clock: clock, SecretKey: secret.TestKey()})
	creds := mailtest.Secrets{"MAIL_PW": mailtest.Password}
	pl.UseTransports(pl.Transports(platform.Outside{PublicURL: "https://leadline.example.test", Credentials: creds, Seed: 1}))
	smtpSet, imapSet := email.BoxSMTP(box, "MAIL_PW"), email.BoxIMAP(box, "MAIL_PW")
	f, err := setup.Decode(strings.NewReader(fmt.Sprintf(`workspaces:
  - name: acme
    timezone: UTC
    members: [{email: owner@acme.test, role: owner}]
    senders:
      - name: mail
        channel: email
        address: %s
        timezone: UTC
        transport: smtp
        schedule: {mon-sun: ["00:00-23:59"]}
        spacing: {min: 0s, max: 0s}
%s
        smtp: {host: %s, port: %d, security: none, username: %s, password_env: MAIL_PW, display_name: "Dana Whitfield"}
        imap: {host: %s, port: %d, security: none, username: %s, password_env: MAIL_PW, inbox: INBOX, sent: Sent}
    sequences:
      - name: Mail run
        senders: [mail]
        steps:%s
`, box.Address, sender, smtpSet.Host, smtpSet.Port, box.Address, imapSet.Host, imapSet.Port, box.Address, steps)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Apply(ctx, d, clock, secret.TestKey(), f); err != nil {
		t.Fatal(err)
	}
	w, err := pl.Workspaces.ByName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	return mailWorld{pl: pl, clock: clock, creds: creds, w: w, p: apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}}
}

// TestWholeRunOnRealServers is a sequence of email, wait and email run
// through the real Postfix and Dovecot: the first email reaches the
// lead's mailbox, her reply comes back over IMAP into the thread, the
// enrollment stops, and the second email is never sent.
func TestWholeRunOnRealServers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		box, ann := mailtest.Mailbox(t), mailtest.Mailbox(t)
		m := newMailWorld(t, d, box, "", `
          - {id: hi, type: email, subject: "Hello {{first_name}}", body: "Hi {{first_name}}, a question for you."}
          - {id: pause, type: wait, days: 2}
          - {id: again, type: email, body: "Following up on my note."}`)
		pl, clock, creds, w, p := m.pl, m.clock, m.creds, m.w, m.p
		name, addr := "Ann Lee", ann.Address
		lead, err := pl.Leads.Upsert(ctx, p, leads.LeadInput{Name: &name, EmailWork: &addr})
		is.NoErr(err)
		// Bo's address is dead: the receiving server refuses it after
		// Postfix took the message, and a delivery report comes back.
		boName, boAddr := "Bo Chen", "bo@bounce.test"
		bo, err := pl.Leads.Upsert(ctx, p, leads.LeadInput{Name: &boName, EmailWork: &boAddr})
		is.NoErr(err)
		q, err := pl.Sequences.ByName(ctx, w.ID, "Mail run")
		is.NoErr(err)
		is.NoErr(pl.Sequences.ActivateByName(ctx, w.ID, "Mail run"))
		_, err = pl.Enrollments.Commit(ctx, p, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: []string{lead.Lead.ID, bo.Lead.ID}, Confirm: true})
		is.NoErr(err)
		status := func(leadID string) enrollments.Status {
			t.Helper()
			en, err := pl.Enrollments.List(ctx, p, enrollments.Filter{LeadID: leadID, Limit: 10})
			is.NoErr(err)
			is.Equal(len(en.Data), 1)
			return en.Data[0].Status
		}

		runner := pl.Runner()
		tick := func() {
			t.Helper()
			if _, err := runner.Tick(ctx); err != nil {
				t.Fatal(err)
			}
		}
		tick()
		// The first email is in Ann's mailbox, and its copy in Sent.
		ann.Wait(t, 1)
		got := string(ann.Messages(t, "INBOX")[0])
		is.True(strings.Contains(got, "Subject: Hello Ann"))
		is.True(strings.Contains(got, "List-Unsubscribe: <https://leadline.example.test/unsubscribe/"))
		id := regexp.MustCompile(`(?m)^Message-ID: <([^>]+)>`).FindStringSubmatch(got)
		is.True(id != nil)
		is.Equal(len(box.Messages(t, "Sent")), 2)
		box.Wait(t, 1) // Bo's bounce

		// Ann answers from her mail client.
		reply := fmt.Sprintf("From: Ann Lee <%s>\r\nTo: %s\r\nSubject: Re: Hello Ann\r\nMessage-ID: <reply-1@leadline.test>\r\n"+
			"In-Reply-To: <%s>\r\nReferences: <%s>\r\nDate: Mon, 23 Nov 2026 10:00:00 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"+
			"Sounds interesting — happy to talk. How about Thursday?\r\n\r\nOn Mon, Dana wrote:\r\n> Hi Ann, a question for you.\r\n",
			ann.Address, box.Address, id[1], id[1])
		box.Deliver(t, ann.Address, []string{box.Address}, []byte(reply), 2)
		s, err := pl.Senders.ByName(ctx, w.ID, "mail")
		is.NoErr(err)
		n, err := pl.Readers(creds)[0].(*email.Reader).Once(ctx, s)
		is.NoErr(err)
		is.Equal(n, 2) // the bounce and the reply
		clock.Advance(time.Minute)
		tick()

		// The reply is in the thread, matched by In-Reply-To; the
		// enrollment stopped.
		page, err := pl.Inbox.List(ctx, p, inbox.Filter{LeadID: lead.Lead.ID, Limit: 10})
		is.NoErr(err)
		is.Equal(len(page.Data), 1)
		v, err := pl.Inbox.Get(ctx, p, page.Data[0].ID)
		is.NoErr(err)
		is.Equal(len(v.Messages), 2)
		is.Equal(v.Messages[1].Direction, inbox.In)
		is.True(strings.Contains(v.Messages[1].Body, "How about Thursday?"))
		is.True(status(lead.Lead.ID) != enrollments.Active)
		// Bo's bounce, matched by the original Message-ID, failed his
		// enrollment and is recorded.
		is.Equal(status(bo.Lead.ID), enrollments.Failed)
		bounced, err := d.NewSelect().Table("events").Where("kind = ? AND lead_id = ?", enrollments.EventEmailBounced, bo.Lead.ID).Count(ctx)
		is.NoErr(err)
		is.Equal(int(bounced), 1)

		// A member answers her from the inbox: the reply continues her
		// message's thread.
		_, err = pl.Inbox.Reply(ctx, p, v.ID, inbox.ReplyInput{Body: "Thursday 3pm works. Talk then!"})
		is.NoErr(err)
		ann.Wait(t, 2)
		var answer string
		for _, raw := range ann.Messages(t, "INBOX") {
			if strings.Contains(string(raw), "Thursday 3pm") {
				answer = string(raw)
			}
		}
		is.True(strings.Contains(answer, "In-Reply-To: <reply-1@leadline.test>"))
		is.True(strings.Contains(answer, "Subject: Re: Hello Ann"))
		is.True(!strings.Contains(answer, "List-Unsubscribe")) // a person's answer, no campaign mail

		// Days later, no second email: reading the same mail again
		// queues nothing new.
		clock.Advance(3 * 24 * time.Hour)
		tick()
		n, err = pl.Readers(creds)[0].(*email.Reader).Once(ctx, s)
		is.NoErr(err)
		is.Equal(n, 0)
		tick()
		is.Equal(len(ann.Messages(t, "INBOX")), 2) // the first email and the member's answer
		is.Equal(len(box.Messages(t, "Sent")), 3)
	})
}
