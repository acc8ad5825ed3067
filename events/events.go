// Package events is leadline's append-only activity log. Every state change
// a user could care about writes one row here, in the same transaction as
// the change: lead timelines read it, webhooks fan out from it and reports
// aggregate it.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// Event is one row of the activity log.
type Event struct {
	bun.BaseModel `bun:"table:events"`

	ID          string `bun:"id,pk" json:"id"`
	WorkspaceID string `bun:"workspace_id" json:"-"`
	LeadID      string `bun:"lead_id,nullzero" json:"lead_id,omitempty"`
	// SenderID, SequenceID, EnrollmentID and StepID name what an engine
	// event concerns, so that exports and reports need not read data.
	SenderID     string `bun:"sender_id,nullzero" json:"sender_id,omitempty"`
	SequenceID   string `bun:"sequence_id,nullzero" json:"sequence_id,omitempty"`
	EnrollmentID string `bun:"enrollment_id,nullzero" json:"enrollment_id,omitempty"`
	StepID       string `bun:"step_id,nullzero" json:"step_id,omitempty"`
	// ClientID is the client whose numbers the event counts in: the
	// enrollment's (its sequence's) for engine events, the thread's for
	// inbox events, the lead's for lead events.
	ClientID  string         `bun:"client_id,nullzero" json:"client_id,omitempty"`
	Kind      string         `bun:"kind" json:"kind"`
	MemberID  string         `bun:"member_id,nullzero" json:"member_id,omitempty"`
	KeyID     string         `bun:"key_id,nullzero" json:"key_id,omitempty"`
	Data      map[string]any `bun:"data,type:jsonb" json:"data"`
	CreatedAt time.Time      `bun:"created_at" json:"created_at"`
}

// Emitter is what an area needs of the activity log to record its changes;
// *Log is one.
type Emitter interface {
	EmitMany(ctx context.Context, evs []Event) error
}

// Log writes and reads the activity log.
type Log struct {
	db      *db.DB
	clock   apikit.Clock
	hooks   []func(ctx context.Context, evs []Event) error
	inserts []func(ctx context.Context, evs []Event) ([]Statement, error)
}

// Statement is a write a hook adds to the insert of the events: SQL with ?
// placeholders and its arguments.
type Statement struct {
	SQL  string
	Args []any
	// Prepared marks a text the hot path writes again and again: SQLite
	// prepares it once per connection, and on Postgres it rides in the
	// WITH of a single event's prepared insert.
	Prepared bool
}

// WithInsert registers fn to run in the transaction of every write to the
// log, before the events are inserted; the statements it returns are
// written with them. On Postgres they are data-modifying WITH queries of
// the events' INSERT, so that they cost no round trip of their own; on
// SQLite, which has no such WITH, they run right after it. The rollups of
// the reports are kept this way.
func (l *Log) WithInsert(fn func(ctx context.Context, evs []Event) ([]Statement, error)) {
	l.inserts = append(l.inserts, fn)
}

// OnEmit registers fn to run in the transaction of every write to the log,
// with the events written: the webhook outbox fans out from it, so that a
// committed event always has its deliveries and a rolled-back one none.
func (l *Log) OnEmit(fn func(ctx context.Context, evs []Event) error) {
	l.hooks = append(l.hooks, fn)
}

// NewLog returns the log on d.
func NewLog(d *db.DB, clock apikit.Clock) *Log { return &Log{db: d, clock: clock} }

// Emit appends e, inside the transaction ctx carries when there is one
// (written there with the transaction's other events just before its
// commit, so that a read in the same transaction does not see it yet). The
// id and time are set here; the actor (member and key) comes from the
// principal in ctx, so audit entries name the member a key acts as.
func (l *Log) Emit(ctx context.Context, e Event) error {
	return l.EmitMany(ctx, []Event{e})
}

// EmitMany appends several events at once, each as Emit describes.
func (l *Log) EmitMany(ctx context.Context, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	// The transaction's time: its events and the rows it writes with them
	// carry one time.
	now := db.Now(ctx, l.clock)
	p, hasP := apikit.PrincipalFrom(ctx)
	for i := range evs {
		e := &evs[i]
		e.ID = apikit.NewID()
		e.CreatedAt = now
		if hasP {
			if e.MemberID == "" {
				e.MemberID = p.MemberID
			}
			if e.KeyID == "" {
				e.KeyID = p.KeyID
			}
			if e.WorkspaceID == "" {
				e.WorkspaceID = p.WorkspaceID
			}
		}
		if e.Data == nil {
			e.Data = map[string]any{}
		}
	}
	var with []Statement
	for _, fn := range l.inserts {
		sts, err := fn(ctx, evs)
		if err != nil {
			return err
		}
		with = append(with, sts...)
	}
	// Inside a transaction the events are written with the transaction's
	// others, and their hooks run on all of them, just before the commit.
	if db.Later(ctx, "events", evs, l.writeQueued) {
		for _, st := range with {
			if err := l.db.Exec(ctx, st.SQL, st.Prepared, st.Args...); err != nil {
				return err
			}
		}
		return nil
	}
	// Outside one, in a transaction of their own: the events, the rows
	// that ride with them and their hooks' rows (the webhook deliveries)
	// commit together or not at all.
	return l.db.InTx(ctx, func(ctx context.Context) error { return l.write(ctx, evs, with) })
}

// insertChunk is how many events one INSERT writes at most.
const insertChunk = 500

// writeQueued writes the events a transaction queued, before its commit.
func (l *Log) writeQueued(ctx context.Context, queued [][]Event) error {
	return l.write(ctx, slices.Concat(queued...), nil)
}

// write inserts evs, the statements of with riding along on Postgres, and
// runs the hooks on them.
func (l *Log) write(ctx context.Context, evs []Event, with []Statement) error {
	idb := l.db.IDB(ctx)
	rest := evs
	if len(evs) == 1 && (l.db.Engine == db.SQLite || allPrepared(with)) {
		// The runner's usual write: one statement, prepared once per
		// connection; on Postgres with the counters in its WITH.
		var carried []Statement
		if l.db.Engine == db.Postgres {
			carried, with = with, nil
		}
		if err := l.insertOne(ctx, &evs[0], carried); err != nil {
			return err
		}
		rest = nil
	}
	if len(rest) > 0 && len(with) > 0 && l.db.Engine == db.Postgres {
		// The first chunk carries the statements of with in its WITH.
		chunk := rest[:min(insertChunk, len(rest))]
		q := idb.NewInsert().Model(&chunk)
		for i, st := range with {
			q = q.With(fmt.Sprintf("with_%d", i), idb.NewRaw(st.SQL, st.Args...))
		}
		if _, err := q.Exec(ctx); err != nil {
			return err
		}
		rest, with = rest[len(chunk):], nil
	}
	// The others go out in multi-row statements whose values are bound,
	// each text prepared once per connection.
	rows := make([][]any, len(rest))
	for i := range rest {
		r, err := l.row(&rest[i])
		if err != nil {
			return err
		}
		rows[i] = r
	}
	if err := l.db.ExecRows(ctx, "INSERT INTO events ("+eventColumns+") VALUES ", "", nil, rows); err != nil {
		return err
	}
	for _, st := range with {
		if err := l.db.Exec(ctx, st.SQL, st.Prepared, st.Args...); err != nil {
			return err
		}
	}
	for _, fn := range l.hooks {
		if err := fn(ctx, evs); err != nil {
			return err
		}
	}
	return nil
}

// allPrepared reports whether every statement asks to be prepared: the
// small ones of a hot path, whose texts repeat.
func allPrepared(sts []Statement) bool {
	for _, st := range sts {
		if !st.Prepared {
			return false
		}
	}
	return true
}

// insertOne writes e with a prepared statement, its values as bun writes
// them: empty ids as NULL, data as JSON text. The statements of with ride
// in its WITH (Postgres), so that a text of one shape is prepared once per
// connection and sent with its values alone.
func (l *Log) insertOne(ctx context.Context, e *Event, with []Statement) error {
	row, err := l.row(e)
	if err != nil {
		return err
	}
	var sb strings.Builder
	var args []any
	for i, st := range with {
		sb.WriteString(map[bool]string{true: "WITH ", false: ", "}[i == 0])
		fmt.Fprintf(&sb, "with_%d AS (%s)", i, st.SQL)
		args = append(args, st.Args...)
	}
	if len(with) > 0 {
		sb.WriteString(" ")
	}
	sb.WriteString("INSERT INTO events (" + eventColumns + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	return l.db.ExecPrepared(ctx, sb.String(), append(args, row...)...)
}

// eventColumns are the columns of an event row, in the order of row's
// values.
const eventColumns = "id, workspace_id, lead_id, sender_id, sequence_id, enrollment_id, step_id, client_id, kind, member_id, key_id, data, created_at"

// row is e's values for eventColumns, as bun writes them: empty ids as
// NULL, data as JSON text.
func (l *Log) row(e *Event) ([]any, error) {
	data, err := json.Marshal(e.Data)
	if err != nil {
		return nil, err
	}
	null := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	return []any{e.ID, e.WorkspaceID, null(e.LeadID), null(e.SenderID), null(e.SequenceID), null(e.EnrollmentID), null(e.StepID),
		null(e.ClientID), e.Kind, null(e.MemberID), null(e.KeyID), string(data), l.db.TimeArg(&e.CreatedAt)}, nil
}

// ForLead returns up to limit of a lead's events, newest first, and how
// many the lead has. Both the page and its count read the lead's events
// through events_lead: SQLite, which plans without statistics, would
// count them on events_workspace, walking every event of the workspace.
func (l *Log) ForLead(ctx context.Context, workspaceID, leadID string, limit, offset int) ([]Event, int, error) {
	evs, total, err := db.List[Event](l.db.IDB(ctx), "", workspaceID, nil).Where("lead_id = ?", leadID).
		Apply(func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.ModelTableExpr(l.db.IndexedBy(`events AS "event"`, "events_lead"))
		}).
		Page(ctx, "created_at DESC, id DESC", limit, offset)
	if evs == nil {
		evs = []Event{}
	}
	return evs, total, err
}

// Page returns up to limit of the workspace's events of kinds (of every
// kind when kinds is nil), oldest first (by time, then id): from since
// when afterID is "" (from the first when since is zero too), else those
// after the event afterID, written at since. Export and the reports'
// rebuild read the log in pages with it, through the workspace's events
// by time. Returns only the database's errors.
func (l *Log) Page(ctx context.Context, workspaceID string, kinds []string, since time.Time, afterID string, limit int) ([]Event, error) {
	var page []Event
	q := l.db.IDB(ctx).NewSelect().Model(&page).Where("workspace_id = ?", workspaceID)
	if kinds != nil {
		q = q.Where("kind IN (?)", bun.In(kinds))
	}
	switch {
	case afterID != "":
		q = q.Where("(created_at > ? OR (created_at = ? AND id > ?))", since, since, afterID)
	case !since.IsZero():
		q = q.Where("created_at >= ?", since)
	}
	err := q.OrderExpr("created_at, id").Limit(int64(limit)).Scan(ctx)
	return page, err
}

// Exported is one event as `leadline events export` writes it.
type Exported struct {
	ID           string         `json:"id"`
	At           time.Time      `json:"at"`
	Kind         string         `json:"kind"`
	LeadID       *string        `json:"lead_id"`
	SenderID     *string        `json:"sender_id"`
	SequenceID   *string        `json:"sequence_id"`
	EnrollmentID *string        `json:"enrollment_id"`
	StepID       *string        `json:"step_id"`
	ClientID     *string        `json:"client_id"`
	Data         map[string]any `json:"data"`
}

// Export writes the workspace's events at or after since as NDJSON, oldest
// first, reading them in pages so that a large log streams.
func (l *Log) Export(ctx context.Context, workspaceID string, since time.Time, w io.Writer) error {
	enc := json.NewEncoder(w)
	after, afterID := since, ""
	for {
		page, err := l.Page(ctx, workspaceID, nil, after, afterID, 1000)
		if err != nil {
			return err
		}
		for _, e := range page {
			if err := enc.Encode(Exported{ID: e.ID, At: e.CreatedAt, Kind: e.Kind, LeadID: opt(e.LeadID), SenderID: opt(e.SenderID),
				SequenceID: opt(e.SequenceID), EnrollmentID: opt(e.EnrollmentID), StepID: opt(e.StepID), ClientID: opt(e.ClientID), Data: e.Data}); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
		after, afterID = page[len(page)-1].CreatedAt, page[len(page)-1].ID
	}
}

// ReadExport reads what Export wrote: one event a line.
func ReadExport(r io.Reader) ([]Exported, error) {
	var out []Exported
	dec := json.NewDecoder(r)
	for {
		var e Exported
		if err := dec.Decode(&e); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Actor is a read view for another area's statement: the SQL expression
// of the member who wrote the lead's first event of kind about an
// enrollment, or NULL (an event the runner or a command wrote names no
// member). lead, enrollment and kind are SQL expressions (a column, or ?
// for an argument). It reads the lead's events through their lead_id
// index.
func Actor(lead, enrollment, kind string) string {
	return "(SELECT ev.member_id FROM events AS ev WHERE ev.lead_id = " + lead + " AND ev.enrollment_id = " + enrollment +
		" AND ev.kind = " + kind + " ORDER BY ev.created_at, ev.id LIMIT 1)"
}
