package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
)

// monday is 2 November 2026, 10:00 UTC (11:00 in Berlin).
var monday = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

func sender() senders.Sender {
	return senders.Sender{ID: "s1", Name: "anna", Channel: senders.LinkedIn, Timezone: "Europe/Berlin",
		Schedule: senders.DefaultSchedule(), Caps: senders.Caps{"invite": 2, "invite_week": 3, "message": 5},
		// Spacing off: TestAuditCatchesGuards judges it.
		Guards: senders.GuardSettings{Spacing: &senders.Spacing{Min: "0s", Max: "0s"}}}
}

// TestAuditCatchesGuards: the network judges the guards too: spacing
// between two actions of a sender, the hourly cap of a mailbox, and days
// off.
func TestAuditCatchesGuards(t *testing.T) {
	is := is.New(t)
	clock := apikit.NewFakeClock(monday)
	n := sandbox.New(1, clock, sandbox.Rates{})
	s := sender()
	s.Guards = senders.GuardSettings{Holidays: &senders.Holidays{Country: "DE", Dates: []string{"2026-11-03"}}} // default spacing 45s-3m
	n.Register(s)
	is.NoErr(invite(n, &s, "k1", "a"))
	clock.Advance(45 * time.Second)
	is.NoErr(invite(n, &s, "k2", "b")) // exactly the minimum: fine
	clock.Advance(44 * time.Second)
	_, err := n.Perform(context.Background(), senders.Request{Key: "k3", Sender: &s, Action: senders.Message, Lead: senders.Recipient{LeadID: "c"}})
	is.NoErr(err)
	is.Equal(rules(n), map[string]int{"spacing": 1})

	clock.Set(monday.Add(24 * time.Hour)) // the sender's own day off
	_, err = n.Perform(context.Background(), senders.Request{Key: "k4", Sender: &s, Action: senders.Message, Lead: senders.Recipient{LeadID: "d"}})
	is.NoErr(err)
	is.Equal(rules(n)["holiday"], 1)

	mail := senders.Sender{ID: "m1", Name: "mail", Channel: senders.Email, Timezone: "Europe/Berlin", Schedule: senders.DefaultSchedule(),
		Caps: senders.Caps{"email": 50}, Guards: senders.GuardSettings{Spacing: &senders.Spacing{Min: "0s", Max: "0s"}, HourlyCap: ptr(2)}}
	n.Register(mail)
	clock.Set(monday.Add(48 * time.Hour))
	for i := range 3 {
		_, err := n.Perform(context.Background(), senders.Request{Key: fmt.Sprintf("e%d", i), Sender: &mail, Action: senders.SendEmail,
			Lead: senders.Recipient{LeadID: fmt.Sprintf("l%d", i)}})
		is.NoErr(err)
	}
	is.Equal(rules(n)["hourly_cap"], 1)
}

func ptr[T any](v T) *T { return &v }

func invite(n *sandbox.Network, s *senders.Sender, key, lead string) error {
	_, err := n.Perform(context.Background(), senders.Request{Key: key, Sender: s, Action: senders.Invite, Lead: senders.Recipient{LeadID: lead}})
	return err
}

func rules(n *sandbox.Network) map[string]int {
	out := map[string]int{}
	for _, v := range n.Violations() {
		out[v.Rule]++
	}
	return out
}

// TestAuditCatchesEveryRule feeds the network actions that break each rule
// it judges, so that a run's "0 violations" means something.
func TestAuditCatchesEveryRule(t *testing.T) {
	is := is.New(t)
	clock := apikit.NewFakeClock(monday)
	n := sandbox.New(1, clock, sandbox.Rates{})
	s := sender()
	n.Register(s)
	is.NoErr(invite(n, &s, "k1", "a"))
	is.NoErr(invite(n, &s, "k1", "a")) // the same key: performed once
	is.Equal(len(n.Performed()), 1)
	is.Equal(len(n.Violations()), 0)
	is.NoErr(invite(n, &s, "k2", "b"))
	is.NoErr(invite(n, &s, "k3", "c")) // a third invitation today: over the cap of 2
	is.Equal(rules(n), map[string]int{"cap": 1})

	clock.Set(monday.Add(24 * time.Hour))
	is.NoErr(invite(n, &s, "k4", "d")) // the fourth in 7 days: over invite_week 3
	is.Equal(rules(n)["weekly_invite_cap"], 1)

	clock.Set(time.Date(2026, 11, 7, 10, 0, 0, 0, time.UTC)) // Saturday
	_, err := n.Perform(context.Background(), senders.Request{Key: "k5", Sender: &s, Action: senders.Message, Lead: senders.Recipient{LeadID: "e"}})
	is.NoErr(err)
	is.Equal(rules(n)["schedule"], 1)

	clock.Set(time.Date(2026, 11, 9, 10, 0, 0, 0, time.UTC)) // Monday again
	n.MarkDoNotContact("f", clock.Now().Add(-time.Minute))
	n.MarkBlacklisted("g")
	n.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: "s1", LeadID: "h", At: clock.Now()})
	_, err = n.Inbound(context.Background(), clock.Now())
	is.NoErr(err)
	clock.Advance(time.Minute)
	for key, lead := range map[string]string{"k6": "f", "k7": "g", "k8": "h"} {
		_, err := n.Perform(context.Background(), senders.Request{Key: key, Sender: &s, Action: senders.Message, Lead: senders.Recipient{LeadID: lead}})
		is.NoErr(err)
	}
	got := rules(n)
	is.Equal(got["do_not_contact"], 1)
	is.Equal(got["blacklist"], 1)
	is.Equal(got["reply_stop"], 1)

	// A warming-up sender: one invitation on its first day.
	warm := sender()
	warm.ID, warm.Warmup = "s3", &senders.Warmup{Start: "2026-11-09", From: 1, Step: 1}
	n.Register(warm)
	is.NoErr(invite(n, &warm, "w1", "i"))
	is.NoErr(invite(n, &warm, "w2", "j"))
	is.Equal(rules(n)["warmup"], 1)

	// Past LinkedIn's own limits the account is restricted.
	big := sender()
	big.ID, big.Caps = "s2", senders.Caps{"invite": 100}
	var restricted error
	for i := range 151 {
		if err := invite(n, &big, fmt.Sprintf("r%d", i), fmt.Sprintf("lead%d", i)); err != nil {
			restricted = err
		}
	}
	te, ok := senders.AsTransportError(restricted)
	is.True(ok)
	is.Equal(te.Signal, senders.SignalRestricted)
}

// TestOutcomesAreDeterministic: the same seed and keys give the same
// acceptances and replies whatever the order of the calls.
func TestOutcomesAreDeterministic(t *testing.T) {
	is := is.New(t)
	run := func(order []int) []senders.Inbound {
		clock := apikit.NewFakeClock(monday)
		n := sandbox.New(42, clock, sandbox.DefaultRates)
		s := sender()
		s.Caps = senders.Caps{"invite": 100, "invite_week": 200, "message": 150}
		for _, i := range order {
			_, err := n.Perform(context.Background(), senders.Request{Key: fmt.Sprintf("k%d", i), Sender: &s, Action: senders.Message,
				Lead: senders.Recipient{LeadID: fmt.Sprintf("lead%d", i)}})
			is.NoErr(err)
		}
		in, err := n.Inbound(context.Background(), monday.Add(10*24*time.Hour))
		is.NoErr(err)
		for i := range in {
			in[i].ProviderMessageID = "" // numbered in call order
		}
		return in
	}
	var fwd, back []int
	for i := range 200 {
		fwd = append(fwd, i)
		back = append([]int{i}, back...)
	}
	a, b := run(fwd), run(back)
	is.True(len(a) > 10) // about 18% answer
	is.Equal(len(a), len(b))
	seen := map[string]time.Time{}
	for _, x := range a {
		seen[x.LeadID+x.Kind] = x.At
	}
	for _, x := range b {
		is.True(seen[x.LeadID+x.Kind].Equal(x.At))
	}
}

// TestOutcomesFollowThePerson: outcomes are drawn per person, not per
// idempotency key, whose ids differ in every run: the same people under
// other keys get the same replies at the same times.
func TestOutcomesFollowThePerson(t *testing.T) {
	is := is.New(t)
	run := func(prefix string) []senders.Inbound {
		clock := apikit.NewFakeClock(monday)
		n := sandbox.New(42, clock, sandbox.DefaultRates)
		s := sender()
		s.Caps = senders.Caps{"message": 150}
		for i := range 200 {
			_, err := n.Perform(context.Background(), senders.Request{Key: fmt.Sprintf("%s-%d", prefix, i), Sender: &s, Action: senders.Message,
				Lead: senders.Recipient{LeadID: fmt.Sprintf("%s-lead-%d", prefix, i), Name: fmt.Sprintf("Person %d", i), PublicIdentifier: fmt.Sprintf("person-%d", i)}})
			is.NoErr(err)
		}
		in, err := n.Inbound(context.Background(), monday.Add(10*24*time.Hour))
		is.NoErr(err)
		for i := range in {
			in[i].LeadID = strings.TrimPrefix(in[i].LeadID, prefix)
		}
		return in
	}
	a, b := run("first"), run("second")
	is.True(len(a) > 10)
	is.Equal(a, b)
}

// TestOutcomesArriveAtTheSync: with a sync interval, what the outside
// world does after an action reaches leadline at the first sync after it
// happened, never before it happened.
func TestOutcomesArriveAtTheSync(t *testing.T) {
	is := is.New(t)
	clock := apikit.NewFakeClock(monday.Add(3*time.Minute + 7*time.Second))
	n := sandbox.New(1, clock, sandbox.Rates{Accept: 1, Sync: 10 * time.Minute})
	s := sender()
	s.Caps = senders.Caps{"invite": 100, "invite_week": 200}
	n.Register(s)
	for i := range 20 {
		is.NoErr(invite(n, &s, fmt.Sprint("k", i), fmt.Sprint("lead-", i)))
	}
	at, ok := n.NextInbound()
	is.True(ok)
	in, err := n.Inbound(context.Background(), clock.Now().Add(5*24*time.Hour))
	is.NoErr(err)
	is.Equal(len(in), 20) // every invitation accepted
	is.True(in[0].At.Equal(at))
	for _, x := range in {
		is.True(x.At.Equal(x.At.Truncate(10 * time.Minute))) // on a sync
		is.True(x.At.Sub(clock.Now()) >= 2*time.Hour)        // after the drawn delay
	}
}

// TestOnlyEmailRepliesHaveASubject: answers to LinkedIn messages and
// InMails, drawn or scripted, replies or out-of-office notes, carry no
// subject; an email's answer carries "Re: " and its subject.
func TestOnlyEmailRepliesHaveASubject(t *testing.T) {
	is := is.New(t)
	clock := apikit.NewFakeClock(monday)
	n := sandbox.New(1, clock, sandbox.Rates{Reply: 1, AutoReply: 0.5})
	li, mail := sender(), senders.Sender{ID: "s2", Name: "mail", Channel: senders.Email, Timezone: "Europe/Berlin", Schedule: senders.DefaultSchedule(),
		Caps: senders.Caps{"email": 100}}
	n.Register(li)
	n.Register(mail)
	n.Script("scripted", sandbox.Outcome{Reply: "Sure, let's talk.", ReplyAfter: time.Hour})
	perform := func(s *senders.Sender, action senders.Action, key, lead, subject string) {
		t.Helper()
		_, err := n.Perform(context.Background(), senders.Request{Key: key, Sender: s, Action: action, Lead: senders.Recipient{LeadID: lead}, Subject: subject, Body: "Hi"})
		is.NoErr(err)
	}
	for i := range 4 {
		perform(&li, senders.Message, fmt.Sprintf("m%d", i), fmt.Sprintf("li-%d", i), "")
		perform(&li, senders.InMail, fmt.Sprintf("i%d", i), fmt.Sprintf("inmail-%d", i), "A question")
		perform(&mail, senders.SendEmail, fmt.Sprintf("e%d", i), fmt.Sprintf("mail-%d", i), "Hello")
	}
	perform(&li, senders.Message, "scripted", "scripted", "")
	in, err := n.Inbound(context.Background(), monday.Add(10*24*time.Hour))
	is.NoErr(err)
	var linkedin, email int
	for _, r := range in {
		if r.Kind != senders.InboundReply {
			continue
		}
		if strings.HasPrefix(r.LeadID, "mail-") {
			email++
			is.True(strings.HasSuffix(r.Subject, "Hello") && len(r.Subject) > len("Hello"))
			continue
		}
		linkedin++
		is.Equal(r.Subject, "")
	}
	is.Equal(linkedin, 9)
	is.Equal(email, 4)
}

// TestSharedNetwork: two processes on one database see one network: an
// action performed by one is performed for the other, what it causes is
// handed over once, to whichever asks first, and so are meetings booked.
func TestSharedNetwork(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock := apikit.NewFakeClock(monday)
		api, worker := sandbox.New(7, clock, sandbox.Rates{}).Shared(d), sandbox.New(7, clock, sandbox.Rates{}).Shared(d)
		s := sender()
		api.Register(s)
		worker.Register(s)
		api.Script("ann", sandbox.Outcome{Reply: "Sure, let's talk.", ReplyAfter: time.Hour})
		req := senders.Request{Key: "reply:1", Sender: &s, Action: senders.Message, Lead: senders.Recipient{LeadID: "ann"}, Body: "Hi"}
		first, err := api.Perform(ctx, req)
		is.NoErr(err)
		again, err := worker.Perform(ctx, req) // the same key from the other process
		is.NoErr(err)
		is.Equal(again, first)
		is.Equal(len(worker.Performed()), 0) // performed once, by the first
		got, found, err := worker.Lookup(ctx, req)
		is.NoErr(err)
		is.True(found)
		is.Equal(got, first)

		at, ok := worker.NextInbound()
		is.True(ok)
		is.True(at.Equal(monday.Add(time.Hour)))
		in, err := worker.Inbound(ctx, monday.Add(2*time.Hour))
		is.NoErr(err)
		is.Equal(len(in), 1)
		is.Equal(in[0].Body, "Sure, let's talk.")
		in, err = api.Inbound(ctx, monday.Add(2*time.Hour))
		is.NoErr(err)
		is.Equal(len(in), 0) // handed over once

		lead := "ann"
		api.DeliverBooking(bookings.Booking{BookingID: "b1", LeadID: &lead, CreatedAt: monday.Add(3 * time.Hour)})
		bs, err := worker.Bookings(ctx, monday.Add(time.Hour))
		is.NoErr(err)
		is.Equal(len(bs), 0) // not due yet
		bs, err = worker.Bookings(ctx, monday.Add(4*time.Hour))
		is.NoErr(err)
		is.Equal(len(bs), 1)
		is.Equal(bs[0].BookingID, "b1")
		_, ok = api.NextInbound()
		is.True(!ok) // nothing left
	})
}
