package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
)

// secretKey finds the secret key for the database d, opened from dsn, and
// gets the database's secrets ready for it (secret.Prepare): the key is
// LEADLINE_SECRET_KEY, else the key file beside a SQLite database file
// (created on first start, which is logged once, without the key), else
// none, which a database that keeps secrets refuses.
func secretKey(ctx context.Context, d *db.DB, dsn string, logger *slog.Logger) (secret.Key, error) {
	path, _ := db.SQLiteFile(dsn)
	k, created, err := secret.Find(os.Getenv(secret.EnvKey), path)
	if err != nil {
		return secret.Key{}, err
	}
	if created != "" {
		logger.Info("created the secret key file (mode 0600); keep a copy apart from the database's backups", "path", created, "key_id", k.ID())
	}
	n, err := secret.Prepare(ctx, d, k)
	if err != nil {
		return secret.Key{}, err
	}
	if n > 0 {
		logger.Info("sealed secrets that were kept in the clear", "count", n, "key_id", k.ID())
	}
	if k.IsZero() {
		logger.Warn("no secret key: webhooks, scheduling providers' and senders' stored secrets are refused until " + secret.EnvKey + " is set")
	}
	return k, nil
}

// cliLogger is the logger of the commands other than serve and work:
// text lines on standard error.
func cliLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, nil))
}

const secretsHelp = `Usage: leadline secrets rotate [--db …] [--new-key BASE64]

Re-seals every secret the database keeps (webhook signing secrets,
scheduling providers' secrets, senders' stored secrets, stored idempotent answers) under a new
secret key, in one transaction. Stop every server and worker first, and
start them again with the new key.

The current key is LEADLINE_SECRET_KEY, else the key file beside a SQLite
database. The new key is --new-key, else LEADLINE_NEW_SECRET_KEY, else a
new random key. With a key file, the file then holds the new key; with
LEADLINE_SECRET_KEY, set it to the new key (a random one is printed once).
`

func cmdSecrets(ctx context.Context, args []string, stdout io.Writer) error {
	if err := onlySubcommand(args, "secrets", "rotate", secretsHelp); err != nil {
		return err
	}
	fset, dsn := newFlags("secrets rotate")
	newKeyFlag := fset.String("new-key", "", "the new key, 32 bytes in base64 (default: $"+secret.EnvNewKey+", else a new random key)")
	if err := parse(fset, args[1:]); err != nil {
		return err
	}
	d, err := openExisting(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()

	// The current key, from where the server takes it; a key file is not
	// created here.
	var old secret.Key
	keyFile := ""
	if env := os.Getenv(secret.EnvKey); env != "" {
		if old, err = secret.Parse(env); err != nil {
			return fmt.Errorf("%s: %w", secret.EnvKey, err)
		}
	} else if path, ok := db.SQLiteFile(*dsn); ok {
		keyFile = secret.FileFor(path)
		if old, err = secret.ReadFile(keyFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}

	encoded, generated := *newKeyFlag, false
	if encoded == "" {
		encoded = os.Getenv(secret.EnvNewKey)
	}
	var next secret.Key
	if encoded == "" {
		if next, encoded, err = secret.Generate(); err != nil {
			return err
		}
		generated = true
	} else if next, err = secret.Parse(encoded); err != nil {
		return usageError{"secrets rotate: the new key: " + err.Error()}
	}
	if next.Equal(old) {
		return &apikit.Error{Code: apikit.EConflict, Message: "The new key is the current key (" + old.ID() + ").",
			Remedy: "Give another key, or none for a new random one."}
	}

	// With a key file, the new key is written beside it before the
	// database changes and takes its place after the commit: whatever
	// happens, one of the two files holds the key the secrets are under.
	staged := ""
	if keyFile != "" {
		staged = keyFile + ".new"
		if err := secret.WriteFile(staged, encoded); err != nil {
			return err
		}
	}
	n, err := secret.Rotate(ctx, d, old, next)
	if err != nil {
		if staged != "" {
			_ = os.Remove(staged)
		}
		return err
	}
	if staged != "" {
		if err := os.Rename(staged, keyFile); err != nil {
			return fmt.Errorf("the secrets are sealed under the new key, which is in %s; move it to %s: %w", staged, keyFile, err)
		}
		fmt.Fprintf(stdout, "Re-sealed %d secrets under the key %s; the key file %s holds it now. Keep a copy apart from the database's backups.\n",
			n, next.ID(), keyFile)
		return nil
	}
	fmt.Fprintf(stdout, "Re-sealed %d secrets under the key %s. Set %s to it on every server and worker before starting them.\n", n, next.ID(), secret.EnvKey)
	if generated {
		fmt.Fprintf(stdout, "The new key, shown this once:\n%s\n", encoded)
	}
	return nil
}
