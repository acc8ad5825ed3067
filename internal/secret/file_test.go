package secret_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/secret"
)

func TestKeyFile(t *testing.T) {
	is := is.New(t)
	dbPath := filepath.Join(t.TempDir(), "leadline.db")
	path := secret.FileFor(dbPath)
	is.Equal(path, dbPath+".key")

	// First start: the file is created, private.
	k, created, err := secret.Find("", dbPath)
	is.NoErr(err)
	is.Equal(created, path)
	is.True(!k.IsZero())
	info, err := os.Stat(path)
	is.NoErr(err)
	if runtime.GOOS != "windows" {
		is.Equal(info.Mode().Perm(), os.FileMode(0o600))
	}
	// Nothing else is left beside it.
	entries, err := os.ReadDir(filepath.Dir(path))
	is.NoErr(err)
	is.Equal(len(entries), 1)

	// Later starts read it.
	again, created, err := secret.Find("", dbPath)
	is.NoErr(err)
	is.Equal(created, "")
	is.True(again.Equal(k))

	// The variable wins over the file.
	other, enc, err := secret.Generate()
	is.NoErr(err)
	fromEnv, created, err := secret.Find(enc, dbPath)
	is.NoErr(err)
	is.Equal(created, "")
	is.True(fromEnv.Equal(other))
	_, _, err = secret.Find("short", dbPath)
	is.True(err != nil && strings.Contains(err.Error(), secret.EnvKey))

	// No file and no variable: no key (Postgres, memory).
	none, created, err := secret.Find("", "")
	is.NoErr(err)
	is.True(none.IsZero())
	is.Equal(created, "")

	// Rotation replaces the file in one step.
	is.NoErr(secret.WriteFile(path, enc))
	replaced, err := secret.ReadFile(path)
	is.NoErr(err)
	is.True(replaced.Equal(other))
	info, err = os.Stat(path)
	is.NoErr(err)
	if runtime.GOOS != "windows" {
		is.Equal(info.Mode().Perm(), os.FileMode(0o600))
	}
}

func TestKeyFileRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes")
	}
	is := is.New(t)
	dir := t.TempDir()
	_, enc, err := secret.Generate()
	is.NoErr(err)
	open := filepath.Join(dir, "open.key")
	is.NoErr(os.WriteFile(open, []byte(enc), 0o644))
	is.NoErr(os.Chmod(open, 0o644))
	_, err = secret.ReadFile(open)
	is.True(err != nil && strings.Contains(err.Error(), "chmod 600"))

	bad := filepath.Join(dir, "bad.key")
	is.NoErr(os.WriteFile(bad, []byte("not a key"), 0o600))
	_, err = secret.ReadFile(bad)
	is.True(err != nil && strings.Contains(err.Error(), bad))
}
