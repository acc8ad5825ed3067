package platform

import (
	"context"

	"github.com/leadline/leadline/internal/db"
)

// OpenStore opens leadline's database for a program that embeds it: dsn is
// a SQLite file path (or file: URL) or a postgres:// URL. It migrates the
// database to this version's schema; close it when the program ends.
func OpenStore(ctx context.Context, dsn string) (*db.DB, error) {
	d, err := db.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if _, err := d.Migrate(ctx); err != nil {
		_ = d.Close()
		return nil, err
	}
	return d, nil
}
