// Package db opens leadline's database on either engine, applies the
// embedded migrations, carries a transaction in the context and translates
// engine errors into apikit errors.
package db

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// Engine names the database engine behind a DB.
type Engine string

// The two engines.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// DB is an open database with the engine it runs on.
type DB struct {
	*bun.DB
	Engine Engine

	// Path is the absolute path of a SQLite database file ("" on
	// Postgres). State that one process keeps for a file, such as rate
	// counts, is shared by every DB open on the same path.
	Path string

	// writeMu queues this process's SQLite transactions in Go. SQLite has
	// one writer; left to its busy handler, waiting writers poll with
	// sleeps of up to 100 ms, and throughput falls as clients are added.
	writeMu sync.Mutex
	// stmts are the statements ExecPrepared prepared, by query.
	stmts sync.Map

	// noFlush is a second pool on Postgres whose sessions commit without
	// waiting for the WAL to reach the disk (synchronous_commit off):
	// InTxNoFlush and NoFlush run there, with no SET LOCAL round trip in
	// each transaction. noFlushStmts are ExecPrepared's statements on it.
	noFlush      *bun.DB
	noFlushStmts sync.Map

	// preparedHook sees every statement ExecPrepared, ExistsPrepared and
	// SelectPrepared run, with its values written in, which bun's query
	// hooks do not: tests explain them too.
	preparedHook atomic.Pointer[func(query string)]
}

// Close closes the database's pools.
func (d *DB) Close() error {
	err := d.DB.Close()
	if d.noFlush != nil {
		err = errors.Join(err, d.noFlush.Close())
	}
	return err
}

// AddQueryHook adds hook to every pool of the database, so that what runs
// on the no-flush pool is seen too.
func (d *DB) AddQueryHook(hook bun.QueryHook) {
	d.DB.AddQueryHook(hook)
	if d.noFlush != nil {
		d.noFlush.AddQueryHook(hook)
	}
}
