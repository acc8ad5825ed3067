package senders

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// Store is the persistence the senders service needs. BunStore serves it on
// SQLite and Postgres; every method joins the transaction in ctx.
type Store interface {
	Save(ctx context.Context, s *Sender, insert bool) error
	// ByID and ByName return sql.ErrNoRows (db.IsNoRows) when the
	// workspace has no such sender; Save of a second sender of one name
	// in a workspace is E_CONFLICT.
	ByID(ctx context.Context, workspaceID, id string) (*Sender, error)
	ByIDs(ctx context.Context, ids []string) ([]Sender, error)
	ByName(ctx context.Context, workspaceID, name string) (*Sender, error)
	List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Sender, int, error)
	InWorkspace(ctx context.Context, workspaceID string) ([]Sender, error)
	Refs(ctx context.Context, workspaceID string, ids []string) ([]Ref, error)
	Costs(ctx context.Context, workspaceID string) ([]Cost, error)
	LeadInvitations(ctx context.Context, leadID string) ([]Invitation, error)
	Usage(ctx context.Context, senderID, fromDay, toDay string) ([]Usage, error)
	Take(ctx context.Context, senderID, day, key string, limit int) (bool, error)
	GiveBack(ctx context.Context, senderID, day, key string) error
	InsertInvitation(ctx context.Context, inv *Invitation) error
	PendingInvitations(ctx context.Context, senderID string, limit int) ([]SentInvitation, error)
	InvitationLead(ctx context.Context, senderID, invitation, memberID string) (string, error)
	AcceptInvitation(ctx context.Context, senderID, leadID string, at time.Time) (*time.Time, error)
	InvitationStats(ctx context.Context, senderIDs []string, sentBefore time.Time, last int) (map[string]InvitationStats, error)
	MarkChecked(ctx context.Context, senderIDs []string, at time.Time) error
	// The guards' history (guardstore.go).
	Pace(ctx context.Context, senderID string, now, next time.Time) (bool, time.Time, error)
	Unpace(ctx context.Context, senderID string, next, now time.Time) error
	AcceptanceSample(ctx context.Context, of []SampleOf, sentBefore time.Time, last int) (map[string]Sample, error)
	BounceSample(ctx context.Context, of []SampleOf, last int) (map[string]Sample, error)
	InsertEmailSend(ctx context.Context, e *EmailSend) error
	MarkHardBounce(ctx context.Context, senderID, leadID string, at time.Time) (bool, error)
	StaleInvitations(ctx context.Context, of []StaleOf) (map[string][]SentInvitation, error)
	UsageOn(ctx context.Context, senderIDs []string, key string, day func(senderID string) string) (map[string]int, error)
	MarkWithdrawn(ctx context.Context, senderID, leadID string, at time.Time) (bool, error)
}

// InvitationStats is what a sender's health reads of its invitations: over
// its latest settled ones, how many were sent and accepted, and how many of
// all are pending.
type InvitationStats struct {
	Sent, Accepted, Pending int
}

// statsChunk is how many senders one statement of InvitationStats or a
// guard's sample covers.
const statsChunk = 100

// Filter narrows a list of senders.
type Filter struct {
	ClientID string
	Channel  Channel
	Status   Status
	Limit    int
	Offset   int
}

// Usage is what a sender used of one action (or of the month's invitation
// notes) on one local day.
type Usage struct {
	bun.BaseModel `bun:"table:sender_usage"`

	SenderID string `bun:"sender_id,pk"`
	Day      string `bun:"day,pk"`
	Action   string `bun:"action,pk"`
	Used     int    `bun:"used"`
}

// Invitation is a LinkedIn invitation a sender sent to a lead.
type Invitation struct {
	bun.BaseModel `bun:"table:invitations"`

	ID          string     `bun:"id,pk"`
	WorkspaceID string     `bun:"workspace_id"`
	SenderID    string     `bun:"sender_id"`
	LeadID      string     `bun:"lead_id"`
	WithNote    bool       `bun:"with_note"`
	SentAt      time.Time  `bun:"sent_at"`
	AcceptedAt  *time.Time `bun:"accepted_at"`
	WithdrawnAt *time.Time `bun:"withdrawn_at"`
	// ProviderID is the provider's id of the invitation; MemberID its id
	// of the person invited. Either may be nil (an older invitation, a
	// transport that reports neither).
	ProviderID *string `bun:"provider_id"`
	MemberID   *string `bun:"member_id"`
}

// BunStore is the Store on bun, for both engines.
type BunStore struct {
	db *db.DB
	// byID and byIDs read senders by id, which the runner does every
	// tick: prepared once per connection.
	byID, byIDs *db.InQuery
}

// NewBunStore returns the store on d.
func NewBunStore(d *db.DB) *BunStore {
	b := &BunStore{db: d}
	b.byID, b.byIDs = db.IDQueries(d, (*Sender)(nil), "s")
	return b
}

// Save inserts or updates s.
func (b *BunStore) Save(ctx context.Context, s *Sender, insert bool) error {
	idb := b.db.IDB(ctx)
	if insert {
		_, err := idb.NewInsert().Model(s).Exec(ctx)
		return db.Conflict(err, "A sender named "+s.Name+" already exists in this workspace.", "Give each sender a unique name.")
	}
	_, err := idb.NewUpdate().Model(s).WherePK().Exec(ctx)
	return err
}

// ByID returns the workspace's sender with id.
func (b *BunStore) ByID(ctx context.Context, workspaceID, id string) (*Sender, error) {
	return db.First(db.SelectList[Sender](ctx, b.db, b.byID, []any{workspaceID}, []string{id}))
}

// ByIDs returns the senders with ids, of any workspace.
func (b *BunStore) ByIDs(ctx context.Context, ids []string) ([]Sender, error) {
	return db.SelectList[Sender](ctx, b.db, b.byIDs, nil, ids)
}

// ByName returns the workspace's sender named name.
func (b *BunStore) ByName(ctx context.Context, workspaceID, name string) (*Sender, error) {
	s := new(Sender)
	err := b.db.IDB(ctx).NewSelect().Model(s).Where("s.workspace_id = ? AND s.name = ?", workspaceID, name).Scan(ctx)
	return s, err
}

// List returns one page of the workspace's senders, by name, limited to the
// clients in scope when scope is not empty.
func (b *BunStore) List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Sender, int, error) {
	return db.List[Sender](b.db.IDB(ctx), "s", workspaceID, scope).
		Equal("client_id", f.ClientID).Equal("channel", string(f.Channel)).Equal("status", string(f.Status)).
		Page(ctx, "s.name, s.id", f.Limit, f.Offset)
}

// InWorkspace returns every sender of the workspace, by name.
func (b *BunStore) InWorkspace(ctx context.Context, workspaceID string) ([]Sender, error) {
	var out []Sender
	err := b.db.IDB(ctx).NewSelect().Model(&out).Where("s.workspace_id = ?", workspaceID).OrderExpr("s.name").Scan(ctx)
	return out, err
}

// Usage returns a sender's usage rows from fromDay to toDay, inclusive.
func (b *BunStore) Usage(ctx context.Context, senderID, fromDay, toDay string) ([]Usage, error) {
	// Every invitation the runner reserves reads its week: prepared once
	// per connection.
	var out []Usage
	err := b.db.SelectPrepared(ctx, &out, "SELECT sender_id, day, action, used FROM sender_usage WHERE sender_id = ? AND day >= ? AND day <= ?",
		senderID, fromDay, toDay)
	return out, err
}

// UsageOn returns how much of key each sender used on its day (day gives
// each sender's local date): one statement for up to statsChunk senders.
func (b *BunStore) UsageOn(ctx context.Context, senderIDs []string, key string, day func(senderID string) string) (map[string]int, error) {
	rows, err := unionAll[string, Usage](ctx, b.db, senderIDs, "SELECT sender_id, day, action, used FROM sender_usage WHERE sender_id = ? AND day = ? AND action = ?",
		func(id string) []any { return []any{id, day(id), key} })
	out := make(map[string]int, len(senderIDs))
	for _, r := range rows {
		out[r.SenderID] += r.Used
	}
	return out, err
}

// Take adds one to the counter (sender, day, key) when it is below limit,
// in one statement, and reports whether it did. Inside a transaction the
// counter's row stays locked until commit, so two runners cannot both take
// the last unit. The runner takes at every action: the statement is
// prepared once per connection.
func (b *BunStore) Take(ctx context.Context, senderID, day, key string, limit int) (bool, error) {
	if limit <= 0 {
		return false, nil
	}
	var used []int
	err := b.db.SelectPrepared(ctx, &used, `INSERT INTO sender_usage (sender_id, day, action, used) VALUES (?, ?, ?, 1)
		 ON CONFLICT (sender_id, day, action) DO UPDATE SET used = sender_usage.used + 1
		 WHERE sender_usage.used < ? RETURNING used`, senderID, day, key, limit)
	return err == nil && len(used) > 0, err
}

// GiveBack returns one unit of (sender, day, key): the action it was taken
// for did not happen.
func (b *BunStore) GiveBack(ctx context.Context, senderID, day, key string) error {
	_, err := b.db.IDB(ctx).NewUpdate().Model((*Usage)(nil)).Set("used = used - 1").
		Where("sender_id = ? AND day = ? AND action = ? AND used > 0", senderID, day, key).Exec(ctx)
	return err
}

// InsertInvitation records an invitation; a repeated one to the same lead
// replaces the earlier record's times.
func (b *BunStore) InsertInvitation(ctx context.Context, inv *Invitation) error {
	_, err := b.db.IDB(ctx).NewInsert().Model(inv).
		On("CONFLICT (sender_id, lead_id) DO UPDATE").
		Set("sent_at = EXCLUDED.sent_at, with_note = EXCLUDED.with_note, accepted_at = NULL, withdrawn_at = NULL, " +
			"provider_id = EXCLUDED.provider_id, member_id = EXCLUDED.member_id").Exec(ctx)
	return err
}

// PendingInvitations returns up to limit of the sender's invitations that
// are neither accepted nor withdrawn, newest first, through the index of
// pending invitations.
func (b *BunStore) PendingInvitations(ctx context.Context, senderID string, limit int) ([]SentInvitation, error) {
	var rows []Invitation
	err := b.db.IDB(ctx).NewSelect().Model(&rows).Column("lead_id", "provider_id", "member_id", "sent_at").
		Where("sender_id = ? AND accepted_at IS NULL AND withdrawn_at IS NULL", senderID).
		OrderExpr("sent_at DESC").Limit(int64(limit)).Scan(ctx)
	out := make([]SentInvitation, 0, len(rows))
	for _, r := range rows {
		out = append(out, SentInvitation{LeadID: r.LeadID, Invitation: apikit.Deref(r.ProviderID), MemberID: apikit.Deref(r.MemberID), SentAt: r.SentAt})
	}
	return out, err
}

// InvitationLead returns the lead of the sender's invitation with the
// provider's id invitation, or else to the person memberID; "" when it
// sent none. Each is read through its own index.
func (b *BunStore) InvitationLead(ctx context.Context, senderID, invitation, memberID string) (string, error) {
	for _, by := range []struct{ col, v string }{{"provider_id", invitation}, {"member_id", memberID}} {
		if by.v == "" {
			continue
		}
		var lead string
		err := b.db.IDB(ctx).NewSelect().Model((*Invitation)(nil)).Column("lead_id").
			Where("sender_id = ? AND ? = ?", senderID, bun.Ident(by.col), by.v).OrderExpr("sent_at DESC").Limit(1).Scan(ctx, &lead)
		if err == nil {
			return lead, nil
		}
		if !db.IsNoRows(err) {
			return "", err
		}
	}
	return "", nil
}

// AcceptInvitation marks the sender's pending invitation to the lead
// accepted, and reports whether there was one.
func (b *BunStore) AcceptInvitation(ctx context.Context, senderID, leadID string, at time.Time) (*time.Time, error) {
	var sent []time.Time
	err := b.db.IDB(ctx).NewUpdate().Model((*Invitation)(nil)).Set("accepted_at = ?", at).
		Where("sender_id = ? AND lead_id = ? AND accepted_at IS NULL AND withdrawn_at IS NULL", senderID, leadID).
		Returning("sent_at").Scan(ctx, &sent)
	if err != nil || len(sent) == 0 {
		return nil, err
	}
	return &sent[0], nil
}

// InvitationStats counts, for each of the senders, over its last
// invitations sent before sentBefore (at most last of them), how many were
// sent and accepted; and how many of all its invitations are pending now.
// A few statements serve all the senders, each sender's part through its
// indexes.
func (b *BunStore) InvitationStats(ctx context.Context, senderIDs []string, sentBefore time.Time, last int) (map[string]InvitationStats, error) {
	idb := b.db.IDB(ctx)
	out := make(map[string]InvitationStats, len(senderIDs))
	for part := range slices.Chunk(senderIDs, statsChunk) {
		of := make([]SampleOf, len(part))
		for i, id := range part {
			of[i] = SampleOf{SenderID: id}
		}
		sample, err := b.AcceptanceSample(ctx, of, sentBefore, last)
		if err != nil {
			return nil, err
		}
		for id, r := range sample {
			out[id] = InvitationStats{Sent: r.Sent, Accepted: r.Hits}
		}
		var pending []struct {
			SenderID string `bun:"sender_id"`
			N        int    `bun:"n"`
		}
		if err := idb.NewSelect().Model((*Invitation)(nil)).Column("sender_id").ColumnExpr("count(*) AS n").
			Where("sender_id IN (?) AND accepted_at IS NULL AND withdrawn_at IS NULL", bun.In(part)).
			Group("sender_id").Scan(ctx, &pending); err != nil {
			return nil, err
		}
		for _, r := range pending {
			st := out[r.SenderID]
			st.Pending = r.N
			out[r.SenderID] = st
		}
	}
	return out, nil
}

// MarkChecked records that the senders' health was computed at at, for
// senders whose health did not change.
func (b *BunStore) MarkChecked(ctx context.Context, senderIDs []string, at time.Time) error {
	for part := range slices.Chunk(senderIDs, statsChunk) {
		if _, err := b.db.IDB(ctx).NewUpdate().Model((*Sender)(nil)).Set("health_checked_at = ?", at).
			Where("id IN (?)", bun.In(part)).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}
