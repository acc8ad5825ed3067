package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/console"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/reports"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/simulate"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/workspace"
)

// demoWorkspace is the demo workspace: an agency working for two clients.
var demoWorkspace = workspace.WorkspaceSpec{
	Name: "demo", Timezone: "Europe/Berlin", Plan: apikit.PlanPro,
	Members: []workspace.MemberSpec{
		{Email: "owner@demo.test", Role: apikit.RoleOwner},
		{Email: "manager@demo.test", Role: apikit.RoleManager},
		{Email: "sdr@demo.test", Role: apikit.RoleMember},
		{Email: "viewer@globex.test", Role: apikit.RoleClientViewer},
	},
	Clients:   []string{"Globex", "Initech"},
	Stages:    []string{"New", "Contacted", "Replied", "Meeting booked", "Won", "Lost"},
	Tags:      []string{"vip", "event-2026", "hiring", "competitor-user", "warm-intro"},
	Lists:     []string{"Berlin CTOs", "Paris CFOs", "London Heads of Sales"},
	Blacklist: workspace.BlacklistSpec{Companies: []string{"Umbrella"}, Domains: []string{"umbrella.test"}},
}

// demoEngine are the demo's senders and sequences: two LinkedIn senders and
// a mailbox for Globex, and two sequences, of which Globex's is active.
const demoEngine = `
senders:
  - {name: anna, channel: linkedin, client: Globex, premium: true, monthly_cost: 79, caps: {invite: 25, profile_view: 60, message: 60}}
  - {name: ben, channel: linkedin, client: Initech, monthly_cost: 59, timezone: Europe/London, schedule: {mon-fri: ["08:30-17:00"]}}
  - {name: globex-mail, channel: email, client: Globex, address: hello@globex.test, monthly_cost: 12}
sequences:
  - name: Globex CTOs
    client: Globex
    senders: [anna, globex-mail]
    steps:
      - {id: visit, type: profile_view}
      - {id: invite, type: invite, note: "Hi {{first_name}}, I enjoyed your work at {{company|your company}}."}
      - {id: accepted, type: condition, if: invite_accepted, within_days: 7, then: hello, else: has-mail}
      - {id: hello, type: message, body: "Thanks for connecting, {{first_name|there}}! Open to a short call?"}
      - {id: call, type: task, title: "Call {{first_name|the lead}} at {{company|their company}}", due_in_days: 2, next: end}
      - {id: has-mail, type: condition, if: has_email, then: mail, else: end}
      - {id: mail, type: email, subject: "{{company|Your team}} and Globex", body: "Hello {{first_name|there}}, ..."}
  - name: Initech founders
    client: Initech
    senders: [ben]
    steps:
      - {id: visit, type: profile_view}
      - {id: invite, type: invite, note_fallback: without_note, note: "Hi {{first_name}}!"}
`

// demoHistory is how much simulated activity a new demo workspace gets.
const demoHistory = 14 * 24 * time.Hour

const demoLeads = 300

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("demo")
	public := publicURLFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkPublicURL("demo", *public); err != nil {
		return err
	}
	d, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	// The demo's history starts two weeks ago: setup, leads and sequence
	// activity carry simulated times up to now.
	loc, _ := time.LoadLocation(demoWorkspace.Timezone)
	now := time.Now()
	startDay := now.Add(-demoHistory).In(loc)
	clock := apikit.NewFakeClock(time.Date(startDay.Year(), startDay.Month(), startDay.Day(), 0, 0, 0, 0, loc))
	var spec setup.Workspace
	if err := yaml.Unmarshal([]byte(demoEngine), &spec); err != nil {
		return err
	}
	spec.WorkspaceSpec = demoWorkspace
	key, err := secretKey(ctx, d, *dsn, cliLogger(stderr))
	if err != nil {
		return err
	}
	if _, err := setup.Apply(ctx, d, clock, key, setup.File{Workspaces: []setup.Workspace{spec}}); err != nil {
		return err
	}
	ws := workspace.NewService(d, apikit.SystemClock{})
	// Running demo again replaces its keys instead of piling them up.
	keys := []workspace.KeyInput{
		{Name: "manager", MemberEmail: "manager@demo.test", Role: apikit.RoleManager},
		{Name: "member", MemberEmail: "manager@demo.test", Role: apikit.RoleMember},
		{Name: "client_viewer", MemberEmail: "manager@demo.test", Role: apikit.RoleClientViewer},
		{Name: "globex_member", MemberEmail: "manager@demo.test", Role: apikit.RoleMember, Clients: []string{"Globex"}},
	}
	secrets, replaced, err := renewKeys(ctx, ws, "demo", "demo ", keys)
	if err != nil {
		return err
	}
	p, err := ws.Authenticate(ctx, secrets[0])
	if err != nil {
		return err
	}
	pl := platform.New(platform.Config{DB: d, Clock: clock})
	svc := pl.Leads
	pctx := apikit.WithPrincipal(ctx, p)
	if _, err := seedLeads(pctx, p, svc, ws); err != nil {
		return err
	}
	actions, err := demoActivity(pctx, pl, clock, p, now)
	if err != nil {
		return err
	}
	all, err := svc.List(pctx, p, leads.Filter{Limit: 1})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Demo workspace %q is ready with %d leads.\n", "demo", all.Total)
	if actions > 0 {
		fmt.Fprintf(stdout, "Sequence Globex CTOs (active) sent %d actions through anna and globex-mail over two simulated weeks on the sandbox network;\nInitech founders is a draft with its leads enrolled: activate it to start ben.\n", actions)
		threads, err := pl.Inbox.List(pctx, p, inbox.Filter{Limit: 1})
		if err != nil {
			return err
		}
		var read []string
		for _, i := range inbox.Intents {
			page, err := pl.Inbox.List(pctx, p, inbox.Filter{Intent: i, Limit: 1})
			if err != nil {
				return err
			}
			if page.Total > 0 {
				read = append(read, fmt.Sprintf("%d %s", page.Total, i))
			}
		}
		open, err := pl.Tasks.List(pctx, p, tasks.Filter{Status: tasks.Open, Limit: 1})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "The inbox holds %d threads; replies read as %s. %d call tasks are open.\n", threads.Total, strings.Join(read, ", "), open.Total)
		r, err := reports.NewService(d, apikit.SystemClock{}, pl.ReportAreas()).Overview(pctx, p, reports.Params{})
		if err != nil {
			return err
		}
		n := func(k string) float64 {
			if v := r.Totals[k]; v != nil {
				return *v
			}
			return 0
		}
		fmt.Fprintf(stdout, "Reports, last 30 days: %.0f actions, %.0f leads contacted, %.0f replies, %.0f meetings booked, $%.2f of sender cost.\n",
			n("sends.total"), n("leads.contacted"), n("replies"), n("meetings.booked"), n("cost.total"))
	}
	if replaced > 0 {
		fmt.Fprintf(stdout, "The %d demo keys of the earlier run were revoked; use the new ones below.\n", replaced)
	}
	fmt.Fprintf(stdout, "\nKeys (shown once; globex_member sees only the client Globex):\n")
	for i, k := range keys {
		fmt.Fprintf(stdout, "  %-14s %s\n", k.Name, secrets[i])
	}
	if err := demoConsole(ctx, stdout, ws, *public); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nTry:\n  curl -s -H 'Authorization: Bearer %s' http://127.0.0.1:8080/v1/me\n", secrets[1])
	fmt.Fprintf(stdout, "  curl -s -H 'Authorization: Bearer %s' 'http://127.0.0.1:8080/v1/threads?intent=interested'\n", secrets[1])
	fmt.Fprintf(stdout, "  curl -s -H 'Authorization: Bearer %s' 'http://127.0.0.1:8080/v1/tasks?status=open'\n", secrets[1])
	fmt.Fprintf(stdout, "  curl -s -H 'Authorization: Bearer %s' 'http://127.0.0.1:8080/v1/reports/overview?interval=week'\n", secrets[2])
	return nil
}

// demoConsole prints the console's address and invite links (valid 24
// hours) with which the demo's owner, and its client viewer limited to
// Globex, choose a password and sign in.
func demoConsole(ctx context.Context, stdout io.Writer, ws *workspace.Service, public string) error {
	base := public
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	fmt.Fprintf(stdout, "\nConsole: run `leadline serve` on this database and open %s%s/\n", base, console.DefaultPrefix)
	for _, in := range []workspace.InviteInput{
		{Workspace: "demo", Email: "owner@demo.test", Role: apikit.RoleOwner},
		{Workspace: "demo", Email: "viewer@globex.test", Role: apikit.RoleClientViewer, Clients: []string{"Globex"}},
	} {
		_, token, err := ws.Invite(ctx, in)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  sign in as %s (%s) by choosing a password at:\n    %s\n", in.Email, in.Role, console.InviteLink(public, token))
	}
	fmt.Fprintf(stdout, "  (each link works once, for 24 hours; `leadline members invite` makes more)\n")
	return nil
}

var (
	firstNames = []string{"Anna", "Ben", "Clara", "David", "Elif", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Lars", "Mona", "Nils", "Olga", "Paul", "Quinn", "Rosa", "Sami", "Tara"}
	lastNames  = []string{"Schmidt", "Dubois", "Okafor", "Novak", "Rossi", "Kowalski", "Haddad", "Larsen", "Moreau", "Tanaka", "Weber", "Silva", "Fischer", "Laurent", "Berg"}
	companies  = []string{"Northwind", "Contoso", "Fabrikam", "Tailspin", "Wingtip", "Litware", "Proseware", "Adatum", "Lucerne", "Margie's Travel", "Trey Research", "Umbrella"}
	titles     = []string{"CTO", "VP Engineering", "CFO", "Head of Sales", "Founder & CEO", "Director of Operations", "Head of Growth", "Engineering Manager"}
	cities     = []string{"Berlin", "Paris", "London", "Munich", "Lyon", "Manchester"}
	sources    = []string{"csv-import", "sales-navigator", "event-2026", "website"}
)

// seedLeads creates demoLeads realistic leads through the leads service,
// so that they carry the same events and rules as API-created ones.
// Re-running matches them by LinkedIn id and changes nothing.
func seedLeads(ctx context.Context, p apikit.Principal, svc *leads.Service, ws *workspace.Service) (int, error) {
	cat, err := ws.Catalog(ctx, p)
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(2026, 11))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	str := func(s string) *string { return &s }
	for i := range demoLeads {
		first, last, company := pick(firstNames), pick(lastNames), pick(companies)
		slug := strings.ToLower(fmt.Sprintf("%s-%s-%d", first, last, i))
		domain := strings.ToLower(strings.NewReplacer(" ", "", "'", "", "&", "").Replace(company)) + ".test"
		in := leads.LeadInput{
			LinkedInID:  str(fmt.Sprintf("ACoAAD%06d", i)),
			LinkedInURL: str("https://www.linkedin.com/in/" + slug),
			Name:        str(first + " " + last),
			Company:     str(company),
			Headline:    str(pick(titles) + " at " + company),
			Location:    str(pick(cities)),
			Source:      str(pick(sources)),
			ClientID:    &cat.Clients[i%len(cat.Clients)].ID,
			StageID:     &cat.Stages[rng.IntN(len(cat.Stages))].ID,
			Custom:      map[string]any{"employees": 10 + rng.IntN(5000), "seed": i},
		}
		if rng.IntN(3) > 0 {
			in.EmailWork = str(strings.ToLower(first+"."+last) + fmt.Sprintf("%d@", i) + domain)
		}
		if rng.IntN(2) == 0 {
			in.ListID = &cat.Lists[rng.IntN(len(cat.Lists))].ID
		}
		res, err := svc.Upsert(ctx, p, in)
		if err != nil {
			return i, fmt.Errorf("seed lead %d: %w", i, err)
		}
		if res.Created && rng.IntN(3) == 0 {
			perm := rng.Perm(len(cat.Tags))
			tags := []string{cat.Tags[perm[0]].ID, cat.Tags[perm[1]].ID}
			if _, err := svc.AddTags(ctx, p, res.Lead.ID, tags); err != nil {
				return i, err
			}
		}
	}
	return demoLeads, nil
}

// demoActivity enrols the demo's leads in its two sequences, activates
// Globex CTOs and runs the runner on the sandbox network from the clock's
// time (two weeks ago) up to now. A demo workspace that already has
// enrollments keeps its history. It returns how many actions were sent.
func demoActivity(ctx context.Context, pl *platform.Platform, clock *apikit.FakeClock, p apikit.Principal, now time.Time) (int, error) {
	ls, qs, es := pl.Leads, pl.Sequences, pl.Enrollments
	if page, err := es.List(ctx, p, enrollments.Filter{Limit: 1}); err != nil || page.Total > 0 {
		return 0, err
	}
	all, err := ls.List(ctx, p, leads.Filter{Limit: apikit.MaxLimit})
	if err != nil {
		return 0, err
	}
	var ids []string
	for off := 0; off < all.Total; off += apikit.MaxLimit {
		page, err := ls.List(ctx, p, leads.Filter{Limit: apikit.MaxLimit, Offset: off})
		if err != nil {
			return 0, err
		}
		for _, l := range page.Data {
			ids = append(ids, l.ID)
		}
	}
	for _, name := range []string{"Globex CTOs", "Initech founders"} {
		q, err := qs.ByName(ctx, p.WorkspaceID, name)
		if err != nil {
			return 0, err
		}
		pv, err := es.Preview(ctx, p, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: ids})
		if err != nil {
			return 0, err
		}
		if len(pv.EligibleIDs) > 0 {
			if _, err := es.Commit(ctx, p, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: pv.EligibleIDs, Confirm: true}); err != nil {
				return 0, err
			}
		}
	}
	if err := qs.ActivateByName(ctx, p.WorkspaceID, "Globex CTOs"); err != nil {
		return 0, err
	}
	net := sandbox.New(2026, clock, sandbox.DefaultRates)
	pl.UseTransports(map[string]senders.Transport{senders.TransportSandbox: net})
	runner := pl.Runner()
	if _, err := simulate.Until(ctx, runner, clock, now.UTC().Truncate(time.Microsecond), nil); err != nil {
		return 0, err
	}
	return len(net.Performed()), nil
}
