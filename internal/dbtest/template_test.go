package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"

	"github.com/leadline/leadline/internal/db"
)

// TestCopiesAreMigratedAndApart: each test database made from the
// template has every migration, and what one test writes the next does
// not see.
func TestCopiesAreMigratedAndApart(t *testing.T) {
	ctx := context.Background()
	Each(t, func(t *testing.T, d *db.DB) {
		applied, err := d.Migrate(ctx)
		if err != nil || len(applied) != 0 {
			t.Fatalf("Migrate on a copy: applied %v, %v", applied, err)
		}
		fresh := Open(t, d.Engine)
		fromScratch, err := db.Open(ctx, NewDSN(t, d.Engine))
		if err != nil {
			t.Fatal(err)
		}
		defer fromScratch.Close()
		all, err := fromScratch.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := fresh.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(all) {
			t.Fatalf("a copy has %d migrations (%v), a new database %d", n, err, len(all))
		}
		if _, err := d.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (99999, 'x', 'x')`); err != nil {
			t.Fatal(err)
		}
		if err := fresh.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = 99999`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("another copy sees %d rows written in the first (%v)", n, err)
		}
	})
}

// TestEndedTemplatesDropped: a template database whose lock no process
// holds is dropped; one whose lock is held is kept.
func TestEndedTemplatesDropped(t *testing.T) {
	base := os.Getenv(EnvPostgres)
	if base == "" {
		t.Skip(EnvPostgres + " is not set")
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ended, held := randomKey(), randomKey()
	holder, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, held); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int64{ended, held} {
		name := fmt.Sprintf("%s%d", templatePrefix, k)
		if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
	}
	conn, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := dropEndedTemplates(ctx, conn, ""); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[int64]int{ended: 0, held: 1} {
		var n int
		if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_database WHERE datname = $1`, fmt.Sprintf("%s%d", templatePrefix, k)).Scan(&n); err != nil || n != want {
			t.Errorf("template %d: %d databases (%v), want %d", k, n, err, want)
		}
	}
}
