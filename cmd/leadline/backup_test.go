package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestBackupAndRestore: a backup by VACUUM INTO is a database leadline
// opens with everything in it; a second backup to the same file, and a
// backup of Postgres, are refused.
func TestBackupAndRestore(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dir := t.TempDir()
	dbPath, setup, copyPath := filepath.Join(dir, "l.db"), filepath.Join(dir, "setup.yaml"), filepath.Join(dir, "backup.db")
	is.NoErr(os.WriteFile(setup, []byte(setupYAML), 0o600))
	_, err := runCmd("apply", "--db", dbPath, "-f", setup)
	is.NoErr(err)

	out, err := runCmd("backup", "--db", dbPath, "--to", copyPath)
	is.NoErr(err)
	is.True(strings.Contains(out, "backed up"))

	// Restore: the copy is the database.
	is.NoErr(os.Remove(dbPath))
	is.NoErr(os.Rename(copyPath, dbPath))
	out, err = runCmd("keys", "create", "--db", dbPath, "--workspace", "acme", "--member", "owner@acme.test", "--role", "manager")
	is.NoErr(err)
	is.True(strings.Contains(out, "ll_"))

	_, err = runCmd("backup", "--db", dbPath, "--to", dbPath)
	is.True(err != nil && strings.Contains(describe(err), "already exists"))
	_, err = runCmd("backup", "--db", "postgres://u@127.0.0.1:1/x", "--to", filepath.Join(dir, "pg.db"))
	is.True(err != nil && strings.Contains(describe(err), "pg_dump"))
	_, err = runCmd("backup", "--db", dbPath)
	is.True(err != nil)
}
