// Package simulate runs leadline's real engine on a simulated clock: it
// applies a setup file, generates synthetic leads, enrols them through the
// real preview and commit, activates the sequences and runs the real
// runner against the sandbox network for a number of days, jumping the
// clock from one due moment to the next. Everything is written to the
// database, so that the API shows it afterwards. The sandbox's own counts
// audit the run.
package simulate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/workspace"
)

// Config is one simulation.
type Config struct {
	DB    *db.DB
	Setup setup.File
	Days  int
	Seed  int64
	// Leads is how many synthetic leads each workspace of the file gets.
	Leads int
	// Start is the first simulated day, YYYY-MM-DD; the clock starts at
	// local midnight in the (first) workspace's timezone. Empty: today.
	Start string
	Rates sandbox.Rates
	// Out receives the summary and the audit; nil discards them.
	Out io.Writer
	// Logger receives the runner's errors; nil discards them.
	Logger *slog.Logger
	// Key seals the secrets the setup file gives (bookings); the zero Key
	// refuses them.
	Key secret.Key
	// Tick is how often the simulated runner looks for due work, in
	// simulated time (0: DefaultTick; below 0: at every due moment); it
	// acts up to that late.
	Tick time.Duration
}

// DefaultTick is the simulated runner's tick. Coarser than a real
// runner's (engine.DefaultTick), so that the clock stops less often and a
// tick's enrollments share their transactions; the senders' plans allow
// for it (engine/pace.go), so a month does the same within a few actions
// in a thousand (docs/performance/2026-11-29-tick.md).
const DefaultTick = 30 * time.Second

// Result is what a simulation did and what the sandbox saw.
type Result struct {
	Start, End  time.Time
	Actions     int
	Violations  []sandbox.Violation
	Performed   []sandbox.Performed
	Accepted    int
	Replies     int
	AutoReplies int
	Bounces     int
	Runs        int
	// Threads, the replies read per intent and the tasks still open: what
	// the inbox and the task list show after the run.
	Threads   int
	Intents   map[string]int
	OpenTasks int
	Meetings  int
	// Stopped counts the senders a guard stopped at the end, by the
	// guard's code (low_acceptance_rate, high_bounce_rate).
	Stopped map[string]int
	// Variants are the numbers of every step's variants at the end.
	Variants []VariantLine
	// Rules is what the sequences' rules did (on_reply, on_meeting_booked).
	Rules RuleCounts
	// Phases is the wall time each part of the simulation took.
	Phases Phases
}

// Phases is the wall time of a simulation's parts: generating the leads,
// enrolling them, and running the simulated days.
type Phases struct {
	Leads, Enroll, Run time.Duration
	// Runner splits Run by the runner's parts.
	Runner engine.Spent
}

func (p Phases) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	return fmt.Sprintf("leads %s, enrolment %s, runner %s (checks %s, steps %s, claims %s, next due %s, inbound %s)",
		r(p.Leads), r(p.Enroll), r(p.Run), r(p.Runner.Checks), r(p.Runner.Runs), r(p.Runner.Claims), r(p.Runner.NextDue), r(p.Runner.Ingest))
}

// Run runs the simulation.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Setup.Workspaces) == 0 {
		return nil, fmt.Errorf("the setup file has no workspace")
	}
	tz := cfg.Setup.Workspaces[0].Timezone
	if tz == "" {
		tz = "UTC"
	}
	loc, err := apikit.LoadTimezone(tz)
	if err != nil {
		return nil, err
	}
	day := time.Now().In(loc)
	if cfg.Start != "" {
		if day, err = time.ParseInLocation(time.DateOnly, cfg.Start, loc); err != nil {
			return nil, fmt.Errorf("--start %q is not a date (YYYY-MM-DD)", cfg.Start)
		}
	}
	start := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc).UTC()
	end := time.Date(day.Year(), day.Month(), day.Day()+cfg.Days, 0, 0, 0, 0, loc).UTC()
	clock := apikit.NewFakeClock(start)
	d := cfg.DB
	if _, err := setup.Apply(ctx, d, clock, cfg.Key, cfg.Setup); err != nil {
		return nil, err
	}
	pl := platform.New(platform.Config{DB: d, Clock: clock, Logger: cfg.Logger})
	ws, ls, ss, qs, es := pl.Workspaces, pl.Leads, pl.Senders, pl.Sequences, pl.Enrollments
	net := sandbox.New(cfg.Seed, clock, cfg.Rates)
	pl.UseTransports(map[string]senders.Transport{senders.TransportSandbox: net})
	runner := pl.Runner()
	runner.Cadence = cmp.Or(cfg.Tick, DefaultTick)
	if cfg.Tick < 0 {
		runner.Cadence = 0 // exact: the clock stops at every due moment
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 2026))

	type dncAt struct {
		at     time.Time
		p      apikit.Principal
		leadID string
	}
	var dncs []dncAt
	var phases Phases
	for _, spec := range cfg.Setup.Workspaces {
		w, err := ws.ByName(ctx, spec.Name)
		if err != nil {
			return nil, err
		}
		p := apikit.Principal{WorkspaceID: w.ID, WorkspaceName: w.Name, Role: apikit.RoleOwner}
		all, err := ss.All(ctx, w.ID)
		if err != nil {
			return nil, err
		}
		for _, s := range all {
			net.Register(s)
		}
		cat, err := ws.Catalog(ctx, p)
		if err != nil {
			return nil, err
		}
		blacklisted := ""
		if len(spec.Blacklist.Companies) > 0 {
			blacklisted = spec.Blacklist.Companies[0]
		}
		began := time.Now()
		byClient, err := generate(ctx, cfg.DB, ls, p, cat.Clients, cfg.Leads, blacklisted, rng, w.Name)
		if err != nil {
			return nil, err
		}
		phases.Leads += time.Since(began)
		began = time.Now()
		fmt.Fprintf(cfg.Out, "workspace %s: %d leads generated\n", w.Name, cfg.Leads)
		// Leads go to the sequences of their client, in turn.
		perSeq := map[string][]string{}
		for client, ids := range byClient {
			var names []string
			for _, qspec := range spec.Sequences {
				if qspec.Client == client {
					names = append(names, qspec.Name)
				}
			}
			for i, id := range ids {
				if len(names) > 0 {
					perSeq[names[i%len(names)]] = append(perSeq[names[i%len(names)]], id)
				}
			}
		}
		for _, qspec := range spec.Sequences {
			q, err := qs.ByName(ctx, w.ID, qspec.Name)
			if err != nil {
				return nil, err
			}
			ids := perSeq[qspec.Name]
			enrolled, excluded := 0, map[string]int{}
			for s := 0; s < len(ids); s += enrollments.MaxLeadIDs {
				part := ids[s:min(s+enrollments.MaxLeadIDs, len(ids))]
				pv, err := es.Preview(ctx, p, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: part})
				if err != nil {
					return nil, err
				}
				if len(pv.EligibleIDs) == 0 {
					continue
				}
				res, err := es.Commit(ctx, p, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: pv.EligibleIDs, Confirm: true})
				if err != nil {
					return nil, err
				}
				enrolled += res.Enrolled
				for _, x := range pv.Excluded {
					excluded[x.Reason]++
				}
				for _, id := range pv.EligibleIDs {
					if rng.IntN(100) == 0 {
						at := start.Add(time.Duration(rng.Int64N(int64(end.Sub(start)))))
						dncs = append(dncs, dncAt{at: at.Truncate(time.Second), p: p, leadID: id})
					}
				}
			}
			if err := qs.ActivateByName(ctx, w.ID, qspec.Name); err != nil {
				return nil, err
			}
			fmt.Fprintf(cfg.Out, "workspace %s: sequence %s: %d enrolled, excluded %v\n", w.Name, qspec.Name, enrolled, excluded)
		}
		phases.Enroll += time.Since(began)
	}
	sort.Slice(dncs, func(i, j int) bool { return dncs[i].at.Before(dncs[j].at) })

	res := &Result{Start: start, End: end}
	began := time.Now()
	res.Runs, err = Until(ctx, runner, clock, end, func(now time.Time) (time.Time, error) {
		for len(dncs) > 0 && !dncs[0].at.After(now) {
			dn := dncs[0]
			dncs = dncs[1:]
			if _, err := ls.Suppress(ctx, dn.p, dn.leadID); err != nil {
				return time.Time{}, err
			}
			net.MarkDoNotContact(dn.leadID, now)
		}
		if len(dncs) > 0 {
			return dncs[0].at, nil
		}
		return time.Time{}, nil
	})
	if err != nil {
		return nil, err
	}
	phases.Run = time.Since(began)
	phases.Runner = runner.Spent()
	res.Phases = phases
	clock.Set(end)
	res.Performed = net.Performed()
	res.Violations = net.Violations()
	res.Actions = len(res.Performed)
	res.Stopped = map[string]int{}
	for _, spec := range cfg.Setup.Workspaces {
		w, _ := ws.ByName(ctx, spec.Name)
		all, err := ss.All(ctx, w.ID)
		if err != nil {
			return nil, err
		}
		for _, s := range all {
			for _, r := range s.HealthReasons {
				if slices.Contains(senders.StopCodes, r.Code) {
					res.Stopped[r.Code]++
				}
			}
		}
		lines, bad, err := variantAudit(ctx, d, qs, w.ID, res.Performed)
		if err != nil {
			return nil, err
		}
		res.Variants = append(res.Variants, lines...)
		res.Violations = append(res.Violations, bad...)
		rc, bad, err := ruleAudit(ctx, d, w.ID, spec.Blacklist.Companies)
		if err != nil {
			return nil, err
		}
		res.Rules.Runs += rc.Runs
		res.Rules.Enrolled += rc.Enrolled
		res.Violations = append(res.Violations, bad...)
		var counts []struct {
			Kind string `bun:"kind"`
			N    int    `bun:"n"`
		}
		if err := d.NewSelect().Table("events").Column("kind").ColumnExpr("count(*) AS n").
			Where("workspace_id = ? AND kind IN (?)", w.ID, bun.In([]string{enrollments.EventInviteAccepted, enrollments.EventEmailBounced})).
			Group("kind").Scan(ctx, &counts); err != nil {
			return nil, err
		}
		for _, c := range counts {
			switch c.Kind {
			case enrollments.EventInviteAccepted:
				res.Accepted += c.N
			case enrollments.EventEmailBounced:
				res.Bounces += c.N
			}
		}
		var replies []struct {
			Data map[string]any `bun:"data,type:jsonb"`
		}
		if err := d.NewSelect().Table("events").Column("data").Where("workspace_id = ? AND kind = ?", w.ID, inbox.EventReplyReceived).
			Scan(ctx, &replies); err != nil {
			return nil, err
		}
		for _, r := range replies {
			if r.Data["auto_reply"] == true {
				res.AutoReplies++
			} else {
				res.Replies++
			}
		}
	}
	if err := inboxCounts(ctx, d, res); err != nil {
		return nil, err
	}
	report(ctx, cfg.Out, d, res)
	return res, nil
}

// inboxCounts counts the threads, the replies per intent and the open tasks.
func inboxCounts(ctx context.Context, d *db.DB, res *Result) error {
	threads, err := d.NewSelect().Table("threads").Count(ctx)
	if err != nil {
		return err
	}
	open, err := d.NewSelect().Table("tasks").Where("status = ?", "open").Count(ctx)
	if err != nil {
		return err
	}
	meetings, err := d.NewSelect().Table("events").Where("kind = ?", "meeting.booked").Count(ctx)
	if err != nil {
		return err
	}
	res.Threads, res.OpenTasks, res.Meetings = int(threads), int(open), int(meetings)
	var intents []struct {
		Intent string `bun:"intent"`
		N      int    `bun:"n"`
	}
	if err := d.NewSelect().Table("messages").Column("intent").ColumnExpr("count(*) AS n").Where("direction = ?", "in").
		Group("intent").Scan(ctx, &intents); err != nil {
		return err
	}
	res.Intents = map[string]int{}
	for _, c := range intents {
		res.Intents[c.Intent] = c.N
	}
	return nil
}

// Until runs the runner on a simulated clock until end: it ticks, then
// jumps the clock to the next moment anything is due (an enrollment, an
// inbound event, or what before asks for), instead of waiting. before runs
// ahead of every tick with the clock's time and returns the next moment it
// needs (zero for none). It returns how many enrollment runs happened and
// leaves the clock at end.
func Until(ctx context.Context, r *engine.Runner, clock *apikit.FakeClock, end time.Time, before func(now time.Time) (time.Time, error)) (int, error) {
	runs := 0
	for {
		want := time.Time{}
		if before != nil {
			var err error
			if want, err = before(clock.Now()); err != nil {
				return runs, err
			}
		}
		n, err := r.Tick(ctx)
		if err != nil {
			return runs, err
		}
		runs += n
		next, ok, err := r.NextDue(ctx)
		if err != nil {
			return runs, err
		}
		if !want.IsZero() && (!ok || want.Before(next)) {
			next, ok = want, true
		}
		if !ok || !next.Before(end) {
			// A last tick at the end runs the checks on the final state.
			clock.Set(end)
			n, err := r.Tick(ctx)
			return runs + n, err
		}
		if tick := r.Cadence; tick > 0 && next.Before(clock.Now().Add(tick)) {
			// The runner looks again a tick later, as a real one does.
			next = clock.Now().Add(tick)
		}
		if next.After(clock.Now()) {
			clock.Set(next)
		}
		if err := ctx.Err(); err != nil {
			return runs, err
		}
	}
}

// generate creates n synthetic leads spread over the clients, through the
// leads service, and returns their ids by client name. One in a hundred
// works for the blacklisted company. The leads are drawn from rng in order
// first, so that a seed gives the same leads however they are written.
// Then they are created 256 to a transaction through the import's batch
// (leads.Batch: Upsert's rule, with its reads ahead and bulk writes): by
// one writer on SQLite, which has one anyway; on Postgres by one writer
// per client (up to generateWriters), so that no two writers share a
// client's lead count row, which the leads' triggers keep.
func generate(ctx context.Context, d *db.DB, ls *leads.Service, p apikit.Principal, clients []workspace.Named, n int, blacklisted string,
	rng *rand.Rand, wsName string) (map[string][]string, error) {
	ins, names := draw(clients, n, blacklisted, rng, wsName)
	writers := 1
	if d.Engine == db.Postgres {
		writers = max(1, min(generateWriters, len(clients)))
	}
	// Writer w creates the leads of the clients i with i % writers == w.
	parts := make([][]int, writers)
	for i := range ins {
		w := 0
		if len(clients) > 0 {
			w = (i % len(clients)) % writers
		}
		parts[w] = append(parts[w], i)
	}
	ids := make([]string, n)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w, part := range parts {
		wg.Go(func() {
			b, err := ls.NewBatch(ctx, p, leads.BatchOptions{})
			if err != nil {
				errs[w] = err
				return
			}
			batch := make([]leads.LeadInput, 0, 256)
			for start := 0; start < len(part) && errs[w] == nil; start += 256 {
				batch = batch[:0]
				for _, i := range part[start:min(start+256, len(part))] {
					batch = append(batch, ins[i])
				}
				res, err := b.Upsert(ctx, batch)
				if err != nil {
					errs[w] = err
					return
				}
				for k, i := range part[start:min(start+256, len(part))] {
					if res[k].Err != nil {
						errs[w] = fmt.Errorf("lead %d: %w", i, res[k].Err)
						return
					}
					ids[i] = res[k].LeadID
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for i, id := range ids {
		out[names[i]] = append(out[names[i]], id)
	}
	return out, nil
}

// generateWriters bounds the writers that create the leads on Postgres.
const generateWriters = 8

// draw draws n synthetic leads and the name of each one's client.
func draw(clients []workspace.Named, n int, blacklisted string, rng *rand.Rand, wsName string) ([]leads.LeadInput, []string) {
	first := []string{"Anna", "Ben", "Clara", "David", "Elif", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Lars", "Mona", "Nils", "Olga", "Paul"}
	last := []string{"Schmidt", "Dubois", "Okafor", "Novak", "Rossi", "Kowalski", "Haddad", "Larsen", "Moreau", "Tanaka", "Weber", "Silva"}
	companies := []string{"Northwind", "Contoso", "Fabrikam", "Tailspin", "Wingtip", "Litware", "Proseware", "Adatum", "Lucerne", "Trey Research"}
	titles := []string{"CTO", "VP Engineering", "CFO", "Head of Sales", "Founder & CEO", "Head of Growth"}
	str := func(s string) *string { return &s }
	ins, names := make([]leads.LeadInput, n), make([]string, n)
	for i := range n {
		f, l, c := first[rng.IntN(len(first))], last[rng.IntN(len(last))], companies[rng.IntN(len(companies))]
		if blacklisted != "" && i%100 == 50 {
			c = blacklisted
		}
		slug := strings.ToLower(fmt.Sprintf("%s-%s-%s-%d", f, l, wsName, i))
		in := leads.LeadInput{LinkedInID: str("sim-" + slug), PublicIdentifier: str(slug), Name: str(f + " " + l), Company: str(c),
			Headline: str(titles[rng.IntN(len(titles))] + " at " + c), Source: str("simulation"),
			EmailWork: str(strings.ToLower(f+"."+l) + fmt.Sprintf(".%d@", i) + strings.ToLower(strings.ReplaceAll(c, " ", "")) + ".test"),
			Custom:    map[string]any{"topic": []string{"platform teams", "hiring", "cloud costs"}[rng.IntN(3)]}}
		if len(clients) > 0 {
			cl := clients[i%len(clients)]
			in.ClientID, names[i] = &cl.ID, cl.Name
		}
		ins[i] = in
	}
	return ins, names
}

// report prints actions per day and per sender, outcomes and the audit.
func report(ctx context.Context, w io.Writer, d *db.DB, res *Result) {
	names := map[string]string{}
	var all []struct {
		ID   string `bun:"id"`
		Name string `bun:"name"`
	}
	_ = d.NewSelect().Table("senders").Column("id", "name").Scan(ctx, &all)
	for _, x := range all {
		names[x.ID] = x.Name
	}
	perDay := map[string]map[senders.Action]int{}
	perSender := map[string]map[senders.Action]int{}
	for _, p := range res.Performed {
		if perDay[p.Day] == nil {
			perDay[p.Day] = map[senders.Action]int{}
		}
		perDay[p.Day][p.Action]++
		if perSender[p.SenderID] == nil {
			perSender[p.SenderID] = map[senders.Action]int{}
		}
		perSender[p.SenderID][p.Action]++
	}
	header := func(first string) {
		fmt.Fprintf(w, "%-20s", first)
		for _, a := range senders.Actions {
			fmt.Fprintf(w, " %12s", a)
		}
		fmt.Fprintln(w)
	}
	row := func(label string, m map[senders.Action]int) {
		fmt.Fprintf(w, "%-20s", label)
		for _, a := range senders.Actions {
			fmt.Fprintf(w, " %12d", m[a])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nSimulated %s to %s: %d actions in %d runner steps.\n",
		res.Start.Format(time.RFC3339), res.End.Format(time.RFC3339), res.Actions, res.Runs)
	fmt.Fprintf(w, "Wall time: %s.\n\nActions per day (sender's local day):\n", res.Phases)
	header("day")
	days := slices.Sorted(func(yield func(string) bool) {
		for k := range perDay {
			if !yield(k) {
				return
			}
		}
	})
	for _, day := range days {
		row(day, perDay[day])
	}
	fmt.Fprintf(w, "\nActions per sender:\n")
	header("sender")
	ids := slices.Sorted(func(yield func(string) bool) {
		for k := range perSender {
			if !yield(k) {
				return
			}
		}
	})
	for _, id := range ids {
		row(names[id], perSender[id])
	}
	fmt.Fprintf(w, "\nInvitations accepted: %d. Replies: %d (and %d out-of-office auto-replies). Bounces: %d.\n", res.Accepted, res.Replies, res.AutoReplies, res.Bounces)
	var intents []string
	for _, i := range slices.Sorted(maps.Keys(res.Intents)) {
		intents = append(intents, fmt.Sprintf("%s %d", i, res.Intents[i]))
	}
	fmt.Fprintf(w, "Inbox: %d threads; replies read as %s. Open tasks: %d. Meetings booked: %d.\n", res.Threads, strings.Join(intents, ", "),
		res.OpenTasks, res.Meetings)
	var stopped []string
	for _, code := range slices.Sorted(maps.Keys(res.Stopped)) {
		stopped = append(stopped, fmt.Sprintf("%s %d", code, res.Stopped[code]))
	}
	if len(stopped) == 0 {
		stopped = []string{"none"}
	}
	fmt.Fprintf(w, "Guards: senders stopped at the end: %s.\n", strings.Join(stopped, ", "))
	variantReport(w, res.Variants)
	if res.Rules.Runs > 0 {
		fmt.Fprintf(w, "\nReplies that moved leads on: %d rule runs, %d enrollments made by rules.\n", res.Rules.Runs, res.Rules.Enrolled)
	}
	fmt.Fprintf(w, "\nAudit by the sandbox's own counts (caps, 7-day invitations, warm-up, schedule, spacing, hourly caps, holidays, withdrawals, do-not-contact, blacklist, reply-stop), the variants' numbers and what the rules enrolled:\n")
	if len(res.Violations) == 0 {
		fmt.Fprintln(w, "  0 violations.")
		return
	}
	byRule := map[string]int{}
	for _, v := range res.Violations {
		byRule[v.Rule]++
	}
	for rule, n := range byRule {
		fmt.Fprintf(w, "  %s: %d violations\n", rule, n)
	}
	for _, v := range res.Violations[:min(10, len(res.Violations))] {
		fmt.Fprintf(w, "  e.g. %s: sender %s, lead %s, %s at %s: %s\n", v.Rule, names[v.SenderID], v.LeadID, v.Action, v.At.Format(time.RFC3339), v.Detail)
	}
}
