package reports_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/reports"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/simulate"
	"github.com/leadline/leadline/workspace"
)

// TestSimulatedMonth runs the sample setup for a month (across the change
// to summer time), then checks that rebuilding the rollups from the log
// gives the live rows, and that every metric of the reports equals an
// independent count of the exported activity log: for the workspace, for
// each client and for each sequence.
func TestSimulatedMonth(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		t.Parallel() // the engines side by side
		is := is.New(t)
		ctx := context.Background()
		f, err := setup.ReadFile("../examples/setup.yaml")
		is.NoErr(err)
		// 200 leads give every kind of event the reports count (400 gave
		// the same kinds, twice as many, in twice the time).
		_, err = simulate.Run(ctx, simulate.Config{DB: d, Setup: f, Days: 30, Seed: 11, Leads: 200, Start: "2026-03-02", Rates: sandbox.DefaultRates})
		is.NoErr(err)
		w, err := workspace.NewService(d, apikit.SystemClock{}).ByName(ctx, "agency")
		is.NoErr(err)
		loc, err := time.LoadLocation(w.Timezone)
		is.NoErr(err)
		clock := apikit.NewFakeClock(time.Date(2026, 4, 1, 10, 0, 0, 0, loc))
		svc := reports.NewService(d, clock, areas(d, clock))

		// Rebuilt rollups are the live ones.
		live := snapshot(t, d, w.ID)
		is.True(len(live["report_daily"]) > 100)
		n, err := svc.Rebuild(ctx, w.ID)
		is.NoErr(err)
		t.Logf("rebuilt from %d events", n)
		is.True(n > 500)
		rebuilt := snapshot(t, d, w.ID)
		for table, rows := range live {
			is.Equal(len(rebuilt[table]), len(rows)) // same rows in the table
			for k, v := range rows {
				if rebuilt[table][k] != v {
					t.Fatalf("%s %s: live %s, rebuilt %s", table, k, v, rebuilt[table][k])
				}
			}
		}

		// Migration 0039 fills the week rows from the day rows: run on the
		// month without them, it writes the rows the live writes wrote.
		sql, err := os.ReadFile(filepath.Join("..", "internal", "db", "migrations", string(d.Engine), "0039_report_weeks.sql"))
		is.NoErr(err)
		_, err = d.ExecContext(ctx, "DELETE FROM report_daily WHERE workspace_id = ? AND grain LIKE '%@week'", w.ID)
		is.NoErr(err)
		is.True(len(snapshot(t, d, w.ID)["report_daily"]) < len(live["report_daily"]))
		_, err = d.ExecContext(ctx, string(sql))
		is.NoErr(err)
		filled := snapshot(t, d, w.ID)["report_daily"]
		is.Equal(len(filled), len(live["report_daily"]))
		for k, v := range live["report_daily"] {
			if filled[k] != v {
				t.Fatalf("report_daily %s: live %s, filled by 0039 %s", k, v, filled[k])
			}
		}

		// The independent count.
		var buf bytes.Buffer
		is.NoErr(events.NewLog(d, clock).Export(ctx, w.ID, time.Time{}, &buf))
		evs, err := events.ReadExport(&buf)
		is.NoErr(err)
		var ss []costly
		is.NoErr(d.IDB(ctx).NewSelect().Table("senders").Column("id", "client_id", "monthly_cost", "created_at").
			Where("workspace_id = ?", w.ID).Scan(ctx, &ss))
		var clients, sequences []string
		is.NoErr(d.IDB(ctx).NewSelect().Table("clients").Column("id").Where("workspace_id = ?", w.ID).Scan(ctx, &clients))
		is.NoErr(d.IDB(ctx).NewSelect().Table("sequences").Column("id").Where("workspace_id = ?", w.ID).Scan(ctx, &sequences))
		owner := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}
		cnt := counter{evs: evs, loc: loc, from: "2026-03-02", to: "2026-03-31", today: "2026-04-01", senders: ss}
		same := func(what any, got, want map[string]*float64) {
			t.Helper()
			for key, def := range reports.Definitions() {
				g, w := got[key], want[key]
				if (g == nil) != (w == nil) || (g != nil && math.Abs(*g-*w) > 0.005) {
					t.Fatalf("%v %s (%s): report %v, independent count %v", what, key, def.Unit, deref(g), deref(w))
				}
			}
		}
		check := func(prm reports.Params, want map[string]*float64) {
			t.Helper()
			prm.From, prm.To = cnt.from, cnt.to
			got, err := svc.Overview(ctx, owner, prm)
			is.NoErr(err)
			same(prm, got.Totals, want)
		}
		// Every row of a list report (which reads the period's totals of
		// its own grain) is the independent count of its subject.
		list := func(kind, client string, want func(id string) map[string]*float64) {
			t.Helper()
			page, err := svc.List(ctx, owner, kind, reports.Params{From: cnt.from, To: cnt.to, ClientID: client}, reports.ListParams{Limit: 100})
			is.NoErr(err)
			is.True(len(page.Data) > 0)
			for _, r := range page.Data {
				same(kind+" "+r.ID, r.Metrics, want(r.ID))
			}
		}
		all := cnt.count("", "", "")
		is.True(*all["replies"] > 0 && *all["invites.accepted"] > 0 && *all["meetings.booked"] > 0 && *all["cost.total"] > 0)
		check(reports.Params{}, all)
		for _, c := range clients {
			check(reports.Params{ClientID: c}, cnt.count(c, "", ""))
		}
		for _, q := range sequences {
			check(reports.Params{SequenceID: q}, cnt.count("", q, ""))
		}
		for _, s := range ss {
			check(reports.Params{SenderID: s.ID}, cnt.count("", "", s.ID))
		}
		list(reports.Clients, "", func(id string) map[string]*float64 { return cnt.count(id, "", "") })
		list(reports.Sequences, "", func(id string) map[string]*float64 { return cnt.count("", id, "") })
		list(reports.Senders, "", func(id string) map[string]*float64 { return cnt.count("", "", id) })
		for _, c := range clients {
			list(reports.Sequences, c, func(id string) map[string]*float64 { return cnt.count(c, id, "") })
			list(reports.Senders, c, func(id string) map[string]*float64 { return cnt.count(c, "", id) })
		}

		// A period from a Wednesday to a Friday: its whole weeks come from
		// the week rows, the days before and after them from the day rows.
		// Weekly points read them too.
		cnt.from, cnt.to = "2026-03-04", "2026-03-27"
		check(reports.Params{Interval: "week"}, cnt.count("", "", ""))
		for _, c := range clients {
			check(reports.Params{ClientID: c, Interval: "week"}, cnt.count(c, "", ""))
		}
		list(reports.Clients, "", func(id string) map[string]*float64 { return cnt.count(id, "", "") })
		list(reports.Sequences, "", func(id string) map[string]*float64 { return cnt.count("", id, "") })
		list(reports.Senders, "", func(id string) map[string]*float64 { return cnt.count("", "", id) })
		for _, c := range clients {
			list(reports.Senders, c, func(id string) map[string]*float64 { return cnt.count(c, "", id) })
		}
	})
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// snapshot reads the workspace's rollup rows, shards summed, as text.
func snapshot(t *testing.T, d *db.DB, ws string) map[string]map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]map[string]string{}
	for table, q := range map[string]string{
		"report_daily": "SELECT grain || '|' || day || '|' || client_id || '|' || sequence_id || '|' || sender_id || '|' || metric, CAST(SUM(value) AS TEXT) " +
			"FROM report_daily WHERE workspace_id = ? GROUP BY grain, day, client_id, sequence_id, sender_id, metric HAVING SUM(value) <> 0",
		"report_threads": "SELECT thread_id, day || '|' || client_id || '|' || sequence_id || '|' || sender_id || '|' || lead_id || '|' || intent || '|' || " +
			"CAST(first_reply_at AS TEXT) || '|' || COALESCE(CAST(time_to_reply AS TEXT), '-') FROM report_threads WHERE workspace_id = ?",
	} {
		rows, err := d.IDB(ctx).QueryContext(ctx, q, ws)
		if err != nil {
			t.Fatal(err)
		}
		out[table] = map[string]string{}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			out[table][k] = v
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

type costly struct {
	ID          string    `bun:"id"`
	ClientID    *string   `bun:"client_id"`
	MonthlyCost float64   `bun:"monthly_cost"`
	CreatedAt   time.Time `bun:"created_at"`
}

// counter recounts the metrics from the exported log, with code of its
// own: it reads each event once and keeps what the definitions say.
type counter struct {
	evs             []events.Exported
	loc             *time.Location
	from, to, today string
	senders         []costly
}

func val(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// count returns every metric over the period for one client, sequence or
// sender ("" for any).
func (c counter) count(client, sequence, sender string) map[string]*float64 {
	n := map[string]float64{}
	day := func(t time.Time) string { return t.In(c.loc).Format(time.DateOnly) }
	in := func(e events.Exported) bool {
		d := day(e.At)
		return d >= c.from && d <= c.to && (client == "" || val(e.ClientID) == client) && (sequence == "" || val(e.SequenceID) == sequence) &&
			(sender == "" || val(e.SenderID) == sender)
	}
	firstContact := map[string]events.Exported{} // by enrollment
	type thread struct {
		first  events.Exported
		intent string
	}
	threads := map[string]*thread{}
	var order []string
	sendsAll, sendsMine := map[string]float64{}, map[string]float64{} // day|sender
	for _, e := range c.evs {
		str := func(k string) string { s, _ := e.Data[k].(string); return s }
		switch e.Kind {
		case "action.sent":
			a := str("action")
			if a == "invite" || a == "message" || a == "inmail" || a == "email" {
				if _, ok := firstContact[val(e.EnrollmentID)]; !ok && e.EnrollmentID != nil {
					firstContact[val(e.EnrollmentID)] = e
				}
			}
			sendsAll[day(e.At)+"|"+val(e.SenderID)]++
			if in(e) {
				n["sends.total"]++
				n["sends."+a]++
				sendsMine[day(e.At)+"|"+val(e.SenderID)]++
			}
		case "message.classified":
			id := str("thread_id")
			th := threads[id]
			if th == nil {
				if str("message_id") == "" {
					continue
				}
				th = &thread{first: e}
				threads[id] = th
				order = append(order, id)
			}
			th.intent = str("intent")
		case "invite.accepted":
			if in(e) {
				n["invites.accepted"]++
			}
			invited, _ := time.Parse(time.RFC3339Nano, str("invited_at"))
			e2 := e
			e2.At = invited
			if in(e2) {
				n["_accepted_of_invites"]++
			}
		case "meeting.booked", "email.bounced", "enrollment.created", "lead.created":
			if in(e) {
				n[map[string]string{"meeting.booked": "meetings.booked", "email.bounced": "emails.bounced",
					"enrollment.created": "enrollments.started", "lead.created": "leads.created"}[e.Kind]]++
			}
		case "enrollment.finished", "enrollment.exited", "enrollment.stopped", "enrollment.replied":
			if in(e) {
				n["enrollments.finished"]++
			}
		}
	}
	for _, e := range firstContact {
		if in(e) {
			n["leads.contacted"]++
		}
	}
	var ttr []int64
	for _, id := range order {
		th := threads[id]
		if !in(th.first) {
			continue
		}
		n["replies"]++
		n["intents."+th.intent]++
		if fc, ok := firstContact[val(th.first.EnrollmentID)]; ok && th.first.EnrollmentID != nil && !fc.At.After(th.first.At) {
			ttr = append(ttr, int64(th.first.At.Sub(fc.At)/time.Second))
		}
	}
	// Cost: each sender's month spread over its days, each day over the
	// subjects by their share of its actions; an idle day is the sender's.
	cost := 0.0
	from, _ := time.Parse(time.DateOnly, c.from)
	for d := from; d.Format(time.DateOnly) <= min(c.to, c.today); d = d.AddDate(0, 0, 1) {
		ds := d.Format(time.DateOnly)
		perDay := 0.0
		for _, s := range c.senders {
			if ds < day(s.CreatedAt) {
				continue
			}
			daily := s.MonthlyCost / float64(time.Date(d.Year(), d.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day())
			all, mine := sendsAll[ds+"|"+s.ID], sendsMine[ds+"|"+s.ID]
			switch {
			case all > 0:
				perDay += daily * mine / all
			case sequence == "" && (client == "" || val(s.ClientID) == client) && (sender == "" || s.ID == sender):
				perDay += daily
			}
		}
		cost += perDay
	}
	out := map[string]*float64{}
	for key := range reports.Definitions() {
		v := n[key]
		out[key] = &v
	}
	ratio := func(a, b float64) *float64 {
		if b == 0 {
			return nil
		}
		r := math.Round(a/b*10000) / 10000
		return &r
	}
	out["acceptance_rate"] = ratio(n["_accepted_of_invites"], n["sends.invite"])
	out["reply_rate"] = ratio(n["replies"], n["leads.contacted"])
	out["positive_reply_rate"] = ratio(n["intents.interested"]+n["intents.question"], n["replies"])
	out["meeting_rate"] = ratio(n["meetings.booked"], n["leads.contacted"])
	out["bounce_rate"] = ratio(n["emails.bounced"], n["sends.email"])
	out["time_to_reply"] = nil
	if len(ttr) > 0 {
		slices.Sort(ttr)
		m := float64(ttr[len(ttr)/2])
		if len(ttr)%2 == 0 {
			m = float64((ttr[len(ttr)/2-1] + ttr[len(ttr)/2]) / 2)
		}
		out["time_to_reply"] = &m
	}
	cost = math.Round(cost*100) / 100
	out["cost.total"] = &cost
	per := func(b float64) *float64 {
		if b == 0 {
			return nil
		}
		v := math.Round(cost/b*100) / 100
		return &v
	}
	out["cost.per_reply"] = per(n["replies"])
	out["cost.per_meeting"] = per(n["meetings.booked"])
	return out
}
