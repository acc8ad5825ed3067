package server

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/workspace"
)

// RateLimits are the hourly budgets per key and class.
type RateLimits struct {
	Read, Write, Spend int
}

// DefaultRateLimits are the spec's budgets.
var DefaultRateLimits = RateLimits{Read: 600, Write: 300, Spend: 60}

func (l RateLimits) of(c apikit.RateClass) int {
	switch c {
	case apikit.ClassRead:
		return l.Read
	case apikit.ClassWrite:
		return l.Write
	default:
		return l.Spend
	}
}

// rateWindow is the state of one class's budget after a call.
type rateWindow struct {
	Class     apikit.RateClass
	Limit     int
	Remaining int
	Reset     time.Time
	// AuthVersion is the key's workspace's authentication version, read
	// in the same statement as the count (Postgres reads only; see
	// workspace.Service.AuthenticateRead).
	AuthVersion int64
}

var errOverLimit = errors.New("over limit")

// limiter counts calls in fixed hourly windows per key and class.
//
// On Postgres the counts live in the database, one conditional upsert per
// class, so that every replica on one database shares them. On SQLite one
// process owns the file's writes anyway: counting there in the database
// would put every read in the write queue, so the process counts in memory
// (shared by every DB it opens on the same file) and persists the counts
// in the background, which keeps a restart from resetting budgets.
type limiter struct {
	db     *db.DB
	clock  apikit.Clock
	limits RateLimits
	local  *localCounts // SQLite only
}

func newLimiter(d *db.DB, clock apikit.Clock, limits RateLimits) *limiter {
	l := &limiter{db: d, clock: clock, limits: limits}
	if d.Engine == db.SQLite {
		l.local = &localCounts{counts: map[windowKey]*localCount{}}
		// Handles on one file share its counts; an in-memory database is
		// its own.
		if _, onFile := db.SQLiteFile(d.Path); onFile {
			v, _ := localByPath.LoadOrStore(d.Path, l.local)
			l.local = v.(*localCounts)
		}
	}
	return l
}

// classesOf lists the budgets a call of class c counts against: spend
// calls count as writes too.
func classesOf(c apikit.RateClass) []apikit.RateClass {
	if c == apikit.ClassSpend {
		return []apikit.RateClass{apikit.ClassSpend, apikit.ClassWrite}
	}
	return []apikit.RateClass{c}
}

// take counts one call of class c for keyID. It returns the window of the
// call's own class (or of the budget that refused it) and whether the call
// is allowed. A refused call counts against no budget.
func (l *limiter) take(ctx context.Context, keyID string, c apikit.RateClass) (rateWindow, bool, error) {
	return l.takeFor(ctx, keyID, "", c)
}

// takeFor is take for a key of workspaceID: for a read on Postgres, the
// window also carries the workspace's authentication version.
func (l *limiter) takeFor(ctx context.Context, keyID, workspaceID string, c apikit.RateClass) (rateWindow, bool, error) {
	start := l.clock.Now().Truncate(time.Hour)
	var counts []int
	var refused = -1
	var err error
	switch {
	case l.local != nil:
		counts, refused, err = l.local.take(ctx, l, keyID, c, start)
	case workspaceID != "" && c == apikit.ClassRead:
		// The count and the workspace's authentication version in one
		// statement, so that the version is as new as the count.
		var rc readCount
		if err := l.db.RunRider(ctx, l.readRider(keyID, workspaceID, start, &rc)); err != nil {
			return rateWindow{}, false, err
		}
		win, ok := rc.window(l, start)
		return win, ok, nil
	default:
		counts, refused, err = l.takeInDB(ctx, keyID, c, start)
	}
	if err != nil {
		return rateWindow{}, false, err
	}
	return l.window(c, start, counts, refused, 0), refused < 0, nil
}

// window is the window a call of class c reports after its count: counts
// are its classes' new counts, refused the index of the class that
// refused it (or -1).
func (l *limiter) window(c apikit.RateClass, start time.Time, counts []int, refused int, version int64) rateWindow {
	classes := classesOf(c)
	if refused >= 0 {
		return rateWindow{Class: classes[refused], Limit: l.limits.of(classes[refused]), Remaining: 0, Reset: start.Add(time.Hour), AuthVersion: version}
	}
	limit := l.limits.of(c)
	return rateWindow{Class: c, Limit: limit, Remaining: max(0, limit-counts[0]), Reset: start.Add(time.Hour), AuthVersion: version}
}

// readCount is what a read's count in the database reads: the new count
// (null when the limit refused the call) and the authentication version
// of the key's workspace, as new as the count.
type readCount struct {
	count   sql.NullInt64
	version int64
}

// window is the read's window after its count.
func (rc *readCount) window(l *limiter, start time.Time) (rateWindow, bool) {
	if !rc.count.Valid {
		return l.window(apikit.ClassRead, start, nil, 0, rc.version), false
	}
	return l.window(apikit.ClassRead, start, []int{int(rc.count.Int64)}, -1, rc.version), true
}

// readRider counts a read of keyID (whose workspace is workspaceID) in
// the window from start and reads the workspace's authentication version,
// into rc: alone (takeFor) or riding in the read's own first
// statement (see Server.ride).
func (l *limiter) readRider(keyID, workspaceID string, start time.Time, rc *readCount) *db.Rider {
	return &db.Rider{
		With: `rate AS (` + rateUpsert + `)`,
		Select: `(SELECT count FROM rate) AS rate_count,
			` + workspace.AuthVersion("?") + ` AS auth_version`,
		Args: []any{keyID, string(apikit.ClassRead), l.db.TimeArg(&start), l.limits.of(apikit.ClassRead), workspaceID},
		Dest: []any{&rc.count, &rc.version},
	}
}

// rateUpsert counts one call of a key and class in a window, only while
// the count is under the limit, and returns the new count (no row when the
// limit is reached). Its values: key, class, window start, limit.
const rateUpsert = `INSERT INTO rate_windows (key_id, class, window_start, count) VALUES (?, ?, ?, 1)
	ON CONFLICT (key_id, class, window_start) DO UPDATE SET count = rate_windows.count + 1
	WHERE rate_windows.count < ? RETURNING count`

// giveBack uncounts a read that took its count and was then refused
// (Postgres: a key whose authentication changed since this process last
// read it).
func (l *limiter) giveBack(ctx context.Context, keyID string, start time.Time) error {
	return l.db.ExecPrepared(l.db.NoFlushStatements(ctx), `UPDATE rate_windows SET count = count - 1
		WHERE key_id = ? AND class = ? AND window_start = ? AND count > 0`, keyID, string(apikit.ClassRead), l.db.TimeArg(&start))
}

// takeInDB counts in the database: each class's row is incremented only
// while it is under its limit, atomically, and a spend call's two
// increments commit together or not at all. A read or write call's one
// increment is a statement of its own; the counts commit without waiting
// for the disk on Postgres (a count lost in a crash lets a few calls
// more through).
func (l *limiter) takeInDB(ctx context.Context, keyID string, c apikit.RateClass, start time.Time) ([]int, int, error) {
	classes := classesOf(c)
	take := func(ctx context.Context, class apikit.RateClass) (int, bool, error) {
		var got []int
		// Prepared, on the no-flush pool outside a spend call's transaction:
		// every request runs it.
		err := l.db.SelectPrepared(l.db.NoFlushStatements(ctx), &got, rateUpsert, keyID, string(class), l.db.TimeArg(&start), l.limits.of(class))
		if err != nil && !db.IsNoRows(err) {
			return 0, false, err
		}
		if len(got) == 0 {
			return 0, false, nil
		}
		return got[0], true, nil
	}
	if len(classes) == 1 {
		n, ok, err := take(ctx, c)
		if err != nil || !ok {
			return nil, 0, err
		}
		return []int{n}, -1, nil
	}
	var counts []int
	refused := -1
	err := l.db.InTxNoFlush(ctx, func(ctx context.Context) error {
		for i, class := range classes {
			n, ok, err := take(ctx, class)
			if err != nil {
				return err
			}
			if !ok {
				refused = i
				return errOverLimit
			}
			counts = append(counts, n)
		}
		return nil
	})
	if errors.Is(err, errOverLimit) {
		err = nil
	}
	return counts, refused, err
}

func (l *limiter) sweep(ctx context.Context) error {
	if err := l.flush(ctx); err != nil {
		return err
	}
	start := l.clock.Now().Truncate(time.Hour)
	if l.local != nil {
		l.local.prune(start)
	}
	return l.db.InTx(ctx, func(ctx context.Context) error {
		_, err := l.db.IDB(ctx).NewRaw(`DELETE FROM rate_windows WHERE window_start < ?`, start).Exec(ctx)
		return err
	})
}

// flush persists the counts this process keeps in memory.
func (l *limiter) flush(ctx context.Context) error {
	if l.local == nil {
		return nil
	}
	return l.local.flush(ctx, l.db)
}

// localByPath holds the in-memory counts of each SQLite file this process
// has open, so that every DB (and Server) on one file shares one budget.
var localByPath sync.Map // path -> *localCounts

type windowKey struct {
	keyID string
	class apikit.RateClass
	start time.Time
}

type localCount struct {
	n, flushed int
}

// localCounts are the rate counts of one SQLite file in this process.
type localCounts struct {
	mu        sync.Mutex
	counts    map[windowKey]*localCount
	lastFlush time.Time // wall time: when counts were last persisted
	// flushing is held by the flush under way, in the background or not:
	// a flush waits for the one before it, so that once Server.Flush
	// returns nothing of an earlier call is still being written.
	flushing sync.Mutex
}

// flushEvery is how often, at most, taking a call persists the counts.
const flushEvery = time.Second

// take counts a call in memory. A window seen for the first time starts
// from what the database holds for it (an earlier run's count).
func (lc *localCounts) take(ctx context.Context, l *limiter, keyID string, c apikit.RateClass, start time.Time) ([]int, int, error) {
	classes := classesOf(c)
	lc.mu.Lock()
	entries := make([]*localCount, len(classes))
	for i, class := range classes {
		k := windowKey{keyID, class, start}
		e := lc.counts[k]
		if e == nil {
			var stored []int
			err := l.db.NewRaw(`SELECT count FROM rate_windows WHERE key_id = ? AND class = ? AND window_start = ?`,
				keyID, string(class), start).Scan(ctx, &stored)
			if err != nil && !db.IsNoRows(err) {
				lc.mu.Unlock()
				return nil, -1, err
			}
			e = &localCount{}
			if len(stored) > 0 {
				e.n, e.flushed = stored[0], stored[0]
			}
			lc.counts[k] = e
		}
		entries[i] = e
	}
	for i, e := range entries {
		if e.n >= l.limits.of(classes[i]) {
			lc.mu.Unlock()
			return nil, i, nil
		}
	}
	counts := make([]int, len(entries))
	for i, e := range entries {
		e.n++
		counts[i] = e.n
	}
	due := time.Since(lc.lastFlush) >= flushEvery
	lc.mu.Unlock()
	if due && lc.flushing.TryLock() {
		go func() {
			defer lc.flushing.Unlock()
			_ = lc.write(context.WithoutCancel(ctx), l.db) // best effort: the next flush retries
		}()
	}
	return counts, -1, nil
}

// flush writes every count that grew since the last flush, once the
// flush under way (if any) has ended.
func (lc *localCounts) flush(ctx context.Context, d *db.DB) error {
	lc.flushing.Lock()
	defer lc.flushing.Unlock()
	return lc.write(ctx, d)
}

// write writes every count that grew since the last flush. A stored count
// is never lowered. The caller holds lc.flushing.
func (lc *localCounts) write(ctx context.Context, d *db.DB) error {
	type row struct {
		k windowKey
		n int
	}
	lc.mu.Lock()
	var rows []row
	for k, e := range lc.counts {
		if e.n > e.flushed {
			rows = append(rows, row{k, e.n})
		}
	}
	lc.lastFlush = time.Now()
	lc.mu.Unlock()
	if len(rows) == 0 {
		return nil
	}
	err := d.InTx(ctx, func(ctx context.Context) error {
		for _, r := range rows {
			_, err := d.IDB(ctx).NewRaw(`INSERT INTO rate_windows (key_id, class, window_start, count) VALUES (?, ?, ?, ?)
				ON CONFLICT (key_id, class, window_start) DO UPDATE SET count = max(rate_windows.count, excluded.count)`,
				r.k.keyID, string(r.k.class), r.k.start, r.n).Exec(ctx)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	lc.mu.Lock()
	for _, r := range rows {
		if e := lc.counts[r.k]; e != nil && e.flushed < r.n {
			e.flushed = r.n
		}
	}
	lc.mu.Unlock()
	return nil
}

// prune forgets windows that ended before start and are persisted.
func (lc *localCounts) prune(start time.Time) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	for k, e := range lc.counts {
		if k.start.Before(start) && e.n == e.flushed {
			delete(lc.counts, k)
		}
	}
}
