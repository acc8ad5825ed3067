package console

import (
	"context"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/workspace"
)

// world is acme at work: a mailbox sender on the sandbox network, one
// one-email sequence per client, Ann Lee (Globex) and Cy Park (Initech)
// enrolled and mailed by the runner on the fake clock, and Ann's reply
// read by the classifier. The inbox, tasks and reports pages start from
// it.
type world struct {
	e                   *env
	owner               apikit.Principal
	net                 *sandbox.Network
	sender              string
	clients, seqs       map[string]string
	ann, cy             string // lead ids
	annThread, cyThread string
	annReply            string
}

// work builds the world: setup as `leadline apply` does, leads and
// enrolments through the services the API calls, then the runner.
func (e *env) work() *world {
	e.t.Helper()
	ctx := context.Background()
	must := e.must
	w := &world{e: e, clients: map[string]string{}, seqs: map[string]string{}}
	_, secret, err := e.pl.Workspaces.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "owner@acme.test", Role: apikit.RoleManager, Name: "world"})
	must(err)
	w.owner, err = e.pl.Workspaces.Authenticate(ctx, secret)
	must(err)
	cat, err := e.pl.Workspaces.Catalog(ctx, w.owner)
	must(err)
	for _, c := range cat.Clients {
		w.clients[c.Name] = c.ID
	}
	_, err = e.pl.Senders.Apply(ctx, senders.Owner{WorkspaceID: w.owner.WorkspaceID, Timezone: w.owner.Timezone, Clients: w.clients},
		[]senders.Spec{{Name: "mail", Channel: senders.Email, Address: "sales@acme.test", MonthlyCost: 30}})
	must(err)
	ss, err := e.pl.Senders.All(ctx, w.owner.WorkspaceID)
	must(err)
	w.sender = ss[0].ID
	var specs []sequences.Spec
	for _, c := range []string{"Globex", "Initech"} {
		specs = append(specs, sequences.Spec{Name: "Mail " + c, Client: c, Senders: []string{"mail"},
			Steps: []sequences.Step{{ID: "hi", Type: "email", Subject: "Hello {{first_name}}", Body: "Hi {{first_name}}"}}})
	}
	_, err = e.pl.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: w.owner.WorkspaceID, Clients: w.clients}, specs)
	must(err)
	lead := func(name, email, client string) string {
		id := w.clients[client]
		r, err := e.pl.Leads.Upsert(ctx, w.owner, leads.LeadInput{Name: &name, EmailWork: &email, ClientID: &id})
		must(err)
		return r.Lead.ID
	}
	w.ann, w.cy = lead("Ann Lee", "ann@example.test", "Globex"), lead("Cy Park", "cy@example.test", "Initech")
	for lead, c := range map[string]string{w.ann: "Globex", w.cy: "Initech"} {
		must(e.pl.Sequences.ActivateByName(ctx, w.owner.WorkspaceID, "Mail "+c))
		q, err := e.pl.Sequences.ByName(ctx, w.owner.WorkspaceID, "Mail "+c)
		must(err)
		w.seqs[c] = q.ID
		_, err = e.pl.Enrollments.Commit(ctx, w.owner, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: []string{lead}, Confirm: true})
		must(err)
	}
	w.net = sandbox.New(1, e.clock, sandbox.Rates{})
	e.pl.UseTransports(map[string]senders.Transport{senders.TransportSandbox: w.net})
	for range 6 {
		w.tick()
		e.clock.Advance(time.Hour)
	}
	if n := len(w.net.Performed()); n != 2 {
		e.t.Fatalf("the runner sent %d emails, want 2", n)
	}
	w.annReply = "Sounds good <b>let's talk</b>. Thursday afternoon?"
	w.reply(w.ann, "m-1", w.annReply)
	ts, err := e.pl.Inbox.List(ctx, w.owner, inbox.Filter{Limit: 10})
	must(err)
	for _, t := range ts.Data {
		switch t.LeadID {
		case w.ann:
			w.annThread = t.ID
		case w.cy:
			w.cyThread = t.ID
		}
	}
	return w
}

// tick runs the runner once.
func (w *world) tick() {
	w.e.t.Helper()
	if _, err := w.e.pl.Runner().Tick(context.Background()); err != nil {
		w.e.t.Fatal(err)
	}
}

// reply delivers lead's email reply and lets the runner take it in.
func (w *world) reply(lead, providerID, body string) {
	w.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: w.sender, LeadID: lead, At: w.e.clock.Now(),
		ProviderMessageID: providerID, Subject: "Re: Hello", Body: body})
	w.tick()
}

// callTasks adds a one-task sequence per client, enrols Dee Fox (Globex)
// and Eve Gray (Initech) in them and lets the runner open their tasks,
// due in two days. It returns the task ids by lead name.
func (w *world) callTasks() map[string]string {
	e := w.e
	e.t.Helper()
	ctx := context.Background()
	must := e.must
	var specs []sequences.Spec
	for _, c := range []string{"Globex", "Initech"} {
		specs = append(specs, sequences.Spec{Name: "Call " + c, Client: c, Senders: []string{"mail"},
			Steps: []sequences.Step{{ID: "call", Type: "task", Title: "Call {{first_name}}", DueInDays: 2}}})
	}
	_, err := e.pl.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: w.owner.WorkspaceID, Clients: w.clients}, specs)
	must(err)
	leadIDs := map[string]string{}
	for name, c := range map[string]string{"Dee Fox": "Globex", "Eve Gray": "Initech"} {
		id, email := w.clients[c], strings.ToLower(strings.Fields(name)[0])+"@example.test"
		r, err := e.pl.Leads.Upsert(ctx, w.owner, leads.LeadInput{Name: &name, EmailWork: &email, ClientID: &id})
		must(err)
		leadIDs[name] = r.Lead.ID
		must(e.pl.Sequences.ActivateByName(ctx, w.owner.WorkspaceID, "Call "+c))
		q, err := e.pl.Sequences.ByName(ctx, w.owner.WorkspaceID, "Call "+c)
		must(err)
		w.seqs["Call "+c] = q.ID
		_, err = e.pl.Enrollments.Commit(ctx, w.owner, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: []string{r.Lead.ID}, Confirm: true})
		must(err)
	}
	for range 3 {
		w.tick()
		e.clock.Advance(time.Hour)
	}
	ts, err := e.pl.Tasks.List(ctx, w.owner, tasks.Filter{Limit: 10})
	must(err)
	out := map[string]string{}
	for name, id := range leadIDs {
		for _, t := range ts.Data {
			if t.LeadID == id {
				out[name] = t.ID
			}
		}
	}
	if len(out) != 2 {
		e.t.Fatalf("the runner opened %d tasks, want 2", len(out))
	}
	return out
}

// must fails the test on an error.
func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}
