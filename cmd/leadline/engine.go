package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/simulate"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

// publicURLFlag is --public-url: the base of unsubscribe links and where
// providers post webhooks (default: LEADLINE_PUBLIC_URL).
func publicURLFlag(fs *flag.FlagSet) *string {
	return fs.String("public-url", os.Getenv("LEADLINE_PUBLIC_URL"), "the server's public base URL, e.g. https://leadline.example.com: unsubscribe links and provider webhooks use it (default $LEADLINE_PUBLIC_URL)")
}

// runningPlatform is the platform of serve and work: the server's secret
// key, the webhook guard, the classifier flags, and every transport (the
// sandbox, mailboxes, Unipile) reaching out from publicURL.
func runningPlatform(ctx context.Context, d *db.DB, dsn string, logger *slog.Logger, allowPrivate bool, cls classifierOpts, publicURL string) (*platform.Platform, error) {
	key, err := secretKey(ctx, d, dsn, logger)
	if err != nil {
		return nil, err
	}
	pl := platform.New(platform.Config{DB: d, Logger: logger, SecretKey: key, Webhooks: webhookGuard(allowPrivate)})
	cls.apply(pl.Inbox)
	pl.UseTransports(pl.Transports(platform.Outside{PublicURL: publicURL, Seed: time.Now().UnixNano()}))
	return pl, nil
}

// runReaders runs the transports' readers (the mailboxes' inboxes) until
// ctx ends.
func runReaders(ctx context.Context, pl *platform.Platform, logger *slog.Logger) {
	pl.RunReaders(ctx, func(err error) { logger.Error("transport reader stopped", "error", err) })
}

// startWork runs the runner, the webhook worker and the transports' readers until
// ctx ends. The returned function waits until all three have stopped, so
// that nothing writes to the database once serve or work closes it.
func startWork(ctx context.Context, pl *platform.Platform, opts runnerOpts, logger *slog.Logger) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() { pl.WebhookWorker(nil).Run(ctx, webhookTick) })
	wg.Go(func() { runReaders(ctx, pl, logger) })
	wg.Go(func() { opts.apply(pl.Runner()).Run(ctx, *opts.tick) })
	return wg.Wait
}

// checkPublicURL reports a public URL that is no absolute http(s) URL.
func checkPublicURL(command, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return usageError{fmt.Sprintf("%s: --public-url %q must be an absolute http(s) URL with no query, like https://leadline.example.com", command, raw)}
	}
	return nil
}

// webhookTick is how often the webhook worker looks for due deliveries:
// a replay goes out within about 30 seconds, a new event within seconds.
const webhookTick = 2 * time.Second

// webhookGuard is the webhook endpoint guard: public addresses only,
// unless private ones are allowed for development.
func webhookGuard(allowPrivate bool) webhooks.Guard {
	if !allowPrivate {
		return webhooks.Guard{}
	}
	return webhooks.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}}
}

// runnerOpts are the runner's flags.
type runnerOpts struct {
	command        string
	tick           *time.Duration
	workers, group *int
}

// runnerFlags adds the runner's flags to fs.
func runnerFlags(fs *flag.FlagSet) runnerOpts {
	return runnerOpts{
		command: fs.Name(),
		tick:    fs.Duration("tick", engine.DefaultTick, "how often the runner looks for due work"),
		workers: fs.Int("workers", 0, fmt.Sprintf("enrollments of a claimed batch the runner works on at once, Postgres only (0: %d)", engine.DefaultWorkers)),
		group:   fs.Int("group", 0, fmt.Sprintf("enrollments that share each of the runner's transactions (0: %d)", engine.DefaultGroup)),
	}
}

// check refuses values the runner cannot take.
func (o runnerOpts) check() error {
	if *o.tick <= 0 || *o.workers < 0 || *o.group < 0 {
		return usageError{o.command + ": --tick must be positive, and --workers and --group 0 (the default) or more"}
	}
	return nil
}

// apply sets the flags on r.
func (o runnerOpts) apply(r *engine.Runner) *engine.Runner {
	if *o.workers > 0 {
		r.Workers = *o.workers
	}
	if *o.group > 0 {
		r.Group = *o.group
	}
	return r
}

// cmdWork runs the runner alone, for worker replicas apart from the API.
func cmdWork(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("work")
	opts := runnerFlags(fs)
	cls := classifierFlags(fs)
	allowPrivate := fs.Bool("webhooks-allow-private", false, "let webhooks reach private and loopback addresses (development only)")
	public := publicURLFlag(fs)
	metricsAddr := metricsFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := opts.check(); err != nil {
		return err
	}
	if err := cls.check(); err != nil {
		return err
	}
	if err := checkPublicURL("work", *public); err != nil {
		return err
	}
	d, err := openExisting(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	pl, err := runningPlatform(ctx, d, *dsn, logger, *allowPrivate, cls, *public)
	if err != nil {
		return err
	}
	metricsCtx, stopMetrics := context.WithCancel(ctx)
	defer stopMetrics()
	metricsDone, err := serveMetrics(metricsCtx, *metricsAddr, pl, stdout, logger)
	if err != nil {
		return err
	}
	defer func() { stopMetrics(); metricsDone() }()
	fmt.Fprintf(stdout, "leadline runner and webhook worker working on %s database %s\n", d.Engine, redact(*dsn))
	startWork(ctx, pl, opts, logger)()
	return nil
}

func cmdSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("simulate")
	file := fs.String("f", "", "setup YAML file")
	days := fs.Int("days", 30, "days to simulate")
	seed := fs.Int64("seed", 1, "seed of the sandbox network and the synthetic leads")
	n := fs.Int("leads", 2000, "synthetic leads per workspace")
	start := fs.String("start", "", "first simulated day, YYYY-MM-DD (default today), from local midnight in the workspace's timezone")
	tick := fs.Duration("tick", simulate.DefaultTick, "how often the simulated runner looks for due work, in simulated time: it acts up to that late (leadline work's default tick is "+engine.DefaultTick.String()+"; 0: at every due moment, slower)")
	ratesText := fs.String("rates", "", "the sandbox's outcome chances over its defaults, e.g. bounce=0.08,accept=0.05 (accept, reply, auto_reply, bounce)")
	variantRates := map[string]sandbox.VariantRate{}
	fs.Func("variant-rate", "a step's variant answered at its own rates, STEP/VARIANT=reply:0.10,accept:0.40 (repeatable): a simulated A/B test",
		func(v string) error { return sandbox.ParseVariantRate(v, variantRates) })
	if err := parse(fs, args); err != nil {
		return err
	}
	if *file == "" {
		return usageError{"simulate: -f setup.yaml is required"}
	}
	rates, err := sandbox.ParseRates(*ratesText, sandbox.DefaultRates)
	if err != nil {
		return usageError{"simulate: " + err.Error()}
	}
	rates.Variants = variantRates
	if *days < 1 || *n < 0 {
		return usageError{"simulate: --days must be 1 or more and --leads 0 or more"}
	}
	if *tick < 0 || *tick > 5*time.Minute {
		return usageError{"simulate: --tick must be between 0 (every due moment) and 5m"}
	}
	if *tick == 0 {
		*tick = -1
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
	began := time.Now()
	res, err := simulate.Run(ctx, simulate.Config{DB: d, Setup: parsed, Days: *days, Seed: *seed, Leads: *n, Start: *start,
		Tick: *tick, Rates: rates, Out: stdout, Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), Key: key})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nDone in %s. `leadline serve --db %s` shows it all through the API.\n", time.Since(began).Round(time.Millisecond), *dsn)
	if err := simulateKeys(ctx, d, parsed, *dsn, stdout); err != nil {
		return err
	}
	if len(res.Violations) > 0 {
		return fmt.Errorf("the audit found %d violations", len(res.Violations))
	}
	return nil
}

// simulateKeys prints a manager key for each workspace of a simulation,
// acting as its first owner or manager, so that the database it made can
// be read through the API at once; running simulate again replaces them.
// A workspace whose file names no owner or manager gets the command that
// makes a key instead.
func simulateKeys(ctx context.Context, d *db.DB, f setup.File, dsn string, stdout io.Writer) error {
	ws := workspace.NewService(d, apikit.SystemClock{})
	var example string
	for _, spec := range f.Workspaces {
		holder := keyHolder(spec)
		if holder == "" {
			fmt.Fprintf(stdout, "Workspace %s has no active owner or manager to hold a key: add one under members, apply the file, then run\n"+
				"  leadline keys create --db %s --workspace %s --member EMAIL --role manager\n", spec.Name, dsn, spec.Name)
			continue
		}
		secrets, _, err := renewKeys(ctx, ws, spec.Name, "simulate ", []workspace.KeyInput{{Name: "manager", MemberEmail: holder, Role: apikit.RoleManager}})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Manager key of workspace %s (acting as %s; shown once, replaced when simulate runs again): %s\n", spec.Name, holder, secrets[0])
		if example == "" {
			example = secrets[0]
		}
	}
	if example != "" {
		fmt.Fprintf(stdout, "Try, with the server running:\n  curl -s -H 'Authorization: Bearer %s' http://127.0.0.1:8080/v1/sequences\n", example)
	}
	return nil
}

func cmdEvents(ctx context.Context, args []string, stdout io.Writer) error {
	if err := onlySubcommand(args, "events", "export", eventsHelp); err != nil {
		return err
	}
	fs, dsn := newFlags("events export")
	name := fs.String("workspace", "", "workspace name")
	since := fs.String("since", "", "only events at or after this time (RFC 3339 or YYYY-MM-DD)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *name == "" {
		return usageError{"events export: --workspace is required"}
	}
	var from time.Time
	if *since != "" {
		t, err := time.Parse(time.RFC3339, *since)
		if err != nil {
			if t, err = time.Parse(time.DateOnly, *since); err != nil {
				return usageError{fmt.Sprintf("events export: --since %q is not RFC 3339 or YYYY-MM-DD", *since)}
			}
		}
		from = t
	}
	d, w, err := openWorkspace(ctx, *dsn, *name)
	if err != nil {
		return err
	}
	defer d.Close()
	return events.NewLog(d, apikit.SystemClock{}).Export(ctx, w.ID, from, stdout)
}

const eventsHelp = `Usage: leadline events export --workspace NAME [--since T] [--db …]

Writes the workspace's activity log as NDJSON, oldest first, one event a line:
id, at, kind, lead_id, sender_id, sequence_id, enrollment_id, step_id and data.
`

func cmdReports(ctx context.Context, args []string, stdout io.Writer) error {
	if err := onlySubcommand(args, "reports", "rebuild", reportsHelp); err != nil {
		return err
	}
	fs, dsn := newFlags("reports rebuild")
	name := fs.String("workspace", "", "workspace name")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *name == "" {
		return usageError{"reports rebuild: --workspace is required"}
	}
	d, w, err := openWorkspace(ctx, *dsn, *name)
	if err != nil {
		return err
	}
	defer d.Close()
	start := time.Now()
	n, err := platform.New(platform.Config{DB: d}).Reports.Rebuild(ctx, w.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Rebuilt the report rollups of %s from %d events in %s.\n", w.Name, n, time.Since(start).Round(time.Millisecond))
	return nil
}

const reportsHelp = `Usage: leadline reports rebuild --workspace NAME [--db …]

Recomputes the workspace's report rollups from its activity log, with the
code that keeps them as events are written, in one transaction: after a
change of the workspace's timezone, or to check the live rollups. On
Postgres, stop the server and the workers of the workspace while it runs.
`

// onlySubcommand checks that args start with sub, the one subcommand of
// cmd; --help asks for help.
func onlySubcommand(args []string, cmd, sub, help string) error {
	if len(args) > 0 && args[0] == sub {
		return nil
	}
	if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
		return &helpRequest{text: help}
	}
	return usageError{cmd + ": the only subcommand is " + sub}
}

// openWorkspace opens the existing database at dsn and finds the workspace
// name in it.
func openWorkspace(ctx context.Context, dsn, name string) (*db.DB, *workspace.Workspace, error) {
	d, err := openExisting(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	w, err := workspace.NewService(d, apikit.SystemClock{}).ByName(ctx, name)
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	return d, w, nil
}
