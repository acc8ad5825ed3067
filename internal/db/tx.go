package db

import (
	"context"
	"slices"
	"sync"

	"github.com/uptrace/bun"
)

// noFlushKey marks a context whose transaction runs on the noFlush pool.
type noFlushKey struct{}

// NoFlush is where a single statement whose loss in a crash does no harm
// runs outside a transaction: on Postgres the no-flush pool, whose commit
// does not wait for the disk; the database itself on SQLite. Inside a
// transaction it is the transaction.
func (d *DB) NoFlush(ctx context.Context) bun.IDB {
	if tx, ok := ctx.Value(txKey{}).(bun.Tx); ok {
		return tx
	}
	if d.noFlush != nil {
		return d.noFlush
	}
	return d.DB
}

// NoFlushStatements returns ctx for ExecPrepared, SelectPrepared and
// ExistsPrepared to run a single statement outside a transaction on the
// no-flush pool (see NoFlush), prepared once per connection there.
// Inside a transaction, and on SQLite, ctx is returned as it is.
func (d *DB) NoFlushStatements(ctx context.Context) context.Context {
	if _, inTx := ctx.Value(txKey{}).(bun.Tx); inTx || d.noFlush == nil {
		return ctx
	}
	return context.WithValue(ctx, noFlushKey{}, true)
}

type txKey struct{}

// IDB returns the transaction carried by ctx, or db itself.
func (d *DB) IDB(ctx context.Context) bun.IDB {
	if tx, ok := ctx.Value(txKey{}).(bun.Tx); ok {
		return tx
	}
	return d.DB
}

// InTx runs fn inside a transaction carried by the context fn receives.
// When ctx already carries one, fn joins it, so one transaction can span
// several areas' stores. Writes should go through InTx: on SQLite it is
// what queues them in the process. fn must pass on the ctx it receives;
// starting a new transaction from another context inside fn would wait
// for the one that fn holds.
func (d *DB) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{}).(bun.Tx); ok {
		return fn(ctx)
	}
	if d.Engine == SQLite {
		d.writeMu.Lock()
		defer d.writeMu.Unlock()
	}
	return d.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return inTx(withTx(ctx, tx), fn)
	})
}

// withTx is ctx carrying tx, with the transaction's memo and commit hooks.
func withTx(ctx context.Context, tx bun.Tx) context.Context {
	return context.WithValue(context.WithValue(context.WithValue(ctx, txKey{}, tx), txMemoKey{}, &sync.Map{}), commitHooksKey{}, &commitHooks{})
}

// inTx runs fn and then, if it succeeded, the hooks it left for the
// commit.
func inTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := fn(ctx); err != nil {
		return err
	}
	h := ctx.Value(commitHooksKey{}).(*commitHooks)
	for {
		h.mu.Lock()
		if len(h.fns) == 0 {
			h.mu.Unlock()
			return nil
		}
		// In key order, not the order of registration: two transactions
		// that write the same hooks' rows then lock them in one order.
		first := 0
		for i, f := range h.fns {
			if f.key < h.fns[first].key {
				first = i
			}
		}
		next := h.fns[first]
		h.fns = slices.Delete(h.fns, first, first+1)
		delete(h.keys, next.key)
		h.mu.Unlock()
		if err := next.fn(ctx); err != nil {
			return err
		}
	}
}

type commitHooksKey struct{}

// commitHooks are what a transaction runs last, before its commit.
type commitHooks struct {
	mu   sync.Mutex
	keys map[string]bool
	fns  []commitHook
}

type commitHook struct {
	key string
	fn  func(ctx context.Context) error
}

// BeforeCommit has fn run last in the transaction ctx carries, once
// however often it is asked for under key, and reports whether ctx
// carries one (when it does not, nothing is registered). Writes that many
// transactions make to a few shared rows, such as counters, go there: the
// rows are locked only for the commit, and hooks that write their rows in
// a fixed order cannot deadlock with another transaction's, as the hooks
// themselves run in the order of their keys.
func BeforeCommit(ctx context.Context, key string, fn func(ctx context.Context) error) bool {
	h, ok := ctx.Value(commitHooksKey{}).(*commitHooks)
	if !ok {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.keys == nil {
		h.keys = map[string]bool{}
	}
	if !h.keys[key] {
		h.keys[key] = true
		h.fns = append(h.fns, commitHook{key, fn})
	}
	return true
}

// Later queues item under key in the transaction ctx carries, for flush to
// write together with every item queued under key, in one go, just before
// the commit (see BeforeCommit): the rows a transaction writes one by one,
// such as the runner's actions and events, then cost a statement or a few
// instead of one each. It reports whether ctx carries a transaction; when
// it does not, nothing is queued and the caller writes at once.
//
// A queued write is seen by no read of the transaction before the commit:
// queue only rows the transaction does not read again. Queued writes run
// before the counters' hooks (their keys sort first), so that those still
// hold their hot rows for the commit alone.
func Later[T any](ctx context.Context, key string, item T, flush func(ctx context.Context, items []T) error) bool {
	memo := TxMemo(ctx)
	if memo == nil {
		return false
	}
	key = laterPrefix + key
	v, _ := memo.LoadOrStore(key, &queued[T]{})
	q := v.(*queued[T])
	q.mu.Lock()
	q.items = append(q.items, item)
	q.mu.Unlock()
	BeforeCommit(ctx, key, func(ctx context.Context) error {
		q.mu.Lock()
		items := q.items
		q.items = nil
		q.mu.Unlock()
		if len(items) == 0 {
			return nil
		}
		return flush(ctx, items)
	})
	return true
}

// laterPrefix sorts the hooks of Later before every other hook key, which
// start with a letter.
const laterPrefix = "0 later:"

type queued[T any] struct {
	mu    sync.Mutex
	items []T
}

type txMemoKey struct{}

// TxMemo is a map that lives as long as the transaction ctx carries (nil
// outside one): what a store read once in a transaction and may reuse in
// it, such as the webhooks of a workspace for the outbox.
func TxMemo(ctx context.Context) *sync.Map {
	m, _ := ctx.Value(txMemoKey{}).(*sync.Map)
	return m
}

// InTxNoFlush is InTx for work whose commit may be lost in a crash without
// harm, because it is redone the same way afterwards: on Postgres it runs
// on the no-flush pool, whose commit does not wait for the WAL to reach the
// disk. SQLite is unchanged, and so is a transaction ctx already carries,
// which fn joins.
func (d *DB) InTxNoFlush(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{}).(bun.Tx); ok || d.noFlush == nil {
		return d.InTx(ctx, fn)
	}
	return d.noFlush.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return inTx(context.WithValue(withTx(ctx, tx), noFlushKey{}, true), fn)
	})
}
