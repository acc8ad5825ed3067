// Command custom-transport plugs a transport of its own into leadline: a
// senders.Transport that hands every action to the program (here, it
// prints it and keeps it in memory, where a real one would call a
// provider's API). platform.UseTransports makes the runner send through
// it, and members' replies too.
//
// leadline's setup names a sender's transport by one of the kinds it knows
// (sandbox, smtp, unipile); a program serves a kind with its own
// implementation. Here the senders are declared on the sandbox kind and
// the program's transport takes the sandbox's place.
//
//	go run ./examples/custom-transport --db custom.db
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/workspace"
)

// Printer is a transport that performs every action by printing it. It
// keeps what it performed by the action's idempotency key: a key is
// performed at most once, and Lookup finds it after a restart of the
// runner (a real transport asks its provider).
type Printer struct {
	Out   io.Writer
	Clock apikit.Clock

	mu   sync.Mutex
	done map[string]senders.Result
}

// NewPrinter returns a Printer that writes to out.
func NewPrinter(out io.Writer, clock apikit.Clock) *Printer {
	return &Printer{Out: out, Clock: clock, done: map[string]senders.Result{}}
}

// Perform performs req once per key.
func (p *Printer) Perform(ctx context.Context, req senders.Request) (senders.Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.done[req.Key]; ok {
		return r, nil
	}
	if req.Lead.LinkedInID == "" && req.Lead.Email == "" {
		// Not performed, and never will be: the runner records the step
		// as failed for this lead.
		return senders.Result{}, &senders.TransportError{Kind: senders.Permanent, Code: "no_address", Message: "the lead has no address"}
	}
	r := senders.Result{ProviderMessageID: "printer-" + req.Key, At: p.Clock.Now()}
	fmt.Fprintf(p.Out, "%s %s -> %s %q\n", req.Sender.Name, req.Action, req.Lead.Name, firstLine(req.Note+req.Body))
	p.done[req.Key] = r
	return r, nil
}

// Lookup returns what Perform did under req.Key.
func (p *Printer) Lookup(ctx context.Context, req senders.Request) (senders.Result, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.done[req.Key]
	return r, ok, nil
}

// Inbound reports what happened outside: nothing, for a printer.
func (p *Printer) Inbound(ctx context.Context, until time.Time) ([]senders.Inbound, error) {
	return nil, nil
}

// NextInbound says when the next inbound event is due: never.
func (p *Printer) NextInbound() (time.Time, bool) { return time.Time{}, false }

// Performed returns how many actions the printer performed.
func (p *Printer) Performed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.done)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

const setupFile = `
workspaces:
  - name: printer
    timezone: UTC
    members: [{email: owner@printer.test, role: owner}]
    clients: [Initech]
    senders:
      - {name: pat, channel: linkedin, client: Initech, schedule: {mon-sun: ["00:00-24:00"]}}
    sequences:
      - name: Hello
        client: Initech
        senders: [pat]
        steps:
          - {id: visit, type: profile_view}
          - {id: invite, type: invite, note_fallback: without_note, note: "Hi {{first_name}}, glad to connect."}
`

// run sets up a workspace on dsn, enrols leads and runs the runner
// through the printer for a few ticks of clock.
func run(ctx context.Context, dsn string, clock apikit.Clock, tr *Printer, ticks int) error {
	d, err := platform.OpenStore(ctx, dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	pl := platform.New(platform.Config{DB: d, Clock: clock})
	// The program's transport serves the sandbox kind.
	pl.UseTransports(map[string]senders.Transport{senders.TransportSandbox: tr})

	f, err := setup.Decode(strings.NewReader(setupFile))
	if err != nil {
		return err
	}
	if _, err := setup.Apply(ctx, d, clock, pl.SecretKey, f); err != nil {
		return err
	}
	_, key, err := pl.Workspaces.CreateKey(ctx, workspace.KeyInput{Workspace: "printer", MemberEmail: "owner@printer.test", Role: apikit.RoleManager})
	if err != nil {
		return err
	}
	p, err := pl.Workspaces.Authenticate(ctx, key)
	if err != nil {
		return err
	}
	cat, err := pl.Workspaces.Catalog(ctx, p)
	if err != nil {
		return err
	}
	var ids []string
	for _, name := range []string{"Bill Lumbergh", "Peter Gibbons"} {
		res, err := pl.Leads.Upsert(ctx, p, leads.LeadInput{Name: new(name), ClientID: new(cat.Clients[0].ID),
			LinkedInID: new(strings.ToLower(strings.ReplaceAll(name, " ", "-")))})
		if err != nil {
			return err
		}
		ids = append(ids, res.Lead.ID)
	}
	seqs, err := pl.Sequences.List(ctx, p, sequences.Filter{Limit: 1})
	if err != nil {
		return err
	}
	seq := seqs.Data[0].ID
	if _, err := pl.Sequences.Activate(ctx, p, seq); err != nil {
		return err
	}
	if _, err := pl.Enrollments.Commit(ctx, p, enrollments.EnrollInput{SequenceID: seq, LeadIDs: ids, Confirm: true}); err != nil {
		return err
	}
	runner := pl.Runner()
	for range ticks {
		if _, err := runner.Tick(ctx); err != nil {
			return err
		}
		if fc, ok := clock.(*apikit.FakeClock); ok {
			fc.Advance(time.Hour)
		} else {
			time.Sleep(time.Second)
		}
	}
	return nil
}

func main() {
	dsn := flag.String("db", "custom.db", "database: a SQLite file or a postgres:// URL")
	ticks := flag.Int("ticks", 30, "how many runner ticks to run")
	flag.Parse()
	tr := NewPrinter(os.Stdout, apikit.SystemClock{})
	if err := run(context.Background(), *dsn, apikit.SystemClock{}, tr, *ticks); err != nil {
		log.Fatal(err)
	}
	log.Printf("the printer performed %d actions", tr.Performed())
}
