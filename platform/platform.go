// Package platform is the one place where leadline is wired together: it
// builds every area's service on one database and clock, registers the
// hooks between them, and makes the workers that run beside them (the
// runner and the webhook worker). The HTTP server, `leadline work`, setup
// files, the simulation, the demo and a Go program embedding leadline all
// start from a Platform.
package platform

import (
	"context"
	"crypto/tls"
	"log/slog"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/oauth"
	"github.com/leadline/leadline/reports"
	"github.com/leadline/leadline/rules"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

// Config is what a Platform is built from. Only DB is required.
type Config struct {
	DB     *db.DB
	Clock  apikit.Clock // default: the system clock
	Logger *slog.Logger // default: slog.Default()
	// Webhooks decides which webhook endpoints may be reached; the zero
	// value allows public addresses only.
	Webhooks webhooks.Guard
	// Transports are what the runner sends with and members' replies go
	// through, by a sender's transport name (UseTransports sets them
	// later).
	Transports map[string]senders.Transport
	// SecretKey seals the secrets the platform stores (webhook signing
	// secrets, booking secrets); the zero key stores none, and creating
	// one is refused.
	SecretKey secret.Key
}

// Platform is every area of leadline wired together on one database and
// clock.
type Platform struct {
	DB          *db.DB
	Clock       apikit.Clock
	SecretKey   secret.Key
	Logger      *slog.Logger
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
	Enrollments *enrollments.Service
	// Rules run what the sequences' rules say a reply or a booked meeting
	// does; the runners take them.
	Rules *rules.Service
	// SenderSecrets are the senders' secrets typed in (sealed under
	// SecretKey), and the platform's credentials: a stored secret first,
	// else the environment variable of its name.
	SenderSecrets *senders.Secrets
	// OAuth keeps the workspaces' OAuth apps at Google and Microsoft and
	// the mailboxes connected with them (refresh tokens sealed under
	// SecretKey); the email transport signs in with its access tokens.
	OAuth *oauth.Service
	// Inbound is the durable queue that pushed events (scheduling
	// providers' webhooks) wait in for a runner.
	Inbound *engine.Queue
	// Metrics is the platform's Prometheus registry, which its runners,
	// webhook workers and the server report to.
	Metrics *Metrics

	transports map[string]senders.Transport
}

// New wires the areas on cfg.DB, which must be migrated.
func New(cfg Config) *Platform {
	if cfg.Clock == nil {
		cfg.Clock = apikit.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	d, clock := cfg.DB, cfg.Clock
	p := &Platform{DB: d, Clock: clock, SecretKey: cfg.SecretKey, Logger: cfg.Logger, Log: events.NewLog(d, clock), Workspaces: workspace.NewService(d, clock)}
	p.Webhooks = webhooks.NewService(d, clock, cfg.Webhooks, cfg.SecretKey)
	p.Leads = leads.NewService(d, clock, p.Workspaces, p.Log)
	p.Senders = senders.NewService(d, clock, p.Log)
	p.SenderSecrets = senders.NewSecrets(d, clock, cfg.SecretKey)
	p.OAuth = oauth.NewService(d, clock, cfg.SecretKey, cfg.Logger)
	p.Sequences = sequences.NewService(d, clock, p.Senders, p.Workspaces, p.Log)
	p.Tasks = tasks.NewService(d, clock, p.Workspaces, p.Log)
	p.Inbox = inbox.NewService(d, clock, p.Senders, p.Leads, p.Workspaces, p.Log)
	p.Bookings = bookings.NewService(d, clock, p.Leads, p.Inbox, p.Log, cfg.SecretKey)
	p.Enrollments = enrollments.NewService(d, clock, p.Leads, p.Workspaces, p.Sequences, p.Senders, p.Tasks, p.Log)
	p.Reports = reports.NewService(d, clock, p.ReportAreas())
	p.Rules = rules.NewService(rules.Config{DB: d, Clock: clock, Leads: p.Leads, Catalog: p.Workspaces, Inbox: p.Inbox, Tasks: p.Tasks,
		Enrollments: p.Enrollments, Sequences: p.Sequences})
	p.wire()
	p.Inbound = engine.NewQueue(d, clock)
	p.Metrics = newMetrics(p)
	if cfg.Transports != nil {
		p.UseTransports(cfg.Transports)
	}
	return p
}

// wire registers every hook between the areas, and nothing else does:
// each constructor above registers nothing. The hooks of one platform are
// on its own activity log and services, so that two platforms on one
// database (a server and a worker in one process, a test's second view)
// count nothing twice.
func (p *Platform) wire() {
	// Every event gets its webhook deliveries (the outbox) and its report
	// counts in the transaction that writes it.
	p.Log.OnEmit(p.Webhooks.Enqueue)
	p.Log.WithInsert(p.Reports.Count)
	// What came of each variant a sequence step sent is counted with the
	// events that tell it.
	p.Log.OnEmit(p.Sequences.CountVariants)
	// The lead view reads enrollments and sender state; do-not-contact
	// stops live enrollments.
	p.Leads.SetEngine(p.Enrollments)
	// Activation releases held enrollments, pausing holds them.
	p.Sequences.OnStatusChange(p.Enrollments.SequenceStatusChanged)
	// Completing a task moves its enrollment on, in the same transaction.
	p.Tasks.OnFinish(p.Enrollments.TaskFinished)
	// A task step's task goes to the lead's thread's assignee, else to the
	// member who enrolled the lead.
	p.Tasks.AssignWith(taskOwners(p.DB)...)
	// A reply stops or delays enrollments through the enrollments area.
	p.Inbox.StopWith(stopper{p.Enrollments})
	// A lead that moves to another client takes its threads along.
	p.Leads.FollowClient(p.Inbox)
	// A thread shows what the sequences' rules did on it.
	p.Inbox.RulesWith(p.Sequences)
}

// UseTransports sets the transports the platform's runners send with and
// members' replies go through, by a sender's transport name.
func (p *Platform) UseTransports(ts map[string]senders.Transport) {
	p.transports = ts
	p.Inbox.UseTransports(ts)
}

// Runner returns a runner that sends through the platform's transports.
func (p *Platform) Runner() *engine.Runner { return p.NewRunner(p.transports) }

// NewRunner returns a runner that sends through ts; members' replies keep
// going through the platform's transports.
func (p *Platform) NewRunner(ts map[string]senders.Transport) *engine.Runner {
	r := engine.New(engine.Config{DB: p.DB, Clock: p.Clock, Logger: p.Logger, Enrollments: p.Enrollments, Leads: p.Leads,
		Catalog: p.Workspaces, Sequences: p.Sequences, Senders: p.Senders, Tasks: p.Tasks, Inbox: p.Inbox, Bookings: p.Bookings,
		Rules: p.Rules, Log: p.Log, Queue: p.Inbound, Transports: ts})
	r.Observe(p.Metrics)
	// A worker folds the reports' counter shards once a day.
	r.OnChecks(p.Reports.Compact)
	// A step's test picks its winner once the evidence reaches the step's
	// confidence.
	r.OnChecks(p.Sequences.PickWinners)
	// Connects whose links expired are deleted, finished or not.
	r.OnChecks(p.OAuth.SweepStates)
	return r
}

// WebhookWorker returns the worker that sends webhook deliveries through
// the platform's guarded client; tlsc (nil: the system's roots) is the
// client's TLS configuration.
func (p *Platform) WebhookWorker(tlsc *tls.Config) *webhooks.Worker {
	w := p.Webhooks.NewWorker(p.Webhooks.Guard().Client(tlsc), p.Logger)
	w.Observer = p.Metrics
	return w
}

// ReportAreas are the areas the reports read, through their services.
func (p *Platform) ReportAreas() reports.Areas {
	return reports.Areas{Workspaces: p.Workspaces, Leads: p.Leads, Sequences: p.Sequences, Senders: p.Senders, Enrollments: p.Enrollments, Events: p.Log}
}

// stopper hands the enrollments area to the inbox as its inbox.Stopper:
// the inbox decides what a reply means, the enrollments area what that
// does to the lead's enrollments.
type stopper struct{ *enrollments.Service }

func (s stopper) ForReply(ctx context.Context, workspaceID, leadID string) (inbox.ReplyStop, error) {
	return s.Service.ForReply(ctx, workspaceID, leadID)
}

// taskOwners are who a task step's task goes to, the first that names a
// member: the member who owns the conversation with the lead (the
// assignee of the lead's most recently active assigned thread), else the
// member who enrolled the lead (the member of the enrollment's
// enrollment.created event: a member in the console, or the member whose
// key committed it), each only while still a member: a task never goes to
// a member who left. Both are read in the task's INSERT
// (docs/DECISIONS.md).
func taskOwners(d *db.DB) []tasks.Owner {
	thread := workspace.ActiveMember(inbox.LeadAssignee(d, "?"))
	enroller := workspace.ActiveMember(events.Actor("?", "?", "?"))
	return []tasks.Owner{
		func(t *tasks.Task) (string, []any) { return thread, []any{t.LeadID} },
		func(t *tasks.Task) (string, []any) {
			return enroller, []any{t.LeadID, t.EnrollmentID, enrollments.EventCreated}
		},
	}
}
