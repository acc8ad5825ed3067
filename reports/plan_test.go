package reports_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/reports"
)

// TestReportPlans explains every query the reports run: none scans a
// rollup table, none walks a workspace's rows without a day range, and a
// sequence's or a sender's report reads its own index.
func TestReportPlans(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		p, log, svc, clock := berlin(t, d, time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
		rec := dbtest.Record(d)
		seq, snd, client := apikit.NewID(), apikit.NewID(), apikit.NewID()
		write := rec.During(func() {
			if err := d.InTx(ctx, func(ctx context.Context) error {
				return log.EmitMany(ctx, []events.Event{
					{WorkspaceID: p.WorkspaceID, SequenceID: seq, SenderID: snd, ClientID: client, LeadID: apikit.NewID(), StepID: "hi",
						Kind: "action.sent", Data: map[string]any{"action": "email", "first_contact": true}},
					{WorkspaceID: p.WorkspaceID, SequenceID: seq, SenderID: snd, ClientID: client, LeadID: apikit.NewID(),
						Kind: "message.classified", Data: map[string]any{"thread_id": apikit.NewID(), "message_id": apikit.NewID(), "intent": "interested"}},
				})
			}); err != nil {
				t.Fatal(err)
			}
		})
		clock.Advance(time.Hour)
		var reads []string
		// A sequence and a sender the key may see: rows of their own.
		_, err := d.NewInsert().Model(&map[string]any{"id": client, "workspace_id": p.WorkspaceID, "name": "Globex", "created_at": clock.Now()}).
			TableExpr("clients").Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, prm := range []reports.Params{{}, {ClientID: client}, {Interval: "week"}, {Channel: "email"}} {
			reads = append(reads, rec.During(func() {
				if _, err := svc.Overview(ctx, p, prm); err != nil {
					t.Fatal(err)
				}
				if _, err := svc.ReplyThreads(ctx, p, prm, 50, 0); err != nil {
					t.Fatal(err)
				}
				// The lists per sequence and per sender read the sequence
				// and sender grains, and the client list the client grain.
				for _, kind := range []string{reports.Clients, reports.Sequences, reports.Senders} {
					if _, err := svc.List(ctx, p, kind, prm, reports.ListParams{}); err != nil {
						t.Fatal(err)
					}
				}
			})...)
		}
		reads = append(reads, rec.During(func() {
			if _, err := svc.Subject(ctx, p, reports.Clients, client, reports.Params{}); err != nil {
				t.Fatal(err)
			}
		})...)
		for _, q := range write {
			if strings.Contains(q, "report_threads") && strings.HasPrefix(q, "SELECT") {
				reads = append(reads, q)
			}
		}
		dbtest.AssertNoScan(t, d, "report_daily", "", reads)
		dbtest.AssertNoScan(t, d, "report_threads", "", reads)
		dbtest.AssertNoScan(t, d, "senders", "", reads) // costs and the channel filter read a workspace's senders by index
		// Every read of report_daily is bounded by days (or a sequence or
		// a sender), never a whole workspace.
		bounded := regexp.MustCompile(`day >= |sequence_id = |sender_id IN`)
		grains := map[string]bool{}
		grain := regexp.MustCompile(`grain = '([\w@]+)'`)
		for _, q := range reads {
			if strings.Contains(q, "FROM \"report_daily\"") && !bounded.MatchString(q) {
				t.Errorf("unbounded read of report_daily: %s", q)
			}
			for _, m := range grain.FindAllStringSubmatch(q, -1) {
				grains[m[1]] = true
			}
		}
		// The periods hold whole weeks: the lists and the weekly overview
		// read those from the week rows.
		for _, g := range []string{"client", "sequence", "sender", "client@week", "sequence@week", "sender@week"} {
			if !grains[g] {
				t.Errorf("no report read the %s grain: %v", g, grains)
			}
		}
	})
}

// TestSubjectReportPlans checks that a sequence's and a sender's numbers
// are read through their indexes, not through the workspace's days (on
// SQLite the queries name the index).
func TestSubjectReportPlans(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		indexed := func(q, index string) string {
			if d.Engine != db.SQLite {
				return q
			}
			for _, t := range []string{"report_daily", "report_threads"} {
				q = strings.Replace(q, "FROM "+t+" ", "FROM "+t+" INDEXED BY "+index+" ", 1)
			}
			return q
		}
		for _, c := range []struct{ index, query string }{
			{"report_daily_sequence", "SELECT day, metric, SUM(value) FROM report_daily WHERE workspace_id = 'w' AND grain = 'subject' AND day >= '2026-01-01' AND day <= '2026-03-31' AND sequence_id = 'q' GROUP BY day, metric"},
			{"report_daily_sender", "SELECT day, metric, SUM(value) FROM report_daily WHERE workspace_id = 'w' AND grain = 'subject' AND day >= '2026-01-01' AND day <= '2026-03-31' AND sender_id IN ('s') GROUP BY day, metric"},
			{"report_daily_sequence", "SELECT metric, SUM(value) FROM report_daily WHERE workspace_id = 'w' AND grain = 'subject' AND sequence_id = 'q' AND day >= '2026-01-01' AND day <= '2026-03-31' AND metric LIKE 'step:%' GROUP BY metric"},
			// A sequence's report without a sender filter reads the sequence
			// grain; a sender's without a sequence filter, the sender grain.
			{"report_daily_sequence", "SELECT day, metric, SUM(value) FROM report_daily WHERE workspace_id = 'w' AND grain = 'sequence' AND day >= '2026-01-01' AND day <= '2026-03-31' AND sequence_id = 'q' GROUP BY day, metric"},
			{"report_daily_sender", "SELECT day, metric, SUM(value) FROM report_daily WHERE workspace_id = 'w' AND grain = 'sender' AND day >= '2026-01-01' AND day <= '2026-03-31' AND sender_id IN ('s') GROUP BY day, metric"},
			{"report_threads_sequence", "SELECT day, time_to_reply FROM report_threads WHERE workspace_id = 'w' AND day >= '2026-01-01' AND day <= '2026-03-31' AND sequence_id = 'q' AND time_to_reply IS NOT NULL"},
			{"report_threads_sender", "SELECT day, time_to_reply FROM report_threads WHERE workspace_id = 'w' AND day >= '2026-01-01' AND day <= '2026-03-31' AND sender_id IN ('s') AND time_to_reply IS NOT NULL"},
		} {
			q := indexed(c.query, c.index)
			plan := strings.Join(dbtest.Plan(t, d, q), "\n")
			want := c.index
			if d.Engine == db.Postgres {
				want = "Index" // Postgres picks among the indexes by statistics, which an empty table lacks
			}
			if !strings.Contains(plan, want) || strings.Contains(plan, "Seq Scan") {
				t.Errorf("%s: %s does not read %s:\n%s", d.Engine, c.query, c.index, plan)
			}
		}
	})
}
