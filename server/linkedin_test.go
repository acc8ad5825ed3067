package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/unipiletest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/transports/unipile"
)

// The LinkedIn members of the runs: Ann runs to the end, Bo answers after
// the first message, Cy's profile LinkedIn will not let the account reach.
var (
	liAnn = unipiletest.Member{ProviderID: "ACoAAAnn000000000000000000000000000001", PublicIdentifier: "ann-lee-berlin", FirstName: "Ann", LastName: "Lee"}
	liBo  = unipiletest.Member{ProviderID: "ACoAABo0000000000000000000000000000002", PublicIdentifier: "bo-chen", FirstName: "Bo", LastName: "Chen"}
	liCy  = unipiletest.Member{ProviderID: "ACoAACy0000000000000000000000000000003", PublicIdentifier: "cy-private", FirstName: "Cy", LastName: "Park", Inaccessible: true}
)

// liRun is a workspace with a unipile sender on the Unipile stand-in and
// the most common LinkedIn sequence: invite, wait for the acceptance,
// message, wait a day, message again.
type liRun struct {
	t      *testing.T
	e      *env
	fake   *unipiletest.Server
	p      apikit.Principal
	wsID   string
	sender *senders.Sender
	seq    string
}

const liAccount = "acc_li"

func newLIRun(t *testing.T, e *env, pollEvery time.Duration) *liRun {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	fake := unipiletest.New(t, e.clock, "unipile-test-key")
	fake.AddAccount(liAccount)
	for _, m := range []unipiletest.Member{liAnn, liBo, liCy} {
		fake.AddMember(m)
	}
	w, err := e.ws.ByName(ctx, "acme")
	is.NoErr(err)
	all := map[string][]string{}
	for _, d := range []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"} {
		all[d] = []string{"00:00-23:59"}
	}
	_, err = e.srv.senders.Apply(ctx, senders.Owner{WorkspaceID: w.ID, Timezone: w.Timezone}, []senders.Spec{
		{Name: "li", Channel: senders.LinkedIn, Transport: senders.TransportUnipile, Timezone: "UTC", Schedule: all,
			Unipile: &senders.Unipile{AccountID: liAccount, APIKeyEnv: "LEADLINE_TEST_LI_KEY", WebhookSecretEnv: "LEADLINE_TEST_LI_WEBHOOK", BaseURL: fake.URL},
			// Spacing off: a tick sends every due invitation (docs/GUARDS.md).
			GuardSettings: senders.GuardSettings{Spacing: &senders.Spacing{Min: "0s", Max: "0s"}}},
	})
	is.NoErr(err)
	_, err = e.srv.sequences.Apply(ctx, sequences.Owner{WorkspaceID: w.ID}, []sequences.Spec{
		{Name: "LinkedIn run", Senders: []string{"li"}, Steps: []sequences.Step{
			{ID: "invite", Type: "invite", Note: "Hi {{first_name|there}}, glad to connect."},
			{ID: "accepted", Type: "condition", If: "invite_accepted", WithinDays: 14, Then: "hello", Else: "end"},
			{ID: "hello", Type: "message", Body: "Thanks for connecting, {{first_name|there}}!"},
			{ID: "pause", Type: "wait", Days: 1},
			{ID: "again", Type: "message", Body: "One more idea for you."},
		}},
	})
	is.NoErr(err)
	q, err := e.srv.sequences.ByName(ctx, w.ID, "LinkedIn run")
	is.NoErr(err)
	is.NoErr(e.pl.Sequences.ActivateByName(ctx, w.ID, "LinkedIn run"))
	s, err := e.srv.senders.ByName(ctx, w.ID, "li")
	is.NoErr(err)
	ts := e.pl.Transports(platform.Outside{HTTPClient: fake.Client()})
	if pollEvery > 0 {
		// Polling so rare that only the webhook can tell.
		ts[senders.TransportUnipile] = unipile.New(unipile.Config{Clock: e.clock, Sink: e.pl.Inbound, PollEvery: pollEvery,
			Invitations: e.pl.Senders, HTTPClient: fake.Client()})
	}
	e.pl.UseTransports(ts)
	return &liRun{t: t, e: e, fake: fake, p: apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}, wsID: w.ID, sender: s, seq: q.ID}
}

// lead adds a lead known to leadline the way how says: by its profile URL,
// its public identifier or its provider id.
func (r *liRun) lead(m unipiletest.Member, how string) string {
	r.t.Helper()
	name := m.FirstName + " " + m.LastName
	in := leads.LeadInput{Name: &name}
	switch how {
	case "linkedin_url":
		u := "https://www.linkedin.com/in/" + m.PublicIdentifier + "/"
		in.LinkedInURL = &u
	case "public_identifier":
		in.PublicIdentifier = &m.PublicIdentifier
	case "provider_id":
		in.ProviderID = &m.ProviderID
	}
	l, err := r.e.pl.Leads.Upsert(context.Background(), r.p, in)
	if err != nil {
		r.t.Fatal(err)
	}
	return l.Lead.ID
}

func (r *liRun) tick() {
	r.t.Helper()
	if _, err := r.e.pl.Runner().Tick(context.Background()); err != nil {
		r.t.Fatal(err)
	}
}

// deliver posts a webhook event signed as Unipile signs it.
func (r *liRun) deliver(ev []byte) {
	r.t.Helper()
	got := r.e.call("POST", "/inbound/unipile", "", string(ev), unipile.SignatureHeader, unipile.Sign("li-webhook-secret", ev, r.e.clock.Now()))
	if got.Status != 200 || got.data()["queued"] != 1.0 {
		r.t.Fatalf("webhook: %d %s", got.Status, got.Raw)
	}
}

func (r *liRun) enrollment(leadID string) enrollments.Enrollment {
	r.t.Helper()
	en, err := r.e.pl.Enrollments.List(context.Background(), r.p, enrollments.Filter{LeadID: leadID, Limit: 10})
	if err != nil || len(en.Data) != 1 {
		r.t.Fatalf("enrollments of %s: %v %v", leadID, en, err)
	}
	return en.Data[0]
}

func (r *liRun) mine(m unipiletest.Member) []string {
	var out []string
	for _, msg := range r.fake.Messages(liAccount, m.ProviderID) {
		if msg.Mine {
			out = append(out, msg.Text)
		}
	}
	return out
}

// TestLinkedInRun runs invite → invite_accepted → message → wait →
// message on the Unipile stand-in for leads known by their profile URL
// only, their public identifier only or their provider id only, with the
// acceptance and the replies told by webhook, and again found by polling
// with no webhook at all: every lead gets past the acceptance, a reply
// stops its lead's sequence, and one member LinkedIn refuses fails alone
// while the sender stays healthy.
func TestLinkedInRun(t *testing.T) {
	t.Setenv("LEADLINE_TEST_LI_KEY", "unipile-test-key")
	t.Setenv("LEADLINE_TEST_LI_WEBHOOK", "li-webhook-secret")
	for _, how := range []string{"linkedin_url", "public_identifier", "provider_id"} {
		for _, via := range []string{"webhook", "polling"} {
			t.Run(how+"/"+via, func(t *testing.T) {
				eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
					linkedInRun(t, e, how, via)
				})
			})
		}
	}
}

func linkedInRun(t *testing.T, e *env, how, via string) {
	is := is.New(t)
	ctx := context.Background()
	pollEvery := time.Duration(0)
	if via == "webhook" {
		pollEvery = 1000 * time.Hour
	}
	r := newLIRun(t, e, pollEvery)
	ann, bo, cy := r.lead(liAnn, how), r.lead(liBo, how), r.lead(liCy, how)
	_, err := e.pl.Enrollments.Commit(ctx, r.p, enrollments.EnrollInput{SequenceID: r.seq, LeadIDs: []string{ann, bo, cy}, Confirm: true})
	is.NoErr(err)

	// The invitations go out; each lead keeps the member it was resolved
	// to, whatever it was known by. Cy's profile cannot be reached: her
	// step fails, and the sender goes on.
	r.tick()
	invs := r.fake.Invitations(liAccount)
	is.Equal(len(invs), 2)
	notes := []string{invs[0].Message, invs[1].Message}
	slices.Sort(notes)
	is.Equal(notes, []string{"Hi Ann, glad to connect.", "Hi Bo, glad to connect."})
	for id, m := range map[string]unipiletest.Member{ann: liAnn, bo: liBo} {
		l, err := e.pl.Leads.Get(ctx, r.p, id)
		is.NoErr(err)
		is.Equal(apikit.Deref(l.ProviderID), m.ProviderID)
		if how != "provider_id" {
			is.Equal(apikit.Deref(l.PublicIdentifier), m.PublicIdentifier)
		}
	}
	failed := r.enrollment(cy)
	is.Equal(failed.Status, enrollments.Failed)
	is.Equal(apikit.Deref(failed.LastErrorCode), unipile.CodeProfileInaccessible)
	health := func() senders.Health {
		s, err := e.srv.senders.ByName(ctx, r.wsID, "li")
		is.NoErr(err)
		return s.Health
	}
	is.Equal(health(), senders.Healthy)

	// Both accept an hour later; the event names the member by provider
	// id only.
	e.clock.Advance(time.Hour)
	for _, m := range []unipiletest.Member{liAnn, liBo} {
		ev := r.fake.Accept(liAccount, m.ProviderID, unipiletest.RelationAccept, false)
		if via == "webhook" {
			r.deliver(ev)
		}
	}
	if via == "polling" {
		// Relations listed without created_at: only the comparison of
		// pending invitations tells.
		r.fake.RelationTimes(false)
	}
	r.tick()
	e.clock.Advance(time.Minute)
	r.tick()
	is.Equal(r.mine(liAnn), []string{"Thanks for connecting, Ann!"})
	is.Equal(r.mine(liBo), []string{"Thanks for connecting, Bo!"})

	// Bo answers: his sequence stops before its second message.
	e.clock.Advance(time.Hour)
	ev := r.fake.Reply(liAccount, liBo.ProviderID, "Happy to talk, how about Thursday?")
	if via == "webhook" {
		r.deliver(ev)
	} else {
		e.clock.Advance(unipile.DefaultPollEvery)
	}
	r.tick()
	is.Equal(r.enrollment(bo).Status, enrollments.Replied)

	// A day later Ann gets the second message in the same conversation,
	// and her sequence ends; Bo gets nothing more.
	e.clock.Advance(25 * time.Hour)
	r.tick()
	is.Equal(r.mine(liAnn), []string{"Thanks for connecting, Ann!", "One more idea for you."})
	is.Equal(r.mine(liBo), []string{"Thanks for connecting, Bo!"})
	is.Equal(r.enrollment(ann).Status, enrollments.Finished)
	is.Equal(health(), senders.Healthy)

	// Bo's answer is in his thread, after leadline's message.
	page, err := e.pl.Inbox.List(ctx, r.p, inbox.Filter{LeadID: bo, Limit: 10})
	is.NoErr(err)
	is.Equal(len(page.Data), 1)
	th, err := e.pl.Inbox.Get(ctx, r.p, page.Data[0].ID)
	is.NoErr(err)
	is.Equal(len(th.Messages), 2)
	is.Equal(th.Messages[1].Direction, inbox.In)
	is.True(strings.Contains(th.Messages[1].Body, "Thursday"))
}

// TestLinkedInAccountTrouble: an answer about the account stops the
// sender, and the hourly check brings it back only when a read through
// the account's session works, so a recovery is not undone by the next
// action hour after hour; a rate limit pauses every lead's actions on the
// account until Unipile's hint, not only the one that met it.
func TestLinkedInAccountTrouble(t *testing.T) {
	t.Setenv("LEADLINE_TEST_LI_KEY", "unipile-test-key")
	t.Setenv("LEADLINE_TEST_LI_WEBHOOK", "li-webhook-secret")
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := context.Background()
		r := newLIRun(t, e, 0)
		sender := func() *senders.Sender {
			s, err := e.srv.senders.ByName(ctx, r.wsID, "li")
			is.NoErr(err)
			return s
		}
		sent := func() int { return len(r.fake.Invitations(liAccount)) }
		ann := r.lead(liAnn, "public_identifier")
		_, err := e.pl.Enrollments.Commit(ctx, r.p, enrollments.EnrollInput{SequenceID: r.seq, LeadIDs: []string{ann}, Confirm: true})
		is.NoErr(err)

		// LinkedIn ends the session: the sender is disconnected, with
		// the remedy, and Ann's invitation waits.
		r.fake.Fail("POST", "/"+liAccount+"/users/me/relation-requests", 1, 401, "provider/invalid_authorization", "The account must be reconnected.")
		r.tick()
		s := sender()
		is.Equal(s.Health, senders.Disconnected)
		is.Equal(s.HealthReasons[0].Code, senders.SignalAccountDisconnected)
		is.True(strings.Contains(s.HealthReasons[0].Message, "reconnect the account"))
		is.Equal(apikit.Deref(r.enrollment(ann).WaitingFor), senders.SignalAccountDisconnected)
		is.Equal(sent(), 0)

		// Unipile still lists the account running, but the session does
		// not work: the hourly check keeps the sender stopped, and
		// nothing is tried for Ann.
		r.fake.BreakSession(liAccount, true)
		e.clock.Advance(time.Hour)
		r.tick()
		is.Equal(sender().Health, senders.Disconnected)
		is.Equal(sent(), 0)

		// Reconnected: the next check finds the session working, and the
		// invitation goes out.
		r.fake.BreakSession(liAccount, false)
		e.clock.Advance(time.Hour)
		r.tick()
		r.tick()
		is.Equal(sender().Health, senders.Healthy)
		is.Equal(sent(), 1)

		// A rate limit with a 10-minute hint: Bo's invitation meets it,
		// and Di's, enrolled after, waits for the same hint without a
		// request of its own.
		di := unipiletest.Member{ProviderID: "ACoAADi0000000000000000000000000000004", PublicIdentifier: "di-rossi", FirstName: "Di", LastName: "Rossi"}
		r.fake.AddMember(di)
		bo := r.lead(liBo, "provider_id")
		_, err = e.pl.Enrollments.Commit(ctx, r.p, enrollments.EnrollInput{SequenceID: r.seq, LeadIDs: []string{bo}, Confirm: true})
		is.NoErr(err)
		r.fake.Fail("POST", "/"+liAccount+"/users/me/relation-requests", 1, 429, "api/too_many_requests", "Rate limit exceeded for this method.")
		r.tick()
		s = sender()
		until, limited := s.RateLimitedUntil(e.clock.Now())
		is.True(limited)
		is.Equal(until, e.clock.Now().Add(time.Hour)) // no retry-after header from the stand-in: an hour
		dl := r.lead(di, "linkedin_url")
		_, err = e.pl.Enrollments.Commit(ctx, r.p, enrollments.EnrollInput{SequenceID: r.seq, LeadIDs: []string{dl}, Confirm: true})
		is.NoErr(err)
		r.fake.Requests()
		r.tick()
		for _, req := range r.fake.Requests() {
			is.True(req.Method != "POST") // nothing is tried against the account
		}
		is.Equal(apikit.Deref(r.enrollment(dl).WaitingFor), senders.SignalProviderRateLimited)
		is.Equal(sent(), 1)
		e.clock.Advance(time.Hour + time.Minute)
		r.tick()
		is.Equal(sent(), 3)
	})
}
