package reports

import (
	"context"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// Areas are the other areas the reports read, each through the few reads
// the reports need: the reports own only their rollup tables
// (report_daily, report_threads) and read no other area's table. The
// platform hands over the areas' services.
type Areas struct {
	Workspaces  WorkspaceSource
	Leads       LeadSource
	Sequences   SequenceSource
	Senders     SenderSource
	Enrollments EnrollmentSource
	Events      EventSource
}

// WorkspaceSource is what the reports read of the workspace area.
type WorkspaceSource interface {
	// WorkspaceByID returns the workspace with id, for its timezone.
	// Returns an error that db.IsNoRows recognises if there is none.
	WorkspaceByID(ctx context.Context, id string) (*workspace.Workspace, error)
	// Named returns the workspace's entries of kind (here: clients), all
	// of them when ids is nil, else those among ids that exist, by name.
	// Returns no error for an id that does not exist: it is left out.
	Named(ctx context.Context, workspaceID string, kind workspace.Kind, ids []string) ([]workspace.Named, error)
}

// LeadSource is what the reports read of the leads area.
type LeadSource interface {
	// Names returns the names of the workspace's leads among ids, by id
	// (a lead with no name maps to ""). Returns no error for an id that
	// does not exist: it is left out.
	Names(ctx context.Context, workspaceID string, ids []string) (map[string]string, error)
}

// SequenceSource is what the reports read of the sequences area.
type SequenceSource interface {
	// Visible returns the sequence with id. Returns E_NOT_FOUND if the
	// sequence does not exist or is not visible to the principal.
	Visible(ctx context.Context, p apikit.Principal, id string) (*sequences.Sequence, error)
	// Refs returns the id, name and client of the workspace's sequences,
	// all of them when ids is nil, else those among ids that exist, by
	// name and id. Returns no error for an id that does not exist.
	Refs(ctx context.Context, workspaceID string, ids []string) ([]sequences.Ref, error)
	// VariantCountsSent returns the numbers of the sequence's variants
	// over the enrollments first sent one in [from, to), by step id.
	VariantCountsSent(ctx context.Context, id string, from, to time.Time) (map[string][]sequences.VariantCounts, error)
}

// SenderSource is what the reports read of the senders area.
type SenderSource interface {
	// Visible returns the sender with id. Returns E_NOT_FOUND if the
	// sender does not exist or is not visible to the principal.
	Visible(ctx context.Context, p apikit.Principal, id string) (*senders.Sender, error)
	// Refs returns the id, name, client and channel of the workspace's
	// senders, all of them when ids is nil, else those among ids that
	// exist, by name and id. Returns no error for an id that does not
	// exist.
	Refs(ctx context.Context, workspaceID string, ids []string) ([]senders.Ref, error)
	// All returns every sender of the workspace, by name.
	All(ctx context.Context, workspaceID string) ([]senders.Sender, error)
	// Costs returns the id, client, monthly cost and creation time of
	// every sender of the workspace, by name and id: what costs spread.
	Costs(ctx context.Context, workspaceID string) ([]senders.Cost, error)
	// Usage returns the sender's counters from fromDay to toDay (its local
	// days, included); a day with no use has no row.
	Usage(ctx context.Context, senderID, fromDay, toDay string) ([]senders.Usage, error)
}

// EventSource is what the reports read of the activity log: its pages,
// for a rebuild.
type EventSource interface {
	// Page returns up to limit of the workspace's events of kinds, oldest
	// first: from the first when afterID is "", else those after the
	// event afterID written at since. Returns only the database's errors.
	Page(ctx context.Context, workspaceID string, kinds []string, since time.Time, afterID string, limit int) ([]events.Event, error)
}

// EnrollmentSource is what the reports read of the enrollments area.
type EnrollmentSource interface {
	// ContactedAt returns when each of the enrollments among ids first
	// contacted its lead; an enrollment that has not, or that does not
	// exist, is left out. It joins the transaction in ctx.
	ContactedAt(ctx context.Context, ids []string) (map[string]time.Time, error)
}
