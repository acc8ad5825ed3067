package db

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations
var migrationFS embed.FS

// migrateLock is the Postgres advisory lock that serialises replicas
// migrating at the same time.
const migrateLock = 7_413_220_001

type migration struct {
	version int
	name    string
	sql     string
}

func migrations(engine Engine) ([]migration, error) {
	dir := "migrations/" + string(engine)
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: bad version", e.Name())
		}
		b, err := migrationFS.ReadFile(dir + "/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// Migrate applies every embedded migration not yet applied and returns the
// names of those it applied. It is safe when several replicas start at once:
// Postgres replicas queue on an advisory lock, SQLite ones on the write lock
// each migration's immediate transaction takes.
func (d *DB) Migrate(ctx context.Context) ([]string, error) {
	all, err := migrations(d.Engine)
	if err != nil {
		return nil, err
	}
	conn, err := d.DB.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()

	if d.Engine == Postgres {
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
			return nil, fmt.Errorf("take migration lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock) //nolint:errcheck
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	var applied []string
	for _, m := range all {
		done, err := d.applyOne(ctx, conn, m)
		if err != nil {
			return applied, fmt.Errorf("migration %s: %w", m.name, err)
		}
		if done {
			applied = append(applied, m.name)
		}
	}
	return applied, nil
}

func (d *DB) applyOne(ctx context.Context, conn *sql.Conn, m migration) (bool, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck
	var n int
	q := `SELECT count(*) FROM schema_migrations WHERE version = ?`
	if d.Engine == Postgres {
		q = `SELECT count(*) FROM schema_migrations WHERE version = $1`
	}
	if err := tx.QueryRowContext(ctx, q, m.version).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return false, err
	}
	ins := `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`
	if d.Engine == Postgres {
		ins = `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`
	}
	if _, err := tx.ExecContext(ctx, ins, m.version, m.name, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return false, err
	}
	return true, tx.Commit()
}
