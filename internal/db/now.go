package db

import (
	"context"
	"time"

	"github.com/leadline/leadline/apikit"
)

// nowKey keeps a transaction's time in its memo.
type nowKey struct{}

// Now is the time of the transaction ctx carries: clock's reading the
// first time Now is called in the transaction, and that same instant on
// every later call in it, so that the writes of one transaction (a row's
// updated_at, the events it writes, their rollups' day) carry one time
// however long it runs. Outside a transaction Now reads clock.
func Now(ctx context.Context, clock apikit.Clock) time.Time {
	memo := TxMemo(ctx)
	if memo == nil {
		return clock.Now()
	}
	if t, ok := memo.Load(nowKey{}); ok {
		return t.(time.Time)
	}
	t, _ := memo.LoadOrStore(nowKey{}, clock.Now())
	return t.(time.Time)
}
