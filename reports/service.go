package reports

import (
	"context"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// Service keeps the rollups on the activity log's write path and answers
// the reports from them.
type Service struct {
	db    *db.DB
	clock apikit.Clock
	areas Areas
	zones *zones

	// compacted is the last day Compact folded the days before: past
	// days get no new shards, so each day is folded once.
	compactMu sync.Mutex
	compacted string
}

// NewService returns the reports on d, which read the other areas
// through areas. It registers nothing: the activity log's events are
// counted, in each event's own transaction, through Count, which the
// caller (platform.New) hooks on the log.
func NewService(d *db.DB, clock apikit.Clock, areas Areas) *Service {
	return &Service{db: d, clock: clock, areas: areas, zones: &zones{byWS: map[string]zone{}, ttl: time.Minute, clock: time.Now}}
}

// Count is the rollups' hook on the activity log (events.Log.WithInsert):
// the statements that count evs, written with them.
func (svc *Service) Count(ctx context.Context, evs []events.Event) ([]events.Statement, error) {
	return svc.count(ctx, evs)
}

// rollupTables are the tables the rollups live in.
var rollupTables = []string{"report_daily", "report_threads"}

// Rebuild recomputes the workspace's rollups from its activity log, oldest
// event first, with the code that keeps them live, in one transaction. It
// returns how many events it read. On Postgres, stop the workspace's
// writers (the runner, the server) while it runs: events committed during
// a rebuild may be counted twice.
func (svc *Service) Rebuild(ctx context.Context, workspaceID string) (int, error) {
	loc, err := svc.zones.get(ctx, svc.areas.Workspaces, workspaceID)
	if err != nil {
		return 0, err
	}
	n := 0
	err = svc.db.InTx(ctx, func(ctx context.Context) error {
		idb := svc.db.IDB(ctx)
		for _, t := range rollupTables {
			if _, err := idb.NewDelete().Table(t).Where("workspace_id = ?", workspaceID).Exec(ctx); err != nil {
				return err
			}
		}
		var after time.Time
		afterID := ""
		for {
			page, err := svc.areas.Events.Page(ctx, workspaceID, countedKinds, after, afterID, rebuildPage)
			if err != nil {
				return err
			}
			t := newTally(svc.areas.Enrollments)
			for _, e := range page {
				t.add(e, loc)
			}
			if err := t.write(ctx, svc.db, 0); err != nil {
				return err
			}
			n += len(page)
			if len(page) < rebuildPage {
				return nil
			}
			after, afterID = page[len(page)-1].CreatedAt, page[len(page)-1].ID
		}
	})
	return n, err
}

const rebuildPage = 5000

// Compact folds the counter shards of days more than two days before now
// into shard 0, on Postgres (SQLite writes one shard): the rows stay few,
// and every sum stays what it was, in one statement. The runner calls it
// with its hourly checks; it does the work once a day, as the days it folds
// get no new counts (events count on the day they are written). A week
// row is dated by its Monday, so a week still running is folded too and
// takes new counts in other shards afterwards: the next day's fold takes
// those, and every sum stays what it was meanwhile.
func (svc *Service) Compact(ctx context.Context, now time.Time) error {
	if svc.db.Engine != db.Postgres {
		return nil
	}
	before := now.UTC().AddDate(0, 0, -2).Format(time.DateOnly)
	svc.compactMu.Lock()
	done := svc.compacted == before
	svc.compactMu.Unlock()
	if done {
		return nil
	}
	if err := svc.compact(ctx, before); err != nil {
		return err
	}
	svc.compactMu.Lock()
	svc.compacted = before
	svc.compactMu.Unlock()
	return nil
}

func (svc *Service) compact(ctx context.Context, before string) error {
	const key = "workspace_id, grain, day, client_id, sequence_id, sender_id, metric"
	_, err := svc.db.IDB(ctx).ExecContext(ctx, `WITH moved AS (
	DELETE FROM report_daily WHERE day < ? AND shard > 0 RETURNING `+key+`, value)
INSERT INTO report_daily (`+key+`, shard, value)
SELECT `+key+`, 0, SUM(value) FROM moved GROUP BY `+key+`
ON CONFLICT (`+key+`, shard) DO UPDATE SET value = report_daily.value + excluded.value`, before)
	return err
}
