package inbox

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
)

// Store is the persistence the inbox needs. BunStore serves it on SQLite
// and Postgres; every method joins the transaction in ctx.
type Store interface {
	// Conversation returns the thread of sender, lead and channel, making
	// it (from t) when there is none; inside a transaction on Postgres
	// the row stays locked until commit.
	Conversation(ctx context.Context, t *Thread) (*Thread, error)
	// ByID returns the workspace's thread with id, locked until commit
	// when lock is set (on Postgres, in a transaction). Returns
	// sql.ErrNoRows (db.IsNoRows) if the workspace has none.
	ByID(ctx context.Context, workspaceID, id string, lock bool) (*Thread, error)
	Prefetch(ctx context.Context, workspaceID string, pairs [][2]string, channel map[string]string) error
	SaveThread(ctx context.Context, t *Thread) error
	// LatestThread returns the lead's thread with the latest message
	// (with senderID, when it is not empty), or nil when it has none.
	LatestThread(ctx context.Context, leadID, senderID string) (*Thread, error)
	// AddMessage inserts m unless its thread has the same provider
	// message in the same direction; it reports whether it inserted.
	AddMessage(ctx context.Context, m *Message) (bool, error)
	SaveMessage(ctx context.Context, m *Message) error
	DeleteMessage(ctx context.Context, m *Message) error
	Messages(ctx context.Context, threadID string) ([]Message, error)
	LastInbound(ctx context.Context, threadID string) (*Message, error)
	List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Thread, int, error)
	// Thread returns the thread of sender, lead and channel, or nil.
	Thread(ctx context.Context, workspaceID, senderID, leadID string, ch senders.Channel) (*Thread, error)
	// SentIDs returns the provider ids and subjects of a thread's sent
	// messages, oldest first, at most limit.
	SentIDs(ctx context.Context, threadID string, limit int) ([]Message, error)
	// LeadBySent returns the lead of the workspace's thread holding a sent
	// message with one of the provider ids, or "".
	LeadBySent(ctx context.Context, workspaceID string, ids []string) (string, error)
	// LeadByConversation returns the lead of the sender's thread holding
	// a sent message whose provider id starts with prefix, or "".
	LeadByConversation(ctx context.Context, workspaceID, senderID, prefix string) (string, error)
	// MoveLead sets the client of the lead's threads.
	MoveLead(ctx context.Context, workspaceID, leadID string, clientID *string, now time.Time) error
}

// Filter narrows a list of threads.
type Filter struct {
	Intent       Intent
	AssigneeID   string // "none": unassigned
	SenderID     string
	SequenceID   string
	ClientID     string
	LeadID       string
	Unread       *bool
	NeedsReview  *bool
	UpdatedSince *time.Time
	Limit        int
	Offset       int
}

// BunStore is the Store on bun, for both engines.
type BunStore struct {
	db *db.DB
	// conversation is the read of a conversation's thread, with
	// placeholders, prepared once per connection; [1] locks it.
	conversationOnce sync.Once
	conversation     [2]string
}

// NewBunStore returns the store on d.
func NewBunStore(d *db.DB) *BunStore { return &BunStore{db: d} }

func (b *BunStore) locked(ctx context.Context, q *bun.SelectQuery) *bun.SelectQuery {
	if _, inTx := b.db.IDB(ctx).(bun.Tx); inTx && b.db.Engine == db.Postgres {
		return q.For("UPDATE")
	}
	return q
}

// Conversation returns, or makes, the thread of t's sender, lead and
// channel. Most replies come to a thread the runner's message opened, so
// it is looked up first.
func (b *BunStore) Conversation(ctx context.Context, t *Thread) (*Thread, error) {
	idb := b.db.IDB(ctx)
	b.conversationOnce.Do(func() {
		q := b.db.NewSelect().Model((*Thread)(nil)).Where("th.sender_id = ? AND th.lead_id = ? AND th.channel = ?", bun.Safe("?"), bun.Safe("?"), bun.Safe("?"))
		b.conversation[0] = q.String()
		b.conversation[1] = q.For("UPDATE").String()
	})
	find := func() (*Thread, error) {
		// Every message the runner sends looks its thread up: the read is
		// prepared once per connection, locked as locked locks it.
		q := b.conversation[0]
		if _, inTx := idb.(bun.Tx); inTx && b.db.Engine == db.Postgres {
			q = b.conversation[1]
		}
		var out []Thread
		if err := b.db.SelectPrepared(ctx, &out, q, t.SenderID, t.LeadID, string(t.Channel)); err != nil {
			return nil, err
		}
		if len(out) == 0 {
			return nil, sql.ErrNoRows
		}
		return &out[0], nil
	}
	// What Prefetch read for this conversation, once.
	key := threadKey{t.SenderID, t.LeadID, string(t.Channel)}
	known := false
	if memo := db.TxMemo(ctx); memo != nil {
		if v, ok := memo.LoadAndDelete(key); ok {
			if th, ok := v.(*Thread); ok {
				return th, nil
			}
			known = true // read as absent
		}
	}
	if !known {
		if out, err := find(); !db.IsNoRows(err) {
			return out, err
		}
	}
	added, err := db.InsertIfAbsent(ctx, idb, t, "sender_id, lead_id, channel")
	if err != nil {
		return nil, err
	}
	if added {
		return t, nil
	}
	return find() // another transaction made it meanwhile
}

// LatestThread returns the lead's thread with the latest message (with
// senderID, when it is not empty), or nil when it has none.
func (b *BunStore) LatestThread(ctx context.Context, leadID, senderID string) (*Thread, error) {
	var out []Thread
	q := b.db.IDB(ctx).NewSelect().Model(&out).Where("th.lead_id = ?", leadID)
	if senderID != "" {
		q = q.Where("th.sender_id = ?", senderID)
	}
	if err := q.OrderExpr("th.last_message_at DESC").Limit(1).Scan(ctx); err != nil || len(out) == 0 {
		return nil, err
	}
	return &out[0], nil
}

// threadKey is a conversation's thread in the transaction's memo.
type threadKey struct{ sender, lead, channel string }

// Prefetch reads the threads of several conversations (sender and lead
// pairs) of one workspace in one query, locked on Postgres, into the
// transaction's memo, where Conversation takes each once; a pair without
// a thread is remembered as absent.
func (b *BunStore) Prefetch(ctx context.Context, workspaceID string, pairs [][2]string, channel map[string]string) error {
	memo := db.TxMemo(ctx)
	if memo == nil || len(pairs) == 0 {
		return nil
	}
	leads := make([]string, 0, len(pairs))
	for _, p := range pairs {
		leads = append(leads, p[1])
	}
	var ths []Thread
	// By lead alone: a workspace term would let SQLite walk the
	// workspace's threads instead of the lead index.
	if err := b.locked(ctx, b.db.IDB(ctx).NewSelect().Model(&ths).Where("th.lead_id IN (?)", bun.In(leads))).Scan(ctx); err != nil {
		return err
	}
	found := map[threadKey]*Thread{}
	for i := range ths {
		if ths[i].WorkspaceID != workspaceID {
			continue
		}
		found[threadKey{ths[i].SenderID, ths[i].LeadID, string(ths[i].Channel)}] = &ths[i]
	}
	for _, p := range pairs {
		key := threadKey{p[0], p[1], channel[p[0]]}
		if th, ok := found[key]; ok {
			memo.Store(key, th)
		} else {
			memo.Store(key, false)
		}
	}
	return nil
}

// ByID returns the workspace's thread with id, locked on Postgres when
// lock is set and ctx carries a transaction.
func (b *BunStore) ByID(ctx context.Context, workspaceID, id string, lock bool) (*Thread, error) {
	t := new(Thread)
	q := b.db.IDB(ctx).NewSelect().Model(t).Where("th.workspace_id = ? AND th.id = ?", workspaceID, id)
	if lock {
		q = b.locked(ctx, q)
	}
	return t, q.Scan(ctx)
}

// SaveThread writes t.
func (b *BunStore) SaveThread(ctx context.Context, t *Thread) error {
	_, err := b.db.IDB(ctx).NewUpdate().Model(t).WherePK().Exec(ctx)
	return err
}

// AddMessage inserts m once per provider message.
func (b *BunStore) AddMessage(ctx context.Context, m *Message) (bool, error) {
	return db.InsertIfAbsent(ctx, b.db.IDB(ctx), m, "thread_id, direction, provider_message_id")
}

// SaveMessage writes m.
func (b *BunStore) SaveMessage(ctx context.Context, m *Message) error {
	_, err := b.db.IDB(ctx).NewUpdate().Model(m).WherePK().Exec(ctx)
	return err
}

// DeleteMessage removes a message that was never sent.
func (b *BunStore) DeleteMessage(ctx context.Context, m *Message) error {
	_, err := b.db.IDB(ctx).NewDelete().Model(m).WherePK().Exec(ctx)
	return err
}

// Messages returns a thread's messages, oldest first.
func (b *BunStore) Messages(ctx context.Context, threadID string) ([]Message, error) {
	var out []Message
	err := b.db.IDB(ctx).NewSelect().Model(&out).Where("m.thread_id = ?", threadID).OrderExpr("m.sent_at, m.id").Scan(ctx)
	return out, err
}

// LastInbound returns the thread's latest inbound message that a person
// wrote (not an auto-reply), or the latest auto-reply when there is none.
func (b *BunStore) LastInbound(ctx context.Context, threadID string) (*Message, error) {
	m := new(Message)
	err := b.db.IDB(ctx).NewSelect().Model(m).Where("m.thread_id = ? AND m.direction = ?", threadID, In).
		OrderExpr("m.auto_reply, m.sent_at DESC, m.id DESC").Limit(1).Scan(ctx)
	return m, err
}

// List returns one page of the workspace's threads, newest activity first.
func (b *BunStore) List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Thread, int, error) {
	q := db.List[Thread](b.db.IDB(ctx), "th", workspaceID, scope).Equal("intent", string(f.Intent)).EqualOrNone("assignee_id", f.AssigneeID)
	q.Equal("sender_id", f.SenderID).Equal("sequence_id", f.SequenceID).Equal("client_id", f.ClientID).Equal("lead_id", f.LeadID)
	if f.Unread != nil {
		q.Where("th.unread = ?", *f.Unread)
	}
	if f.NeedsReview != nil {
		q.Where("th.needs_review = ?", *f.NeedsReview)
	}
	if f.UpdatedSince != nil {
		q.Where("th.updated_at >= ?", *f.UpdatedSince)
	}
	return q.Page(ctx, "th.last_message_at DESC, th.id DESC", f.Limit, f.Offset)
}

// MoveLead sets the client of the lead's threads.
func (b *BunStore) MoveLead(ctx context.Context, workspaceID, leadID string, clientID *string, now time.Time) error {
	_, err := b.db.IDB(ctx).NewUpdate().Model((*Thread)(nil)).Set("client_id = ?", clientID).Set("updated_at = ?", now).
		Where("lead_id = ? AND workspace_id = ?", leadID, workspaceID).Exec(ctx)
	return err
}

var _ Store = (*BunStore)(nil)
