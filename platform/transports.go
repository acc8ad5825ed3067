package platform

import (
	"context"
	"net/http"

	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"

	// The transports leadline is built with: each registers its plug-in
	// (senders.Plugin). A new transport is one package and one line here.
	_ "github.com/leadline/leadline/transports/email"
	_ "github.com/leadline/leadline/transports/unipile"
)

// Outside is how the real transports reach the world.
type Outside struct {
	// PublicURL is the server's address as the internet sees it: the base
	// of unsubscribe links and where providers post webhooks ("" when it
	// has none: List-Unsubscribe is then a mailto:).
	PublicURL string
	// Credentials give the secrets senders' settings name (default: the
	// platform's SenderSecrets, stored secrets then the environment).
	Credentials senders.Credentials
	// Seed seeds the sandbox network.
	Seed int64
	// HTTPClient makes the calls of the transports that call a provider's
	// API (Unipile); nil: a client with a 30-second timeout.
	HTTPClient *http.Client
}

// env is what the platform gives the transports it builds.
func (p *Platform) env(o Outside) senders.Env {
	if o.Credentials == nil {
		o.Credentials = p.SenderSecrets
	}
	var token func(workspaceID, leadID string) (string, error)
	if !p.SecretKey.IsZero() {
		token = func(workspaceID, leadID string) (string, error) {
			return leads.UnsubscribeToken(p.SecretKey, workspaceID, leadID)
		}
	}
	return senders.Env{DB: p.DB, Clock: p.Clock, Logger: p.Logger, Credentials: o.Credentials, Tokens: p.OAuth, Sink: p.Inbound, Invitations: p.Senders,
		Senders: p.Senders.ByTransport, PublicURL: o.PublicURL, UnsubscribeToken: token, HTTPClient: o.HTTPClient, Seed: o.Seed}
}

// Transports returns every transport a server sends through: the sandbox
// network (the default: demo, simulate and the quick start need no
// account; shared through the database by every replica) and every
// registered plug-in's (mailboxes over SMTP and IMAP, LinkedIn accounts
// through Unipile, whose polled reports go to the inbound queue with its
// webhooks').
func (p *Platform) Transports(o Outside) map[string]senders.Transport {
	env := p.env(o)
	out := map[string]senders.Transport{
		// The sandbox keeps its state in the database: every replica on it
		// sees one network.
		senders.TransportSandbox: sandbox.New(o.Seed, p.Clock, sandbox.DefaultRates).Shared(p.DB),
	}
	for _, pl := range senders.Plugins() {
		if pl.New != nil {
			out[pl.Name] = pl.New(env)
		}
	}
	return out
}

// Readers returns the transports' background readers (the mailboxes'
// inboxes: replies, bounces and auto-replies onto the inbound queue, one
// reader per inbox across replicas). `leadline serve` and `leadline work`
// run them.
func (p *Platform) Readers(creds senders.Credentials) []senders.Runner {
	env := p.env(Outside{Credentials: creds})
	var out []senders.Runner
	for _, pl := range senders.Plugins() {
		if pl.Reader != nil {
			out = append(out, pl.Reader(env))
		}
	}
	return out
}

// RunReaders runs the transports' background readers until ctx ends; fail
// is told of a reader that stops before.
func (p *Platform) RunReaders(ctx context.Context, fail func(error)) {
	done := make(chan struct{})
	rs := p.Readers(nil)
	for _, r := range rs {
		go func() {
			defer func() { done <- struct{}{} }()
			if err := r.Run(ctx); err != nil && ctx.Err() == nil {
				fail(err)
			}
		}()
	}
	for range rs {
		<-done
	}
}
