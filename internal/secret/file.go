package secret

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// FileFor is the key file of the SQLite database file at dbPath: beside
// it, named as it is with ".key" added.
func FileFor(dbPath string) string { return dbPath + ".key" }

// ReadFile reads the key file at path. The error wraps fs.ErrNotExist when
// there is none; a file that others than its owner may read is refused.
func ReadFile(path string) (Key, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Key{}, err
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return Key{}, fmt.Errorf("the secret key file %s may be read by others than its owner (mode %04o); make it private with chmod 600 %s", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, err
	}
	k, err := Parse(string(b))
	if err != nil {
		return Key{}, fmt.Errorf("the secret key file %s: %w", path, err)
	}
	return k, nil
}

// WriteFile writes a key, in base64, to the key file at path with mode
// 0600, replacing any file there in one step: a reader sees the old key
// or the new one, never part of one.
func WriteFile(path, encoded string) error {
	tmp, err := writeTemp(path, encoded)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	syncDir(path)
	return nil
}

// LoadOrCreate reads the key file at path or, when there is none, creates
// it with a new key and mode 0600; created reports that it did. Processes
// starting together on one file all end up with the one key that was
// written first.
func LoadOrCreate(path string) (k Key, created bool, err error) {
	k, err = ReadFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, false, err
	}
	k, encoded, err := Generate()
	if err != nil {
		return Key{}, false, err
	}
	tmp, err := writeTemp(path, encoded)
	if err != nil {
		return Key{}, false, err
	}
	defer os.Remove(tmp)
	// A hard link creates the file only if it is not there, whole.
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		k, err = ReadFile(path)
		return k, false, err
	} else if err != nil {
		return Key{}, false, fmt.Errorf("cannot create the secret key file %s: %w", path, err)
	}
	syncDir(path)
	return k, true, nil
}

// writeTemp writes encoded to a new private file beside path and returns
// its name.
func writeTemp(path, encoded string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("cannot write the secret key file %s: %w", path, err)
	}
	name := f.Name()
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.WriteString(encoded + "\n")
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", fmt.Errorf("cannot write the secret key file %s: %w", path, err)
	}
	return name, nil
}

// syncDir makes a new name in path's directory durable, where the system
// allows it.
func syncDir(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// Find returns the server's key: the one in envValue (the value of
// LEADLINE_SECRET_KEY) when set, else, for a SQLite database file at
// sqlitePath, the key file beside it, created on first start (createdFile
// names it then). Otherwise (Postgres, a SQLite database in memory) there
// is no key, which Prepare accepts only while the database keeps no
// secrets.
func Find(envValue, sqlitePath string) (k Key, createdFile string, err error) {
	if envValue != "" {
		k, err := Parse(envValue)
		if err != nil {
			return Key{}, "", fmt.Errorf("%s: %w", EnvKey, err)
		}
		return k, "", nil
	}
	if sqlitePath == "" {
		return Key{}, "", nil
	}
	path := FileFor(sqlitePath)
	k, created, err := LoadOrCreate(path)
	if err != nil {
		return Key{}, "", err
	}
	if created {
		createdFile = path
	}
	return k, createdFile, nil
}
