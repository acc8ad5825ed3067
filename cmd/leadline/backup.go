package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

const backupHelp = "Usage: leadline backup --to FILE [flags]\n\nWrites a consistent copy of a SQLite database to FILE with VACUUM INTO, while serve and work go on;\n" +
	"restore by stopping leadline and putting FILE in the database's place (docs/DEPLOY.md). Postgres is backed up with pg_dump."

// cmdBackup copies a SQLite database with VACUUM INTO: one read
// transaction, so the copy is consistent while writers go on.
func cmdBackup(ctx context.Context, args []string, stdout io.Writer) error {
	flags, dsn := newFlags("backup")
	to := flags.String("to", "", "the backup file to write; it must not exist")
	if err := parse(flags, args); err != nil {
		return err
	}
	if *to == "" {
		return usageError{"backup: --to FILE is required"}
	}
	if db.IsPostgres(*dsn) {
		return &apikit.Error{Code: apikit.EPayloadInvalid, Message: "leadline backup copies SQLite databases; this one is Postgres.",
			Remedy: "Back up Postgres with its own tools: pg_dump -Fc (docs/DEPLOY.md)."}
	}
	if _, err := os.Stat(*to); err == nil {
		return &apikit.Error{Code: apikit.EConflict, Message: fmt.Sprintf("%s already exists.", *to),
			Remedy: "Name a new file: a backup never overwrites one."}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	d, err := openExisting(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	abs, err := filepath.Abs(*to)
	if err != nil {
		return err
	}
	if _, err := d.IDB(ctx).ExecContext(ctx, "VACUUM INTO ?", abs); err != nil {
		return fmt.Errorf("backup to %s: %w", *to, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "leadline backed up %s to %s (%d bytes)\n", redact(*dsn), *to, st.Size())
	return nil
}
