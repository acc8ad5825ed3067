package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/console"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/workspace"
)

func newFlags(name string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dsn := fs.String("db", envOr("LEADLINE_DB", db.DefaultDSN), "database: a SQLite file path or a postgres:// URL")
	return fs, dsn
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return &helpRequest{fs: fs}
	} else if err != nil {
		return usageError{fmt.Sprintf("%s: %v", fs.Name(), err)}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("serve")
	addr := fs.String("addr", envOr("LEADLINE_ADDR", "127.0.0.1:8080"), "listen address")
	limits := server.DefaultRateLimits
	for _, l := range []struct {
		name string
		v    *int
	}{{"read", &limits.Read}, {"write", &limits.Write}, {"spend", &limits.Spend}} {
		if env := os.Getenv("LEADLINE_RATE_" + strings.ToUpper(l.name)); env != "" {
			n, err := strconv.Atoi(env)
			if err != nil || n < 1 {
				return usageError{fmt.Sprintf("serve: LEADLINE_RATE_%s=%q is not a positive number", strings.ToUpper(l.name), env)}
			}
			*l.v = n
		}
		fs.IntVar(l.v, "rate-"+l.name, *l.v, l.name+" calls per key per hour")
	}
	runner := fs.Bool("runner", true, "also run the runner that sends due sequence steps and the webhook worker; --runner=false serves the API only, with 'leadline work' running elsewhere")
	opts := runnerFlags(fs)
	cls := classifierFlags(fs)
	allowPrivate := fs.Bool("webhooks-allow-private", false, "let webhooks reach private and loopback addresses (a local receiver during development; never in production)")
	public := publicURLFlag(fs)
	metricsAddr := metricsFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkPublicURL("serve", *public); err != nil {
		return err
	}
	if limits.Read < 1 || limits.Write < 1 || limits.Spend < 1 {
		return usageError{"serve: rate limits must be positive numbers"}
	}
	if err := opts.check(); err != nil {
		return err
	}
	if err := cls.check(); err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	d, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	pl, err := runningPlatform(ctx, d, *dsn, logger, *allowPrivate, cls, *public)
	if err != nil {
		return err
	}
	srv := server.New(server.Config{Platform: pl, Logger: logger, Limits: limits})
	ln, err := listen(*addr)
	if err != nil {
		return err
	}
	// Everything serve starts ends before it returns, and before the
	// database closes (deferred first, so run last): bgCtx stops the
	// metrics server and the sweeper, runCtx the runner and its workers.
	bgCtx, stopBackground := context.WithCancel(ctx)
	metricsDone, err := serveMetrics(bgCtx, *metricsAddr, pl, stdout, logger)
	if err != nil {
		stopBackground()
		ln.Close()
		return err
	}
	var swept sync.WaitGroup
	defer func() { stopBackground(); metricsDone(); swept.Wait() }()
	hs := &http.Server{Handler: withConsole(srv.Handler(), console.New(pl, console.Options{PublicURL: *public, Logger: logger})), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	swept.Go(func() { sweep(bgCtx, srv, logger) })
	runCtx, stopRunner := context.WithCancel(context.Background())
	workDone := func() {}
	if *runner {
		workDone = startWork(runCtx, pl, opts, logger)
	}
	defer func() { stopRunner(); workDone() }()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "leadline serving http://%s/v1 (docs at /v1/docs, the console at /app/) on %s database %s\n", ln.Addr(), d.Engine, redact(*dsn))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Graceful shutdown: stop accepting, let running requests finish.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	logger.Info("shutting down")
	stopRunner()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// CSV imports run on after their request: up to 10 s to end, then
	// each one left records itself failed, with the rows it wrote.
	drainCtx, stopDrain := context.WithTimeout(shutdownCtx, 10*time.Second)
	defer stopDrain()
	if err := pl.Leads.DrainImports(drainCtx); err != nil {
		logger.Warn("imports stopped by the shutdown: each is recorded as failed, with the rows it wrote")
	}
	workDone()
	return srv.Flush(shutdownCtx)
}

// withConsole serves the console under /app/ and the API everywhere
// else, each path as it came (the API answers unclean paths itself).
func withConsole(api, app http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == console.DefaultPrefix || strings.HasPrefix(p, console.DefaultPrefix+"/") {
			app.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// sweep clears ended rate windows and expired idempotency records.
func sweep(ctx context.Context, srv *server.Server, logger *slog.Logger) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := srv.Sweep(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("sweep", "err", err)
			}
		}
	}
}

func cmdMigrate(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dsn := newFlags("migrate")
	if err := parse(fs, args); err != nil {
		return err
	}
	d, err := db.Open(ctx, *dsn)
	if err != nil {
		return fmt.Errorf("cannot open database %s: %w", redact(*dsn), err)
	}
	defer d.Close()
	applied, err := d.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("cannot migrate database %s: %w", redact(*dsn), err)
	}
	if len(applied) == 0 {
		fmt.Fprintln(stdout, "database is up to date")
	}
	for _, m := range applied {
		fmt.Fprintln(stdout, "applied", m)
	}
	return nil
}

func cmdApply(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("apply")
	file := fs.String("f", "", "setup YAML file")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *file == "" {
		return usageError{"apply: -f setup.yaml is required"}
	}
	parsed, err := readSetup(*file)
	if err != nil {
		return err
	}
	d, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	key, err := secretKey(ctx, d, *dsn, cliLogger(stderr))
	if err != nil {
		return err
	}
	changes, err := setup.Apply(ctx, d, apikit.SystemClock{}, key, parsed)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		fmt.Fprintln(stdout, "no changes")
	}
	for _, c := range changes {
		fmt.Fprintln(stdout, c)
	}
	return nil
}

// readSetup reads and decodes a setup file.
var readSetup = setup.ReadFile

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// subcommand is one command of a group: keys create, blacklist add.
type subcommand struct {
	name string
	run  func(ctx context.Context, args []string, stdout io.Writer) error
}

// runGroup runs the command of group that args name first, with the rest
// of args; help (or no command at all, as a usage error) says what the
// group's commands are.
func runGroup(ctx context.Context, group, help string, args []string, stdout io.Writer, subs ...subcommand) error {
	if len(args) == 0 {
		names := make([]string, len(subs))
		for i, s := range subs {
			names[i] = s.name
		}
		give := names[len(names)-1]
		if len(names) > 1 {
			give = strings.Join(names[:len(names)-1], ", ") + " or " + give
		}
		return usageError{group + ": give " + give}
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		return &helpRequest{text: help}
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, args[1:], stdout)
		}
	}
	return usageError{fmt.Sprintf("%s: unknown command %q", group, args[0])}
}

func cmdKeys(ctx context.Context, args []string, stdout io.Writer) error {
	return runGroup(ctx, "keys", keysHelp, args, stdout,
		subcommand{"create", cmdKeysCreate}, subcommand{"list", cmdKeysList}, subcommand{"revoke", cmdKeysRevoke})
}

// parseExpiry reads YYYY-MM-DD (the end of that day is not implied: the key
// expires at that date's midnight UTC) or RFC 3339.
func parseExpiry(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			return &t, nil
		}
	}
	return nil, usageError{fmt.Sprintf("keys create: --expires %q is not YYYY-MM-DD or RFC 3339", s)}
}

func cmdKeysCreate(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dsn := newFlags("keys create")
	ws := fs.String("workspace", "", "workspace name")
	member := fs.String("member", "", "email of the creating member (owner or manager)")
	role := fs.String("role", "", "manager, member or client_viewer")
	var clients multiFlag
	fs.Var(&clients, "client", "limit the key to this client (repeatable)")
	expires := fs.String("expires", "", "expiry, YYYY-MM-DD or RFC 3339")
	name := fs.String("name", "", "a label for the key")
	asJSON := fs.Bool("json", false, `print {"id":…,"key":…}`)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ws == "" || *member == "" || *role == "" {
		return usageError{"keys create: --workspace, --member and --role are required"}
	}
	exp, err := parseExpiry(*expires)
	if err != nil {
		return err
	}
	d, err := openExisting(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	k, secret, err := workspace.NewService(d, apikit.SystemClock{}).CreateKey(ctx, workspace.KeyInput{
		Workspace: *ws, MemberEmail: *member, Role: apikit.Role(*role), Clients: clients, ExpiresAt: exp, Name: *name})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{"id": k.ID, "key": secret})
	}
	fmt.Fprintf(stdout, "id:  %s\nkey: %s\n\nThe key is shown once: store it now. Only its hash is kept.\n", k.ID, secret)
	return nil
}

func cmdKeysList(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dsn := newFlags("keys list")
	ws := fs.String("workspace", "", "workspace name")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ws == "" {
		return usageError{"keys list: --workspace is required"}
	}
	d, err := openExisting(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	keys, err := workspace.NewService(d, apikit.SystemClock{}).Keys(ctx, *ws)
	if err != nil {
		return err
	}
	if *asJSON {
		if keys == nil {
			keys = []workspace.Key{}
		}
		return json.NewEncoder(stdout).Encode(keys)
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tROLE\tMEMBER\tCLIENTS\tSTATE\tLAST USED")
	now := time.Now()
	for _, k := range keys {
		state := "active"
		switch {
		case k.RevokedAt != nil:
			state = "revoked"
		case !k.Active(now):
			state = "expired"
		}
		used := "never"
		if k.LastUsedAt != nil {
			used = k.LastUsedAt.Format(time.RFC3339)
		}
		clients := strings.Join(k.ClientNames, ",")
		if clients == "" {
			clients = "all"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Role, k.MemberEmail, clients, state, used)
	}
	return tw.Flush()
}

func cmdKeysRevoke(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dsn := newFlags("keys revoke")
	ws := fs.String("workspace", "", "workspace name")
	id := fs.String("key", "", "key id")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ws == "" || *id == "" {
		return usageError{"keys revoke: --workspace and --key are required"}
	}
	d, err := openExisting(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	k, err := workspace.NewService(d, apikit.SystemClock{}).RevokeKey(ctx, *ws, *id)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %s (%s)\n", k.ID, k.Name)
	return nil
}
