// Command embed runs leadline inside another Go program: it opens a
// store, sets up a workspace with a sender on the sandbox network, upserts
// leads, previews and enrols them, and runs the runner in process. Then it
// serves leadline's API beside the program's own huma API on one mux; the
// program's API keeps its own error format.
//
//	go run ./examples/embed --db embed.db --addr 127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/workspace"
)

// setupFile is the program's workspace: one LinkedIn sender on the
// sandbox network and a two-step sequence.
const setupFile = `
workspaces:
  - name: crm
    timezone: Europe/Berlin
    plan: pro
    members: [{email: owner@crm.test, role: owner}]
    clients: [Globex]
    senders:
      - {name: anna, channel: linkedin, client: Globex, schedule: {mon-sun: ["00:00-24:00"]}}
    sequences:
      - name: Welcome
        client: Globex
        senders: [anna]
        steps:
          - {id: visit, type: profile_view}
          - {id: invite, type: invite, note_fallback: without_note, note: "Hi {{first_name}}!"}
`

// App is the program with leadline inside.
type App struct {
	Platform *platform.Platform
	// Key is an API key of the workspace, for leadline's HTTP API.
	Key string
	// Handler serves the program's own API under /crm and leadline's
	// under /v1.
	Handler http.Handler
}

// run opens the store at dsn, does the work of a day on clock and builds
// the program's handler; it writes what it did to out.
func run(ctx context.Context, dsn string, clock apikit.Clock, out io.Writer) (*App, error) {
	d, err := platform.OpenStore(ctx, dsn)
	if err != nil {
		return nil, err
	}
	pl := platform.New(platform.Config{DB: d, Clock: clock})
	f, err := setup.Decode(strings.NewReader(setupFile))
	if err != nil {
		return nil, err
	}
	if _, err := setup.Apply(ctx, d, clock, pl.SecretKey, f); err != nil {
		return nil, err
	}
	// The services act for a principal, as API calls do: the program's
	// own key.
	_, key, err := pl.Workspaces.CreateKey(ctx, workspace.KeyInput{Workspace: "crm", MemberEmail: "owner@crm.test", Role: apikit.RoleManager, Name: "embed"})
	if err != nil {
		return nil, err
	}
	p, err := pl.Workspaces.Authenticate(ctx, key)
	if err != nil {
		return nil, err
	}

	// Upsert leads, for the client Globex.
	cat, err := pl.Workspaces.Catalog(ctx, p)
	if err != nil {
		return nil, err
	}
	globex := cat.Clients[0].ID
	var ids []string
	for _, name := range []string{"Ada Lovelace", "Grace Hopper", "Alan Turing"} {
		slug := strings.ToLower(strings.ReplaceAll(name, " ", "-"))
		res, err := pl.Leads.Upsert(ctx, p, leads.LeadInput{Name: new(name), LinkedInID: new(slug), ClientID: new(globex)})
		if err != nil {
			return nil, err
		}
		ids = append(ids, res.Lead.ID)
	}
	fmt.Fprintf(out, "upserted %d leads\n", len(ids))

	// Preview, activate and enrol.
	seqs, err := pl.Sequences.List(ctx, p, sequences.Filter{Limit: 10})
	if err != nil {
		return nil, err
	}
	seq := seqs.Data[0].ID
	pv, err := pl.Enrollments.Preview(ctx, p, enrollments.EnrollInput{SequenceID: seq, LeadIDs: ids})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "preview: %d eligible, %d excluded\n", len(pv.EligibleIDs), len(pv.Excluded))
	if _, err := pl.Sequences.Activate(ctx, p, seq); err != nil {
		return nil, err
	}
	res, err := pl.Enrollments.Commit(ctx, p, enrollments.EnrollInput{SequenceID: seq, LeadIDs: pv.EligibleIDs, Confirm: true})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "enrolled %d\n", res.Enrolled)

	// Run the runner on the sandbox network, in process.
	pl.UseTransports(pl.Transports(platform.Outside{Seed: 1}))
	runner := pl.Runner()
	ran := 0
	for range 5 {
		n, err := runner.Tick(ctx)
		if err != nil {
			return nil, err
		}
		ran += n
		if fc, ok := clock.(*apikit.FakeClock); ok {
			fc.Advance(10 * time.Minute) // a test's clock; a real one moves on its own
		}
	}
	fmt.Fprintf(out, "runner: %d steps\n", ran)

	return &App{Platform: pl, Key: key, Handler: mount(pl)}, nil
}

// Greeting is the program's own API's answer.
type Greeting struct {
	Body struct {
		Message string `json:"message"`
	}
}

// mount serves the program's own huma API and leadline's on one mux.
func mount(pl *platform.Platform) http.Handler {
	mux := http.NewServeMux()
	crm := humago.New(mux, huma.DefaultConfig("CRM", "1.0.0"))
	huma.Register(crm, huma.Operation{OperationID: "greet", Method: http.MethodGet, Path: "/crm/greet"},
		func(ctx context.Context, in *struct {
			Name string `query:"name" minLength:"1" maxLength:"20" required:"true"`
		}) (*Greeting, error) {
			if in.Name == "nobody" {
				return nil, huma.Error404NotFound("no such person")
			}
			out := &Greeting{}
			out.Body.Message = "Hello, " + in.Name
			return out, nil
		})
	// leadline's API answers under /v1 (and its providers' webhooks under
	// /inbound, unsubscribe links under /unsubscribe).
	api := server.New(server.Config{Platform: pl}).Handler()
	for _, prefix := range []string{"/v1/", "/inbound/", "/unsubscribe/"} {
		mux.Handle(prefix, api)
	}
	return mux
}

func main() {
	dsn := flag.String("db", "embed.db", "database: a SQLite file or a postgres:// URL")
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	ctx := context.Background()
	app, err := run(ctx, *dsn, apikit.SystemClock{}, log.Writer())
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving the CRM's API at http://%s/crm/greet?name=you and leadline's at http://%s/v1 (key %s)", *addr, *addr, app.Key)
	log.Fatal(http.ListenAndServe(*addr, app.Handler))
}
