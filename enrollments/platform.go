package enrollments

import (
	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/reports"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

// Platform is every area of leadline wired together on one database and
// clock, with the engine's hooks registered: what the server, setup files,
// the simulation and the demo all build on.
type Platform struct {
	Log         *events.Log
	Workspaces  *workspace.Service
	Leads       *leads.Service
	Senders     *senders.Service
	Sequences   *sequences.Service
	Tasks       *tasks.Service
	Inbox       *inbox.Service
	Webhooks    *webhooks.Service
	Reports     *reports.Service
	Bookings    *bookings.Service
	Enrollments *Service
}

// NewPlatform wires the areas on d, without a secret key: webhooks and
// booking secrets, which are kept sealed, are refused. Webhook endpoints
// must resolve to public addresses. NewPlatformGuarded sets another guard
// and the key.
func NewPlatform(d *db.DB, clock apikit.Clock) *Platform {
	return NewPlatformGuarded(d, clock, webhooks.Guard{}, secret.Key{})
}

// NewPlatformGuarded wires the areas on d with guard deciding which
// webhook endpoints may be reached and key sealing the secrets they keep.
func NewPlatformGuarded(d *db.DB, clock apikit.Clock, guard webhooks.Guard, key secret.Key) *Platform {
	p := &Platform{Log: events.NewLog(d, clock), Workspaces: workspace.NewService(d, clock)}
	p.Webhooks = webhooks.NewService(d, clock, p.Log, guard, key)
	p.Reports = reports.NewService(d, clock, p.Log)
	p.Leads = leads.NewService(d, clock, p.Workspaces, p.Log)
	p.Senders = senders.NewService(d, clock, p.Log)
	p.Sequences = sequences.NewService(d, clock, p.Senders, p.Log)
	p.Tasks = tasks.NewService(d, clock, p.Log)
	p.Bookings = bookings.NewService(d, clock, p.Leads, p.Log, key)
	p.Inbox = inbox.NewService(d, clock, p.Senders, p.Leads, p.Workspaces, p.Log)
	p.Enrollments = NewService(d, clock, p.Leads, p.Workspaces, p.Sequences, p.Senders, p.Tasks, p.Inbox, p.Bookings, p.Log)
	p.Enrollments.OnChecks(p.Reports.Compact)
	return p
}
