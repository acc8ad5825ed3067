package platform

import (
	"context"
	"net/http"

	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
	"github.com/leadline/leadline/transports/unipile"
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

// Transports returns every transport a server sends through: the sandbox
// network (the default: demo, simulate and the quick start need no
// account; shared through the database by every replica), mailboxes over SMTP and IMAP, and LinkedIn accounts through
// Unipile, whose polled reports go to the inbound queue with its webhooks'.
func (p *Platform) Transports(o Outside) map[string]senders.Transport {
	if o.Credentials == nil {
		o.Credentials = p.SenderSecrets
	}
	var token func(workspaceID, leadID string) (string, error)
	if !p.SecretKey.IsZero() {
		token = func(workspaceID, leadID string) (string, error) {
			return leads.UnsubscribeToken(p.SecretKey, workspaceID, leadID)
		}
	}
	return map[string]senders.Transport{
		// The sandbox keeps its state in the database: every replica on it
		// sees one network.
		senders.TransportSandbox: sandbox.New(o.Seed, p.Clock, sandbox.DefaultRates).Shared(p.DB),
		senders.TransportSMTP: email.New(email.Config{Credentials: o.Credentials, Clock: p.Clock, Logger: p.Logger,
			PublicURL: o.PublicURL, Token: token}),
		senders.TransportUnipile: unipile.New(unipile.Config{Credentials: o.Credentials, Clock: p.Clock, Logger: p.Logger, Sink: p.Inbound,
			Invitations: p.Senders, HTTPClient: o.HTTPClient}),
	}
}

// MailReader returns the reader of the smtp senders' inboxes: it queues
// their replies, bounces and auto-replies on the inbound queue, one reader
// per inbox across replicas. `leadline serve` and `leadline work` run it.
func (p *Platform) MailReader(creds senders.Credentials) *email.Reader {
	if creds == nil {
		creds = p.SenderSecrets
	}
	list := func(ctx context.Context) ([]*senders.Sender, error) {
		return p.Senders.ByTransport(ctx, senders.TransportSMTP)
	}
	return email.NewReader(list, p.Inbound, email.NewStates(p.DB), creds, p.Clock, p.Logger)
}
