// Command client drives a running leadline server with the Go client: it
// imports leads, enrols them in a sequence, reads the inbox and a report.
//
//	LEADLINE_URL=http://127.0.0.1:8080 LEADLINE_KEY=ll_… go run ./examples/client --sequence "Globex CTOs" --client Globex
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/leadline/leadline/client"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/server"
)

// people are the leads the example imports.
var people = []struct{ Name, LinkedIn, Email, Company string }{
	{"Ada Lovelace", "ada-lovelace", "ada@analytical.test", "Analytical Engines"},
	{"Grace Hopper", "grace-hopper", "grace@cobol.test", "COBOL Ltd"},
	{"Alan Turing", "alan-turing", "alan@bletchley.test", "Bletchley Park"},
	{"Katherine Johnson", "katherine-johnson", "katherine@orbit.test", "Orbit Inc"},
}

// run imports the leads for the client named clientName, enrols them in
// the sequence named sequence, and prints the inbox and a report to out.
func run(ctx context.Context, c *client.Client, clientName, sequence string, out io.Writer) error {
	me, err := c.GetMe(ctx)
	if err != nil {
		return err
	}
	clientID, err := idOf(me, clientName)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "workspace %s, acting as %s\n", me.Workspace.Name, me.Role)

	// Import: one upsert per row. Each row's Idempotency-Key names the
	// row, so that running the import again after a crash writes nothing
	// twice (the client retries a lost answer with the same key anyway).
	var ids []string
	for _, p := range people {
		res, err := c.UpsertLead(client.WithIdempotencyKey(ctx, "example-import:"+p.Email),
			leads.LeadInput{Name: new(p.Name), LinkedInID: new(p.LinkedIn), EmailWork: new(p.Email), Company: new(p.Company),
				ClientID: new(clientID), Source: new("examples/client")})
		if err != nil {
			return fmt.Errorf("import %s: %w", p.Email, err)
		}
		ids = append(ids, res.Data.ID)
	}
	fmt.Fprintf(out, "imported %d leads\n", len(ids))

	// Enrol: find the sequence, preview, then commit what is eligible.
	seqID := ""
	for s, err := range c.AllSequences(ctx, client.SequencesParams{}) {
		if err != nil {
			return err
		}
		if s.Name == sequence {
			seqID = s.ID
		}
	}
	if seqID == "" {
		return fmt.Errorf("no sequence named %q", sequence)
	}
	pv, err := c.PreviewEnrollments(ctx, enrollments.EnrollInput{SequenceID: seqID, LeadIDs: ids})
	if err != nil {
		return err
	}
	for _, x := range pv.Excluded {
		fmt.Fprintf(out, "excluded %s: %s\n", x.LeadID, x.Reason)
	}
	if len(pv.EligibleIDs) > 0 {
		res, err := c.EnrolLeads(ctx, enrollments.EnrollInput{SequenceID: seqID, LeadIDs: pv.EligibleIDs, Confirm: true})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "enrolled %d\n", res.Enrolled)
	}

	// The inbox: every thread with a reply from these leads' client.
	threads := 0
	for th, err := range c.AllThreads(ctx, client.ThreadsParams{ClientID: clientID}) {
		if err != nil {
			return err
		}
		threads++
		intent := "unread yet"
		if th.Intent != nil {
			intent = string(*th.Intent)
		}
		fmt.Fprintf(out, "thread %s: %s, unread %t\n", th.ID, intent, th.Unread)
	}
	fmt.Fprintf(out, "inbox: %d threads\n", threads)

	// A report: the funnel of the last 30 days.
	f, err := c.ReportFunnel(ctx, client.ReportParams{ClientID: clientID})
	if err != nil {
		return err
	}
	for _, st := range f.Stages {
		fmt.Fprintf(out, "funnel %s: %d\n", st.Stage, st.Count)
	}
	return nil
}

// idOf finds a client's id by name.
func idOf(me *server.Me, name string) (string, error) {
	for _, c := range me.Clients {
		if c.Name == name {
			return c.ID, nil
		}
	}
	return "", errors.New("this key sees no client named " + name)
}

func main() {
	seq := flag.String("sequence", "Globex CTOs", "the sequence to enrol the leads in")
	cl := flag.String("client", "Globex", "the client the leads belong to")
	flag.Parse()
	url, key := os.Getenv("LEADLINE_URL"), os.Getenv("LEADLINE_KEY")
	if url == "" || key == "" {
		log.Fatal("set LEADLINE_URL to the server (http://127.0.0.1:8080) and LEADLINE_KEY to an API key")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, client.New(url, key), *cl, *seq, os.Stdout); err != nil {
		var e *client.Error
		if errors.As(err, &e) {
			log.Fatalf("%s\nremedy: %s", e.Message, e.Remedy)
		}
		log.Fatal(err)
	}
}
