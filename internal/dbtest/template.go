package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/leadline/leadline/internal/db"
)

// Migrating a new database takes most of a small test's time (seconds on
// SQLite under the race detector), so a test process migrates one
// database per engine, its template, and gives each test a copy of it.
//
// SQLite: the migrated file is kept in memory and written into each
// test's directory.
//
// Postgres: the template is a database named leadline_tmpl_<key>, and each
// test's database is made from it with CREATE DATABASE … TEMPLATE. The
// process holds the session advisory lock <key> on the server's base
// database for as long as it runs, so that a template whose lock is free
// belongs to a process that has ended: the next process that makes a
// template drops those.
var templates = map[db.Engine]*template{db.SQLite: {}, db.Postgres: {}}

type template struct {
	once sync.Once
	file []byte // SQLite: the migrated database file
	name string // Postgres: the migrated template database
	err  error
}

// templatePrefix starts the name of every Postgres template database.
const templatePrefix = "leadline_tmpl_"

// templateLock is the connection that holds this process's template lock;
// it stays open until the process ends.
var templateLock *sql.Conn

// newFromTemplate creates a copy of engine e's template for the test and
// returns its DSN; the copy is dropped when the test ends.
func newFromTemplate(t testing.TB, e db.Engine) string {
	t.Helper()
	if e == db.Postgres && os.Getenv(EnvPostgres) == "" {
		t.Skip(EnvPostgres + " is not set")
	}
	tp := templates[e]
	if tp == nil {
		t.Fatalf("no test databases on engine %s", e)
	}
	tp.once.Do(func() {
		if e == db.SQLite {
			tp.file, tp.err = sqliteTemplate()
		} else {
			tp.name, tp.err = postgresTemplate()
		}
	})
	if tp.err != nil {
		t.Fatalf("migrated template on %s: %v", e, tp.err)
	}
	if e == db.Postgres {
		return newPostgres(t, tp.name)
	}
	path := filepath.Join(t.TempDir(), "leadline.db")
	if err := os.WriteFile(path, tp.file, 0o600); err != nil {
		t.Fatalf("copy the migrated template: %v", err)
	}
	return path
}

// sqliteTemplate migrates a SQLite database and returns its file, with
// the write-ahead log folded in.
func sqliteTemplate() ([]byte, error) {
	dir, err := os.MkdirTemp("", "leadline-dbtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	ctx := context.Background()
	d, err := db.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	if _, err := d.Migrate(ctx); err != nil {
		_ = d.Close()
		return nil, err
	}
	if _, err := d.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		_ = d.Close()
		return nil, err
	}
	if err := d.Close(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("%s-wal still holds %d bytes", path, fi.Size())
	}
	return os.ReadFile(path)
}

// postgresTemplate takes this process's template lock, drops the
// templates of ended processes, and creates and migrates the template.
func postgresTemplate() (string, error) {
	ctx := context.Background()
	base := os.Getenv(EnvPostgres)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", err
	}
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	templateLock = conn
	key := randomKey()
	name := fmt.Sprintf("%s%d", templatePrefix, key)
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return "", fmt.Errorf("take the template lock: %w", err)
	}
	if err := dropEndedTemplates(ctx, conn, name); err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		return "", err
	}
	u, err := postgresURL(base, name)
	if err != nil {
		return "", err
	}
	d, err := db.Open(ctx, u)
	if err != nil {
		return "", err
	}
	_, err = d.Migrate(ctx)
	// CREATE DATABASE … TEMPLATE needs the template without connections.
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return name, err
}

// randomKey returns a random positive advisory lock key.
func randomKey() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int64(binary.BigEndian.Uint64(b[:]) >> 1)
}

// dropEndedTemplates drops the template databases other than own whose
// lock no process holds.
func dropEndedTemplates(ctx context.Context, conn *sql.Conn, own string) error {
	rows, err := conn.QueryContext(ctx, `SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, templatePrefix)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, n := range names {
		var key int64
		if n == own {
			continue
		}
		if _, err := fmt.Sscanf(n, templatePrefix+"%d", &key); err != nil {
			continue
		}
		var free bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&free); err != nil {
			return err
		}
		if !free {
			continue
		}
		_, err := conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+n+` WITH (FORCE)`)
		if _, uerr := conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, key); err == nil {
			err = uerr
		}
		if err != nil {
			return fmt.Errorf("drop the ended template %s: %w", n, err)
		}
	}
	return nil
}
