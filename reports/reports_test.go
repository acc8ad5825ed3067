package reports_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/reports"
	"github.com/leadline/leadline/workspace"
)

// TestDefinitionsAgree holds the metric definitions and the reports
// together: a report shows every defined metric and nothing else.
func TestDefinitionsAgree(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		p, _, svc, _ := berlin(t, d, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
		r, err := svc.Overview(context.Background(), p, reports.Params{})
		is.NoErr(err)
		defs := reports.Definitions()
		is.Equal(len(r.Totals), len(defs))
		for key := range defs {
			_, ok := r.Totals[key]
			is.True(ok) // every definition is in the report
		}
		for _, pt := range r.Series {
			is.Equal(len(pt.Metrics), len(defs))
		}
		is.Equal(len(r.Series), reports.DefaultDays)
		is.Equal(r.To, "2026-03-10")
		is.Equal(r.From, "2026-02-09")
		// Nothing happened: counts are 0 and every ratio is null.
		for key, def := range defs {
			switch def.Unit {
			case "count":
				is.Equal(*r.Totals[key], 0.0)
			case "ratio":
				is.Equal(r.Totals[key], nil)
			}
		}
		is.Equal(r.Totals["time_to_reply"], nil)
		is.Equal(r.Totals["cost.per_reply"], nil)
	})
}

// areas are the areas the reports read, as the platform wires them.
func areas(d *db.DB, clock apikit.Clock) reports.Areas {
	return platform.New(platform.Config{DB: d, Clock: clock}).ReportAreas()
}

// berlin applies a workspace in Europe/Berlin and returns its owner, the
// log and the reports on a fake clock at now.
func berlin(t *testing.T, d *db.DB, now time.Time) (apikit.Principal, *events.Log, *reports.Service, *apikit.FakeClock) {
	t.Helper()
	ctx := context.Background()
	clock := apikit.NewFakeClock(now)
	ws := workspace.NewService(d, clock)
	if _, err := ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{Name: "berlin", Timezone: "Europe/Berlin",
		Members: []workspace.MemberSpec{{Email: "owner@berlin.test", Role: apikit.RoleOwner}}}}}); err != nil {
		t.Fatal(err)
	}
	w, err := ws.ByName(ctx, "berlin")
	if err != nil {
		t.Fatal(err)
	}
	log := events.NewLog(d, clock)
	svc := reports.NewService(d, clock, areas(d, clock))
	log.WithInsert(svc.Count)
	return apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}, log, svc, clock
}

// TestDaylightSaving counts events by the workspace's local day: the
// 25-hour day when clocks go back and the 23-hour day when they go forward
// are one day each.
func TestDaylightSaving(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		p, log, svc, clock := berlin(t, d, time.Time{})
		at := func(ts ...string) {
			for _, s := range ts {
				tm, err := time.Parse(time.RFC3339, s)
				is.NoErr(err)
				clock.Set(tm)
				is.NoErr(log.Emit(ctx, events.Event{WorkspaceID: p.WorkspaceID, Kind: "lead.created"}))
			}
		}
		// 25 October 2026 has 25 hours in Berlin: 00:30 CEST is 22:30Z the
		// day before, 23:30 CET is 22:30Z that day.
		at("2026-10-24T21:59:00Z", "2026-10-24T22:30:00Z", "2026-10-25T00:30:00Z", "2026-10-25T22:30:00Z", "2026-10-25T23:30:00Z")
		// 29 March 2026 has 23 hours: 00:30 CET is 23:30Z the day before,
		// 23:30 CEST is 21:30Z that day.
		at("2026-03-28T23:30:00Z", "2026-03-29T21:30:00Z", "2026-03-29T22:30:00Z")
		clock.Set(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
		day := func(from, to string) []float64 {
			r, err := svc.Overview(ctx, p, reports.Params{From: from, To: to})
			is.NoErr(err)
			var out []float64
			for _, pt := range r.Series {
				out = append(out, *pt.Metrics["leads.created"])
			}
			return out
		}
		is.Equal(day("2026-10-24", "2026-10-26"), []float64{1, 3, 1})
		is.Equal(day("2026-03-28", "2026-03-30"), []float64{0, 2, 1})
		// A sender's monthly cost is spread over the days of its month,
		// whatever their length.
		is.Equal(reports.DailyCost(310, "2026-10-25"), 10.0)
		is.Equal(reports.DailyCost(280, "2026-02-14"), 10.0)
	})
}

// TestCompactKeepsSums writes one counter from many transactions (on
// Postgres they spread over shards), folds the shards of past days, and
// finds the same numbers in fewer rows.
func TestCompactKeepsSums(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		p, log, svc, clock := berlin(t, d, time.Date(2026, 10, 5, 10, 0, 0, 0, time.UTC))
		for range 40 {
			is.NoErr(d.InTx(ctx, func(ctx context.Context) error {
				return log.Emit(ctx, events.Event{WorkspaceID: p.WorkspaceID, Kind: "lead.created"})
			}))
		}
		rows := func() int {
			n, err := d.NewSelect().Table("report_daily").Where("workspace_id = ? AND metric = 'leads.created'", p.WorkspaceID).Count(ctx)
			is.NoErr(err)
			return int(n)
		}
		created := func() float64 {
			r, err := svc.Overview(ctx, p, reports.Params{From: "2026-10-05", To: "2026-10-05"})
			is.NoErr(err)
			return *r.Totals["leads.created"]
		}
		is.Equal(created(), 40.0)
		if d.Engine == db.Postgres {
			is.True(rows() > 7) // four grains and three grains' week rows, several shards
		}
		is.NoErr(svc.Compact(ctx, clock.Now())) // the day is not past yet: nothing moves
		clock.Advance(72 * time.Hour)
		is.NoErr(svc.Compact(ctx, clock.Now()))
		is.Equal(rows(), 7) // one row per grain and per grain's week
		is.Equal(created(), 40.0)

		// The week is still running: its rows were folded with their
		// Monday and take new counts; a weekly report of the whole week
		// reads them and finds every event, before and after the next fold.
		for range 5 {
			is.NoErr(d.InTx(ctx, func(ctx context.Context) error {
				return log.Emit(ctx, events.Event{WorkspaceID: p.WorkspaceID, Kind: "lead.created"})
			}))
		}
		week := func() float64 {
			r, err := svc.Overview(ctx, p, reports.Params{From: "2026-10-05", To: "2026-10-11", Interval: "week"})
			is.NoErr(err)
			return *r.Totals["leads.created"]
		}
		is.Equal(week(), 45.0)
		clock.Advance(72 * time.Hour)
		is.NoErr(svc.Compact(ctx, clock.Now()))
		is.Equal(week(), 45.0)
	})
}

// TestCountersCommitWithTheirEvents: the counters of events written in a
// transaction are written with its commit (on Postgres just before it), so
// a rolled-back transaction counts nothing and a committed one counts all
// its events.
func TestCountersCommitWithTheirEvents(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		p, log, svc, _ := berlin(t, d, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
		sent := func() events.Event {
			return events.Event{WorkspaceID: p.WorkspaceID, LeadID: apikit.NewID(), Kind: "action.sent", Data: map[string]any{"action": "invite"}}
		}
		total := func() float64 {
			r, err := svc.Overview(ctx, p, reports.Params{})
			is.NoErr(err)
			return *r.Totals["sends.total"]
		}
		boom := apikit.Invalid("boom", "")
		err := d.InTx(ctx, func(ctx context.Context) error {
			is.NoErr(log.EmitMany(ctx, []events.Event{sent()}))
			return boom
		})
		is.True(errors.Is(err, boom))
		is.Equal(total(), 0.0) // rolled back: nothing counted

		is.NoErr(d.InTx(ctx, func(ctx context.Context) error {
			for range 3 {
				if err := log.EmitMany(ctx, []events.Event{sent()}); err != nil {
					return err
				}
			}
			return nil
		}))
		is.Equal(total(), 3.0)
		is.NoErr(log.EmitMany(ctx, []events.Event{sent()})) // outside a transaction
		is.Equal(total(), 4.0)
	})
}

// TestDashboardIsTheThreeReports reads the overview, the funnel and the
// intents in one call, as the console's report page does, and finds what
// the three reads find.
func TestDashboardIsTheThreeReports(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		p, log, svc, clock := berlin(t, d, time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC))
		for i := range 12 {
			clock.Set(time.Date(2026, 10, 5+i%9, 9, i, 0, 0, time.UTC))
			evs := []events.Event{{WorkspaceID: p.WorkspaceID, Kind: "lead.created"},
				{WorkspaceID: p.WorkspaceID, Kind: "message.classified", Data: map[string]any{"thread_id": apikit.NewID(), "message_id": apikit.NewID(),
					"intent": []string{"interested", "question", "not_now"}[i%3]}}}
			is.NoErr(d.InTx(ctx, func(ctx context.Context) error { return log.EmitMany(ctx, evs) }))
		}
		clock.Set(time.Date(2026, 10, 20, 12, 0, 0, 0, time.UTC))
		for _, prm := range []reports.Params{{From: "2026-10-01", To: "2026-10-20"}, {From: "2026-10-01", To: "2026-10-20", Interval: "week"}} {
			ov, fn, in, err := svc.Dashboard(ctx, p, prm)
			is.NoErr(err)
			want, err := svc.Overview(ctx, p, prm)
			is.NoErr(err)
			is.Equal(ov, want)
			prm.Interval = ""
			wantFn, err := svc.Funnel(ctx, p, prm)
			is.NoErr(err)
			is.Equal(fn, wantFn)
			wantIn, err := svc.Intents(ctx, p, prm)
			is.NoErr(err)
			is.Equal(in, wantIn)
			is.Equal(in.Replies, int64(12))
		}
		_, _, _, err := svc.Dashboard(ctx, p, reports.Params{Interval: "month"})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
	})
}
