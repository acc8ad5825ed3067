package server

import (
	"context"
	"errors"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
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
}

var errOverLimit = errors.New("over limit")

// limiter counts calls in fixed hourly windows per key and class, in the
// database, so that every replica on one database sees the same counts.
type limiter struct {
	db     *db.DB
	clock  apikit.Clock
	limits RateLimits
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
// call's own class and whether the call is allowed. A refused call counts
// against no budget: its increments are rolled back.
func (l *limiter) take(ctx context.Context, keyID string, c apikit.RateClass) (rateWindow, bool, error) {
	now := l.clock.Now()
	start := now.Truncate(time.Hour)
	var own rateWindow
	var refused rateWindow
	err := l.db.InTx(ctx, func(ctx context.Context) error {
		for i, class := range classesOf(c) {
			var count int
			err := l.db.IDB(ctx).NewRaw(`INSERT INTO rate_windows (key_id, class, window_start, count) VALUES (?, ?, ?, 1)
				ON CONFLICT (key_id, class, window_start) DO UPDATE SET count = rate_windows.count + 1
				RETURNING count`, keyID, string(class), start).Scan(ctx, &count)
			if err != nil {
				return err
			}
			limit := l.limits.of(class)
			w := rateWindow{Class: class, Limit: limit, Remaining: max(0, limit-count), Reset: start.Add(time.Hour)}
			if i == 0 {
				own = w
			}
			if count > limit {
				refused = w
				return errOverLimit
			}
		}
		return nil
	})
	if errors.Is(err, errOverLimit) {
		if refused.Class == own.Class {
			own.Remaining = 0
		}
		return refused, false, nil
	}
	return own, err == nil, err
}

// sweep deletes windows that ended before now.
func (l *limiter) sweep(ctx context.Context) error {
	return l.db.InTx(ctx, func(ctx context.Context) error {
		_, err := l.db.IDB(ctx).NewRaw(`DELETE FROM rate_windows WHERE window_start < ?`, l.clock.Now().Truncate(time.Hour)).Exec(ctx)
		return err
	})
}
