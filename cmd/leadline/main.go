// Command leadline runs the leadline API server and manages its database:
// migrations, declarative workspace setup, API keys and a demo workspace.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	_ "time/tzdata" // workspace timezones work on machines without a zoneinfo database

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

const usage = `leadline — sales outreach API server

Usage:
  leadline serve   [--addr 127.0.0.1:8080] [--db ./leadline.db|postgres://…]
                   [--rate-read 600] [--rate-write 300] [--rate-spend 60]
  leadline migrate [--db …]
  leadline apply   [--db …] -f setup.yaml
  leadline keys create [--db …] --workspace NAME --member EMAIL --role manager|member|client_viewer
                       [--client NAME]… [--expires YYYY-MM-DD|RFC3339] [--name LABEL] [--json]
  leadline keys list   [--db …] --workspace NAME [--json]
  leadline keys revoke [--db …] --workspace NAME --key ID
  leadline demo    [--db …]

--db defaults to $LEADLINE_DB, then ./leadline.db; --addr to $LEADLINE_ADDR, then 127.0.0.1:8080;
--rate-read/write/spend (calls per key per hour) to $LEADLINE_RATE_READ/_WRITE/_SPEND, then the API's limits.
`

// usageError is a mistake on the command line: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err == nil {
		return
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(os.Stderr, "leadline: %s\n\n%s", ue.msg, usage)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "leadline: %s\n", describe(err))
	os.Exit(1)
}

// describe renders an error for a person: apikit errors with their remedy.
func describe(err error) string {
	var ae *apikit.Error
	if errors.As(err, &ae) {
		if ae.Remedy != "" {
			return ae.Message + "\n  " + ae.Remedy
		}
		return ae.Message
	}
	return err.Error()
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"no command given"}
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "migrate":
		return cmdMigrate(ctx, args[1:], stdout)
	case "apply":
		return cmdApply(ctx, args[1:], stdout)
	case "keys":
		return cmdKeys(ctx, args[1:], stdout)
	case "demo":
		return cmdDemo(ctx, args[1:], stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return usageError{fmt.Sprintf("unknown command %q", args[0])}
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// openDB opens and migrates the database.
func openDB(ctx context.Context, dsn string) (*db.DB, error) {
	d, err := db.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("cannot open database %s: %w", redact(dsn), err)
	}
	if _, err := d.Migrate(ctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("cannot migrate database %s: %w", redact(dsn), err)
	}
	return d, nil
}

// redact hides a password in a postgres URL.
func redact(dsn string) string {
	if !db.IsPostgres(dsn) {
		return dsn
	}
	if i, j := indexByte(dsn, ':', 11), indexByte(dsn, '@', 0); i > 0 && j > i {
		return dsn[:i+1] + "***" + dsn[j:]
	}
	return dsn
}

func indexByte(s string, c byte, from int) int {
	for i := from; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
