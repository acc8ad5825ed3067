// Package dbtest gives tests a fresh, migrated database on every engine this
// machine offers: SQLite always, Postgres when LEADLINE_TEST_POSTGRES holds
// a URL. Each database is created for one test and dropped after it.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/leadline/leadline/internal/db"
)

// EnvPostgres names the variable that holds the Postgres server URL.
const EnvPostgres = "LEADLINE_TEST_POSTGRES"

// Engines returns the engines tests run on here.
func Engines() []db.Engine {
	if os.Getenv(EnvPostgres) != "" {
		return []db.Engine{db.SQLite, db.Postgres}
	}
	return []db.Engine{db.SQLite}
}

// Each runs fn as a subtest per engine, each with its own database.
func Each(t *testing.T, fn func(t *testing.T, d *db.DB)) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(string(e), func(t *testing.T) {
			fn(t, Open(t, e))
		})
	}
}

// Open creates a new database on engine e, migrates it and drops it when
// the test ends. The database is a copy of one migrated once per test
// process (see templates), so that a test does not wait for the
// migrations; Open still runs Migrate on it, which then has nothing to
// apply.
func Open(t testing.TB, e db.Engine) *db.DB {
	t.Helper()
	dsn := newFromTemplate(t, e)
	d, err := db.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("open %s: %v", e, err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, err := d.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate %s: %v", e, err)
	}
	return d
}

// NewDSN creates an empty database on engine e and returns its DSN; the
// database is dropped when the test ends.
func NewDSN(t testing.TB, e db.Engine) string {
	t.Helper()
	if e == db.SQLite {
		return filepath.Join(t.TempDir(), "leadline.db")
	}
	return newPostgres(t, "")
}

// newPostgres creates a database on the Postgres server, a copy of the
// database template when it is not empty, and returns its DSN; the
// database is dropped when the test ends.
func newPostgres(t testing.TB, template string) string {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		t.Skip(EnvPostgres + " is not set")
	}
	name := "leadline_test_" + randomSuffix()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	defer admin.Close()
	create := `CREATE DATABASE ` + name
	if template != "" {
		create += ` TEMPLATE ` + template
	}
	if _, err := admin.Exec(create); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			t.Errorf("open postgres: %v", err)
			return
		}
		defer admin.Close()
		if _, err := admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	dsn, err := postgresURL(base, name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// postgresURL returns the Postgres URL base with its database set to name.
func postgresURL(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", EnvPostgres, err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Contract runs a store's contract suite once per engine (see Engines):
// suite gets open, which makes a fresh, migrated database on the engine
// for each test of the suite.
func Contract(t *testing.T, suite func(t *testing.T, open func(t *testing.T) *db.DB)) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(string(e), func(t *testing.T) {
			suite(t, func(t *testing.T) *db.DB { return Open(t, e) })
		})
	}
}
