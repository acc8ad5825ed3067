package events_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/workspace"
)

// acme is a workspace to write events for, and the fake clock they are
// dated by.
func acme(t *testing.T, d *db.DB) (*apikit.FakeClock, *workspace.Workspace) {
	t.Helper()
	is := is.New(t)
	clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	ws := workspace.NewService(d, clock)
	_, err := ws.Apply(context.Background(), workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{Name: "acme"}}})
	is.NoErr(err)
	w, err := ws.ByName(context.Background(), "acme")
	is.NoErr(err)
	return clock, w
}

func TestLog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock, w := acme(t, d)
		log := events.NewLog(d, clock)
		lead := apikit.NewID()
		p := apikit.Principal{WorkspaceID: w.ID, MemberID: apikit.NewID(), KeyID: apikit.NewID()}
		actx := apikit.WithPrincipal(ctx, p)

		is.NoErr(log.Emit(actx, events.Event{LeadID: lead, Kind: "first"}))
		is.NoErr(log.Emit(actx, events.Event{LeadID: lead, Kind: "same instant", Data: map[string]any{"n": 1}}))
		clock.Advance(time.Second)
		is.NoErr(log.EmitMany(ctx, []events.Event{{WorkspaceID: w.ID, LeadID: lead, Kind: "platform"}})) // no principal: no actor
		is.NoErr(log.Emit(actx, events.Event{LeadID: apikit.NewID(), Kind: "other lead"}))

		// An event written in a transaction that rolls back is gone with it.
		_ = d.InTx(actx, func(ctx context.Context) error {
			is.NoErr(log.Emit(ctx, events.Event{LeadID: lead, Kind: "rolled back"}))
			return apikit.Invalid("no", "")
		})

		evs, total, err := log.ForLead(ctx, w.ID, lead, 10, 0)
		is.NoErr(err)
		is.Equal(total, 3)
		is.Equal([]string{evs[0].Kind, evs[1].Kind, evs[2].Kind}, []string{"platform", "same instant", "first"}) // newest first
		is.Equal(evs[0].MemberID, "")
		is.Equal(evs[1].MemberID, p.MemberID) // the actor is the key's member
		is.Equal(evs[1].KeyID, p.KeyID)
		is.Equal(evs[1].Data["n"], float64(1))
		is.True(evs[0].CreatedAt.After(evs[1].CreatedAt))
	})
}

// TestWithInsert: a hook's statements are written with the events, in
// their transaction; on Postgres they ride in the events' INSERT.
func TestWithInsert(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock, w := acme(t, d)
		_, err := d.ExecContext(ctx, "CREATE TABLE emitted (id TEXT PRIMARY KEY, n INTEGER NOT NULL)")
		is.NoErr(err)
		log := events.NewLog(d, clock)
		log.WithInsert(func(ctx context.Context, evs []events.Event) ([]events.Statement, error) {
			return []events.Statement{{SQL: "INSERT INTO emitted (id, n) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET n = emitted.n + excluded.n",
				Args: []any{"count", len(evs)}}}, nil
		})
		count := func() (n int) {
			is.NoErr(d.NewSelect().Table("emitted").Column("n").Where("id = 'count'").Scan(ctx, &n))
			return n
		}
		rec := dbtest.Record(d)
		queries := rec.During(func() {
			is.NoErr(log.EmitMany(ctx, []events.Event{{WorkspaceID: w.ID, Kind: "a"}, {WorkspaceID: w.ID, Kind: "b"}}))
		})
		is.Equal(count(), 2)
		// One transaction of their own; on Postgres the counter rides in
		// the events' INSERT, and SQLite, which has no INSERT in a WITH,
		// runs it as a statement of its own.
		is.Equal(strings.ToUpper(queries[0]), "BEGIN")
		is.Equal(strings.ToUpper(queries[len(queries)-1]), "COMMIT")
		if d.Engine == db.Postgres {
			is.Equal(len(queries), 3)
			is.True(strings.HasPrefix(queries[1], `WITH "with_0" AS (INSERT INTO emitted`))
		} else {
			is.Equal(len(queries), 4)
			is.True(strings.HasPrefix(queries[2], "INSERT INTO emitted"))
		}

		// Rolled back with the events.
		_ = d.InTx(ctx, func(ctx context.Context) error {
			is.NoErr(log.Emit(ctx, events.Event{WorkspaceID: w.ID, Kind: "c"}))
			return apikit.Invalid("no", "")
		})
		is.Equal(count(), 2)
		is.NoErr(d.InTx(ctx, func(ctx context.Context) error {
			return log.Emit(ctx, events.Event{WorkspaceID: w.ID, Kind: "c"})
		}))
		is.Equal(count(), 3)
	})
}

// TestEmitOutsideATransaction: events written outside a transaction are
// written in one of their own, with their hooks' rows: a hook that fails
// leaves no event behind (no event without its webhook deliveries).
func TestEmitOutsideATransaction(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock, w := acme(t, d)
		log := events.NewLog(d, clock)
		failing := true
		log.OnEmit(func(ctx context.Context, evs []events.Event) error {
			if failing {
				return apikit.Invalid("the outbox refused", "")
			}
			return nil
		})
		lead := apikit.NewID()
		is.True(log.EmitMany(ctx, []events.Event{{WorkspaceID: w.ID, LeadID: lead, Kind: "a"}, {WorkspaceID: w.ID, LeadID: lead, Kind: "b"}}) != nil)
		is.True(log.Emit(ctx, events.Event{WorkspaceID: w.ID, LeadID: lead, Kind: "c"}) != nil)
		_, total, err := log.ForLead(ctx, w.ID, lead, 10, 0)
		is.NoErr(err)
		is.Equal(total, 0)
		failing = false
		is.NoErr(log.Emit(ctx, events.Event{WorkspaceID: w.ID, LeadID: lead, Kind: "d"}))
		_, total, err = log.ForLead(ctx, w.ID, lead, 10, 0)
		is.NoErr(err)
		is.Equal(total, 1)
	})
}

// TestForLeadPlan: a lead's timeline page and its count read the lead's
// events through events_lead on both engines, never every event of the
// workspace (events_workspace) nor the whole table: a lead page stays
// quick in a workspace of millions of events.
func TestForLeadPlan(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock, w := acme(t, d)
		log := events.NewLog(d, clock)
		lead := apikit.NewID()
		is.NoErr(log.EmitMany(ctx, []events.Event{{WorkspaceID: w.ID, LeadID: lead, Kind: "first"}}))
		rec := dbtest.Record(d)
		queries := rec.During(func() {
			_, total, err := log.ForLead(ctx, w.ID, lead, 10, 0)
			is.NoErr(err)
			is.Equal(total, 1)
		})
		n := 0
		for _, q := range queries {
			if !strings.Contains(q, "events") {
				continue
			}
			n++
			plan := strings.Join(dbtest.Plan(t, d, q), "\n")
			if !strings.Contains(plan, "events_lead") || strings.Contains(plan, "events_workspace") ||
				strings.Contains(plan, "SCAN event") || strings.Contains(plan, "Seq Scan on events") {
				t.Errorf("%s: %s\nis planned as\n%s", d.Engine, q, plan)
			}
		}
		is.Equal(n, 2) // the page and its count
	})
}
