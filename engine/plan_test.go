package engine_test

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
)

// TestEngineQueriesUseIndexes explains every query that preview, commit,
// the runner, its checks and the engine's read routes send, on both
// engines, and fails when one scans an engine table. The runner's queries
// run in write transactions, and why-not-sending must stay fast at 100,000
// enrollments. It does not run in parallel with the others: a group
// transaction is held for at most 20 ms of wall time (Runner.GroupHold),
// and on a busy machine its enrollments would not share one.
func TestEngineQueriesUseIndexes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		e := newEngine(t, d, "", "Berlin CTOs", "Plain", "anna", "mail")
		ctx := context.Background()
		e.activate("Berlin CTOs")
		var ids []string
		for i := range 12 {
			ids = append(ids, e.lead(fmt.Sprintf("Lead %d", i), nil))
		}
		must := func(_ any, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		rec := dbtest.Record(d)
		queries := rec.During(func() {
			must(e.svc.Preview(ctx, e.p, enrollments.EnrollInput{SequenceID: e.ids["Berlin CTOs"], LeadIDs: ids}))
			must(e.svc.Commit(ctx, e.p, enrollments.EnrollInput{SequenceID: e.ids["Berlin CTOs"], LeadIDs: ids, Confirm: true}))
			e.runUntil(monday.Add(6 * time.Hour))
			e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["anna"], LeadID: ids[0], At: e.clock.Now(), ProviderMessageID: "p-1", Body: "Sounds good, Thursday?"})
			// A mailbox's report names no lead: it is matched by the message
			// it answers, then by who wrote.
			e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["anna"], At: e.clock.Now(), ProviderMessageID: "p-2", Body: "Who is this?",
				Match: &senders.Match{MessageIDs: []string{"<nope@leadline.test>"}, Email: "nobody@example.test", ProviderID: "ACo-nobody",
					PublicIdentifier: "nobody-here", Invitation: "inv-nobody", Conversation: "chat-nobody"}})
			// A LinkedIn lead keeps the member an action resolved; polling
			// reads a sender's pending invitations.
			if _, err := e.leads.SetMember(ctx, e.p.WorkspaceID, ids[2], &senders.Member{ProviderID: "ACo-lead-2", PublicIdentifier: "lead-two"}); err != nil {
				t.Fatal(err)
			}
			must(e.senders.PendingInvitations(ctx, e.ids["anna"], 1000))
			// The hourly checks read every sender's stale invitations and
			// the day's withdrawals, many senders to a statement.
			anna, err := e.senders.ByID(ctx, e.p.WorkspaceID, e.ids["anna"])
			must(anna, err)
			must(e.senders.StaleInvitations(ctx, []*senders.Sender{anna}, e.clock.Now().AddDate(0, 0, 30)))
			// The lead books a meeting: the booking finds the lead's thread
			// with the sender.
			lead, sender := ids[0], e.ids["anna"]
			e.net.DeliverBooking(bookings.Booking{LeadID: &lead, SenderID: &sender, CreatedAt: e.clock.Now().Add(time.Hour),
				BookingID: "b-1", StartsAt: e.clock.Now().Add(72 * time.Hour)})
			e.runUntil(monday.Add(30 * time.Hour))
			must(e.svc.WhyNotSending(ctx, e.p, e.ids["Berlin CTOs"]))
			one, err := e.svc.Stats(ctx, e.p, e.ids["Berlin CTOs"])
			must(one, err)
			// A list page's numbers, in a few statements for them all, are
			// each sequence's.
			list, err := e.pl.Sequences.List(ctx, e.p, sequences.Filter{Limit: 50})
			must(list, err)
			var qs []sequences.Sequence
			for _, v := range list.Data {
				qs = append(qs, v.Sequence)
			}
			all, err := e.svc.StatsOf(ctx, e.p, qs)
			must(all, err)
			if len(qs) < 2 || !reflect.DeepEqual(all[e.ids["Berlin CTOs"]], one) {
				t.Fatalf("StatsOf of %d sequences: %+v, Stats: %+v", len(qs), all[e.ids["Berlin CTOs"]], one)
			}
			must(e.svc.FailedPage(ctx, e.p, e.ids["Berlin CTOs"], 50, 0))
			s, err := e.senders.Visible(ctx, e.p, e.ids["anna"])
			must(s, err)
			must(e.svc.Capacity(ctx, e.p, s))
			for _, f := range []enrollments.Filter{{}, {SequenceID: e.ids["Berlin CTOs"]}, {LeadID: ids[0]}, {SenderID: e.ids["mail"]}, {Status: enrollments.Active}} {
				f.Limit = 50
				must(e.svc.List(ctx, e.p, f))
			}
			must(e.leads.Get(ctx, e.p, ids[0]))
			must(e.svc.Recover(ctx, e.p, enrollments.RecoverInput{SequenceID: e.ids["Berlin CTOs"]}))
			must(nil, e.svc.SetupChanged(ctx, e.p.WorkspaceID))
			must(e.svc.Pause(ctx, apikit.Principal{WorkspaceID: e.p.WorkspaceID}, e.enrollment(ids[1]).ID))
			soon := monday.Add(48 * time.Hour)
			for _, f := range []tasks.Filter{{}, {Status: tasks.Open}, {SequenceID: e.ids["Berlin CTOs"]}, {LeadID: ids[0]},
				{ClientID: e.ids["Globex"]}, {Status: tasks.Open, DueBefore: &soon}} {
				f.Limit = 50
				must(e.pl.Tasks.List(ctx, e.p, f))
			}
			must(e.pl.Tasks.List(ctx, apikit.Principal{WorkspaceID: e.p.WorkspaceID, ClientIDs: []string{e.ids["Globex"]}}, tasks.Filter{Status: tasks.Open, Limit: 50}))
			since := monday
			yes := true
			for _, f := range []inbox.Filter{{}, {Intent: inbox.Interested}, {AssigneeID: "none"}, {AssigneeID: ids[0]}, {SenderID: e.ids["anna"]},
				{SequenceID: e.ids["Berlin CTOs"]}, {ClientID: e.ids["Globex"]}, {LeadID: ids[0]}, {Unread: &yes}, {UpdatedSince: &since},
				{Intent: inbox.Interested, Unread: &yes}, {NeedsReview: &yes}} {
				f.Limit = 50
				must(e.pl.Inbox.List(ctx, e.p, f))
			}
			must(e.pl.Inbox.List(ctx, apikit.Principal{WorkspaceID: e.p.WorkspaceID, ClientIDs: []string{e.ids["Globex"]}}, inbox.Filter{Intent: inbox.Interested, Limit: 50}))
			page, err := e.pl.Inbox.List(ctx, e.p, inbox.Filter{LeadID: ids[0], Limit: 1})
			must(page, err)
			if len(page.Data) == 0 {
				t.Fatal("no thread for the reply")
			}
			must(e.pl.Inbox.Get(ctx, e.p, page.Data[0].ID))
			must(e.pl.Inbox.SetIntent(ctx, e.p, page.Data[0].ID, inbox.NotNow))
			must(e.pl.Inbox.MarkRead(ctx, e.p, page.Data[0].ID))
		})
		booked, err := d.NewSelect().Table("events").Where("kind = 'meeting.booked'").Count(ctx)
		if err != nil || booked != 1 {
			t.Fatalf("%d meetings booked (%v)", booked, err)
		}
		if len(queries) < 50 {
			t.Fatalf("only %d queries recorded", len(queries))
		}
		// senders is left out: the hourly checks read every sender by design.
		tables := []string{"enrollments", "actions", "invitations", "sender_usage", "step_stats", "sequences", "tasks", "threads", "messages", "report_threads", "enrichment_requests"}
		if d.Engine == db.Postgres {
			// The hourly compaction of the counters' shards reads
			// report_daily there; on both engines the counters are
			// written before the commit by an INSERT whose conflict
			// target is the primary key.
			tables = append(tables, "report_daily")
		}
		for _, table := range tables {
			dbtest.AssertNoScan(t, d, table, "", queries)
		}
		// The outcomes a group transaction writes together, in one UPDATE
		// from a list of values, find their actions by id.
		together := 0
		for _, q := range queries {
			if strings.HasPrefix(q, "UPDATE actions SET status = v.column2") && strings.Count(q, "), (") > 0 {
				together++
			}
		}
		if together == 0 {
			t.Error("no outcomes written together")
		}
		// The tick's prepared reads by key (a workspace, its blacklist) and
		// by a list of ids (a group's enrollments, the tick's senders) were
		// recorded and find their rows by key.
		for _, table := range []string{"workspaces", "blacklist"} {
			dbtest.AssertNoScan(t, d, table, "", queries)
		}
		listed := 0
		for _, q := range queries {
			if strings.Contains(q, `WHERE (e.id IN (`) || strings.Contains(q, `WHERE (s.id IN (`) {
				listed++
			}
		}
		if listed == 0 {
			t.Error("no prepared read by a list of ids recorded")
		}
		// The leads a group of enrollments reads at once are looked up by
		// id, not found among the workspace's.
		dbtest.AssertNoScan(t, d, "leads", "leads_ws", queries)
		if d.Engine == db.SQLite {
			// A query about some leads' enrollments searches by the leads,
			// not through all of a sequence's enrollments (SQLite has no
			// statistics to tell the two apart; Postgres plans by them).
			byLeads := regexp.MustCompile(`\be\.lead_id IN \(`)
			n := 0
			for _, q := range queries {
				if !byLeads.MatchString(q) {
					continue
				}
				n++
				plan := strings.Join(dbtest.Plan(t, d, q), "\n")
				if !regexp.MustCompile(`(?m)^SEARCH e USING .*\blead_id=\?`).MatchString(plan) {
					t.Errorf("not searched by lead:\n%s\n%s", q, plan)
				}
			}
			if n == 0 {
				t.Error("no query by leads recorded")
			}
		}
	})
}

// TestSequenceStatsReadIndexesOnly: a list page's sequence numbers are two
// statements for all its sequences, whose plans read indexes only on both
// engines (the step counters aside, a few rows per step), and count what
// Stats always counted.
func TestSequenceStatsReadIndexesOnly(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "", "Berlin CTOs", "Plain", "mail")
		ctx := context.Background()
		ann, bob, cid := e.lead("Ann Lee", nil), e.lead("Bob Roe", nil), e.lead("Cid Poe", nil)
		e.net.Script(ann, sandbox.Outcome{Accept: true, AcceptAfter: 3 * time.Hour})
		e.activate("Berlin CTOs")
		e.activate("Plain")
		e.enrol("Berlin CTOs", ann, bob)
		e.enrol("Plain", cid)
		e.runUntil(monday.Add(24 * time.Hour))
		list, err := e.pl.Sequences.List(ctx, e.p, sequences.Filter{Limit: 50})
		is.NoErr(err)
		var qs []sequences.Sequence
		for _, v := range list.Data {
			qs = append(qs, v.Sequence)
		}
		var all map[string]*enrollments.SequenceStats
		queries := dbtest.Record(d).During(func() {
			all, err = e.svc.StatsOf(ctx, e.p, qs)
			is.NoErr(err)
		})
		is.Equal(len(all), len(qs))
		is.True(len(queries) <= 2) // whatever the number of sequences

		// Ann accepted the invitation and was thanked; Bob's is pending at
		// the condition; Cid's profile was viewed.
		crm := all[e.ids["Berlin CTOs"]]
		is.Equal([]int{crm.InvitesSent, crm.InvitesAccepted, crm.Contacted, crm.Statuses["finished"], crm.Statuses["active"]}, []int{2, 1, 2, 1, 1})
		is.Equal(*crm.AcceptanceRate, 0.5)
		waiting := map[string]int{}
		for _, s := range crm.Steps {
			waiting[s.StepID] = s.Waiting
		}
		is.Equal(waiting, map[string]int{"visit": 0, "invite": 0, "accepted": 1, "hello": 0, "gap": 0, "mail": 0})
		is.Equal(crm.Steps[0].Entered, 2)
		plain := all[e.ids["Plain"]]
		is.Equal([]int{plain.InvitesSent, plain.Contacted, plain.Statuses["finished"]}, []int{0, 1, 1})
		is.Equal(plain.AcceptanceRate, nil)
		for _, q := range qs {
			one, err := e.svc.Stats(ctx, e.p, q.ID)
			is.NoErr(err)
			is.Equal(one, all[q.ID])
		}

		// The enrolments and the actions are read from indexes alone (on
		// Postgres that needs the visibility map autovacuum keeps); an
		// invitation is looked up by its sender and lead, one row per
		// invitation sent.
		if d.Engine == db.Postgres {
			_, err := d.ExecContext(ctx, "VACUUM (ANALYZE) enrollments, actions, invitations, step_stats")
			is.NoErr(err)
		}
		sqliteRead := regexp.MustCompile(`^(SEARCH|SCAN) (e|a)\b`)
		pgRead := regexp.MustCompile(`(Scan|Scan using \S+) on (enrollments|actions)\b`)
		for _, q := range queries {
			plan := dbtest.Plan(t, d, q)
			read := 0
			for _, line := range plan {
				switch {
				case d.Engine == db.SQLite && sqliteRead.MatchString(line):
					read++
					if !strings.Contains(line, "USING COVERING INDEX") {
						t.Errorf("sqlite reads a table:\n  %s\nplan:\n  %s", q, strings.Join(plan, "\n  "))
					}
				case d.Engine == db.Postgres && pgRead.MatchString(line):
					read++
					if !strings.Contains(line, "Index Only Scan") {
						t.Errorf("postgres reads a table:\n  %s\nplan:\n  %s", q, strings.Join(plan, "\n  "))
					}
				}
			}
			if read == 0 {
				t.Errorf("%s: no read of enrollments or actions in\n  %s\nplan:\n  %s", d.Engine, q, strings.Join(plan, "\n  "))
			}
		}
		dbtest.AssertNoScan(t, d, "invitations", "", queries)
	})
}
