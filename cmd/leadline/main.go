// Command leadline runs the leadline API server and manages its database:
// migrations, declarative workspace setup, API keys, the blacklist and a
// demo workspace.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"

	_ "time/tzdata" // workspace timezones work on machines without a zoneinfo database

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

const usage = `leadline — sales outreach API server and console (/app/)

Usage:
  leadline serve   [--addr 127.0.0.1:8080] [--db ./leadline.db|postgres://…] [--runner=true] [--tick 5s]
                   [--workers 8] [--group 64] [--rate-read 600] [--rate-write 300] [--rate-spend 60]
                   [--webhooks-allow-private] [--public-url URL] [--metrics-addr 127.0.0.1:9090]
  leadline migrate [--db …]
  leadline backup  [--db ./leadline.db] --to FILE
  leadline apply   [--db …] -f setup.yaml
  leadline keys create [--db …] --workspace NAME --member EMAIL --role manager|member|client_viewer
                       [--client NAME]… [--expires YYYY-MM-DD|RFC3339] [--name LABEL] [--json]
  leadline keys list   [--db …] --workspace NAME [--json]
  leadline keys revoke [--db …] --workspace NAME --key ID
  leadline members invite [--db …] --workspace NAME --email EMAIL --role owner|manager|member|client_viewer
                          [--client NAME]… [--public-url URL]
  leadline blacklist list   [--db …] --workspace NAME [--kind company|domain|linkedin] [--q TEXT] [--json]
  leadline blacklist add    [--db …] --workspace NAME --kind company|domain|linkedin VALUE…
  leadline blacklist remove [--db …] --workspace NAME ID…   (or --kind KIND VALUE…)
  leadline demo    [--db …]
  leadline import  FILE.csv [--db …] --workspace NAME [--client NAME] [--map column=field]… [--tag NAME]… [--dry-run]
  leadline work    [--db …] [--tick 5s] [--workers 8] [--group 64] [--webhooks-allow-private] [--public-url URL]
                   [--metrics-addr ADDR]
  leadline senders check [--db …] --workspace NAME [--sender NAME] [--send-test ADDRESS]
  leadline senders secret set|delete [--db …] --workspace NAME --sender NAME --name VAR   (set: the value on stdin)
  leadline senders connect [--db …] --workspace NAME --sender NAME --provider google|microsoft [--public-url URL]
  leadline oauth set [--db …] --workspace NAME --provider google|microsoft --client-id ID (--secret-env VAR | --secret-stdin)
                   [--auth-url URL] [--token-url URL]
  leadline simulate -f setup.yaml [--db FILE] [--days 30] [--seed 1] [--leads 2000] [--start YYYY-MM-DD] [--rates bounce=0.08,accept=0.05]
  leadline events export --workspace NAME [--since T] [--db …]
  leadline reports rebuild --workspace NAME [--db …]
  leadline secrets rotate [--db …] [--new-key BASE64]
  leadline healthcheck [--url http://127.0.0.1:8080/healthz]
  leadline version

Every command prints its own usage and flags with --help (or -h).

--db defaults to $LEADLINE_DB, then ./leadline.db; --addr to $LEADLINE_ADDR, then 127.0.0.1:8080;
--rate-read/write/spend (calls per key per hour) to $LEADLINE_RATE_READ/_WRITE/_SPEND, then the API's limits.
The secret key that seals webhook and booking secrets is $LEADLINE_SECRET_KEY (32 bytes in base64), else
the key file beside a SQLite database (FILE.key, created on first start); Postgres needs the variable.
--public-url defaults to $LEADLINE_PUBLIC_URL: the base of unsubscribe links, of the providers' webhooks and of invite links.
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
	err := dispatch(ctx, args, stdout, stderr)
	var h *helpRequest
	if errors.As(err, &h) {
		h.print(stdout)
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"no command given"}
	}
	switch args[0] {
	case "version", "--version":
		return cmdVersion(args[1:], stdout)
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "migrate":
		return cmdMigrate(ctx, args[1:], stdout)
	case "apply":
		return cmdApply(ctx, args[1:], stdout, stderr)
	case "keys":
		return cmdKeys(ctx, args[1:], stdout)
	case "members":
		return cmdMembers(ctx, args[1:], stdout)
	case "blacklist":
		return cmdBlacklist(ctx, args[1:], stdout)
	case "demo":
		return cmdDemo(ctx, args[1:], stdout, stderr)
	case "import":
		return cmdImport(ctx, args[1:], stdout, stderr)
	case "work":
		return cmdWork(ctx, args[1:], stdout, stderr)
	case "healthcheck":
		return cmdHealthcheck(ctx, args[1:], stdout)
	case "backup":
		return cmdBackup(ctx, args[1:], stdout)
	case "simulate":
		return cmdSimulate(ctx, args[1:], stdout, stderr)
	case "events":
		return cmdEvents(ctx, args[1:], stdout)
	case "reports":
		return cmdReports(ctx, args[1:], stdout)
	case "secrets":
		return cmdSecrets(ctx, args[1:], stdout)
	case "senders":
		return cmdSenders(ctx, args[1:], stdout, stderr)
	case "oauth":
		return cmdOAuth(ctx, args[1:], stdout, stderr)
	case "classifier":
		return cmdClassifier(ctx, args[1:], stdout)
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

// openDB opens and migrates the database the commands that set one up
// use: serve, migrate, apply, demo and simulate create a SQLite file that is not
// there yet.
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

// openExisting opens and migrates a database that must already exist:
// commands that read or change what is there refuse a mistyped SQLite path
// instead of creating an empty file.
func openExisting(ctx context.Context, dsn string) (*db.DB, error) {
	if path, ok := db.SQLiteFile(dsn); ok {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, &apikit.Error{Code: apikit.ENotFound, Message: fmt.Sprintf("Database file %s does not exist.", path),
				Remedy: "Check --db (or LEADLINE_DB); create a database with `leadline apply -f setup.yaml --db FILE`."}
		}
	}
	return openDB(ctx, dsn)
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
