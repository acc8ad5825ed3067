// Command custom-transport plugs a transport of its own into leadline,
// as leadline's own transports are plugged in: a senders.Plugin,
// registered in the package's init, declares the kind "printer" (the
// channel, the actions, the settings section its senders take and how
// they are checked) and builds a senders.Transport that hands every
// action to the program (here, it prints it and keeps it in memory, where
// a real one would call a provider's API). A setup file's sender names
// the kind (transport: printer) with its section (printer: {prefix: …});
// platform.Transports builds it beside the built-in ones, and the runner
// sends through it, and members' replies too.
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
	set, err := senders.Section[Settings](req.Sender.Settings, Kind)
	if err != nil || set == nil {
		return senders.Result{}, &senders.TransportError{Kind: senders.SenderLevel, Code: "no_settings", Signal: senders.SignalAuthFailed,
			Message: "the sender has no printer settings"}
	}
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
	fmt.Fprintf(p.Out, "%s%s %s -> %s %q\n", set.Prefix, req.Sender.Name, req.Action, req.Lead.Name, firstLine(req.Note+req.Body))
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

// Kind is the printer's transport kind, and the name of its senders'
// settings section.
const Kind = "printer"

// Settings are a printer sender's settings: its section of the setup.
type Settings struct {
	// Prefix starts every line printed.
	Prefix string `json:"prefix"`
}

// printer is the transport the plug-in hands the platform: the program
// sets it before it builds its platform's transports.
var printer *Printer

func init() {
	senders.Register(senders.Plugin{
		TransportKind: senders.TransportKind{Name: Kind, Channel: senders.LinkedIn, Actions: []senders.Action{senders.ProfileView, senders.Invite, senders.Message},
			Sections: []string{Kind},
			Check: func(set senders.Settings) error {
				s, err := senders.Section[Settings](set, Kind)
				if err != nil {
					return err
				}
				if len(s.Prefix) > 10 {
					return fmt.Errorf("printer.prefix is at most 10 characters")
				}
				return nil
			}},
		New: func(env senders.Env) senders.Transport { return printer },
	})
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
      - {name: pat, channel: linkedin, client: Initech, schedule: {mon-sun: ["00:00-24:00"]}, transport: printer, printer: {prefix: "> "}}
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
	// The plug-in's transport is built with the others.
	printer = tr
	pl.UseTransports(pl.Transports(platform.Outside{Seed: 1}))

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
