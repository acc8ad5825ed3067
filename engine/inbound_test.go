package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/platform"
)

// TestPushedEventsAreDurable: an event pushed to the inbound queue is
// taken in by a runner of another platform on the same database (another
// replica), once; one that fails stays queued with its error and is tried
// again after its backoff, never lost.
func TestPushedEventsAreDurable(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, "")
		ann := e.lead("Ann Lee", nil)
		starts := e.clock.Now().Add(72 * time.Hour)

		// An API replica queues a booking; a worker replica takes it in.
		api := platform.New(platform.Config{DB: d, Clock: e.clock, Logger: slog.New(slog.DiscardHandler)})
		added, err := api.Inbound.Push(ctx, e.p.WorkspaceID, bookings.CalCom, "bk-1",
			engine.Event{Booking: &bookings.Booking{Provider: bookings.CalCom, BookingID: "bk-1", LeadID: &ann, StartsAt: starts}})
		is.NoErr(err)
		is.True(added)
		again, err := api.Inbound.Push(ctx, e.p.WorkspaceID, bookings.CalCom, "bk-1",
			engine.Event{Booking: &bookings.Booking{Provider: bookings.CalCom, BookingID: "bk-1", LeadID: &ann, StartsAt: starts}})
		is.NoErr(err)
		is.True(!again) // a provider's retry queues nothing
		_, err = e.runner.Tick(ctx)
		is.NoErr(err)
		is.Equal(e.count("meeting.booked", ann), 1)
		is.Equal(queued(t, d), 0)

		// A booking that cannot be recorded (its lead does not exist) is
		// kept with its error and tried again after its backoff.
		ghost := "0193a000-0000-7000-8000-00000000dead"
		_, err = e.pl.Inbound.Push(ctx, e.p.WorkspaceID, bookings.CalCom, "bk-2",
			engine.Event{Booking: &bookings.Booking{Provider: bookings.CalCom, BookingID: "bk-2", LeadID: &ghost, StartsAt: starts}})
		is.NoErr(err)
		_, err = e.runner.Tick(ctx)
		is.NoErr(err)
		is.Equal(queued(t, d), 1)
		var row struct {
			Attempts  int     `bun:"attempts"`
			LastError *string `bun:"last_error"`
		}
		is.NoErr(d.NewSelect().Table("inbound").Column("attempts", "last_error").Scan(ctx, &row))
		is.Equal(row.Attempts, 1)
		is.True(row.LastError != nil)
		e.clock.Advance(3 * time.Minute)
		_, err = e.pl.Inbound.Push(ctx, e.p.WorkspaceID, bookings.CalCom, "bk-3",
			engine.Event{Booking: &bookings.Booking{Provider: bookings.CalCom, BookingID: "bk-3", LeadID: &ann, StartsAt: starts}})
		is.NoErr(err)
		_, err = e.runner.Tick(ctx)
		is.NoErr(err)
		is.Equal(e.count("meeting.booked", ann), 2) // the failing one holds back no other
		is.NoErr(d.NewSelect().Table("inbound").Column("attempts", "last_error").Where("dedupe = 'bk-2'").Scan(ctx, &row))
		is.Equal(row.Attempts, 2)
	})
}

func queued(t *testing.T, d *db.DB) int {
	t.Helper()
	n, err := d.NewSelect().Table("inbound").Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// TestInboundQueueUsesIndexes: every tick's claim of the inbound queue,
// and the deletes and retries of its rows, read the queue through its
// indexes, never by a scan.
func TestInboundQueueUsesIndexes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, "")
		ann := e.lead("Ann Lee", nil)
		ghost := "0193a000-0000-7000-8000-00000000dead"
		rec := dbtest.Record(d)
		queries := rec.During(func() {
			for i, lead := range []*string{&ann, &ghost} { // one taken in, one failing
				_, err := e.pl.Inbound.Push(ctx, e.p.WorkspaceID, bookings.CalCom, fmt.Sprint("bk-", i),
					engine.Event{Booking: &bookings.Booking{Provider: bookings.CalCom, BookingID: fmt.Sprint("bk-", i), LeadID: lead, StartsAt: e.clock.Now()}})
				is.NoErr(err)
			}
			_, err := e.runner.Tick(ctx)
			is.NoErr(err)
		})
		is.Equal(queued(t, d), 1) // the failing one, kept
		dbtest.AssertNoScan(t, d, "inbound", "", queries)
		dbtest.AssertNoScan(t, d, "threads", "", queries) // the conversation a meeting came from
	})
}
