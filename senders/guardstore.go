package senders

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// SampleOf names a sender whose recent history a guard reads, and the
// moment its window starts (a manager's resumption; zero: its whole
// history).
type SampleOf struct {
	SenderID string
	Since    time.Time
}

// Sample is what a rate guard counts over a sender's window: the actions
// and those that hit (invitations accepted, emails that bounced hard).
type Sample struct {
	Sent, Hits int
}

// EmailSend is an email a mailbox sent to a lead, and whether it bounced
// hard: the bounce-rate guard's history.
type EmailSend struct {
	bun.BaseModel `bun:"table:email_sends"`

	ID            string     `bun:"id,pk"`
	SenderID      string     `bun:"sender_id"`
	LeadID        string     `bun:"lead_id"`
	SentAt        time.Time  `bun:"sent_at"`
	HardBouncedAt *time.Time `bun:"hard_bounced_at"`
}

// epoch stands for "since the beginning" in a window's bound.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func since(t time.Time) time.Time {
	if t.Before(epoch) {
		return epoch
	}
	return t
}

// Pace takes the sender's next action slot when it is free at now: the
// slot then moves to next. It reports whether it took it, and otherwise
// when the slot frees. The conditional upsert holds the sender's row, so
// two runners cannot both take one slot.
func (b *BunStore) Pace(ctx context.Context, senderID string, now, next time.Time) (bool, time.Time, error) {
	// Both statements run before most actions: prepared once per
	// connection.
	var got []time.Time
	if err := b.db.SelectPrepared(ctx, &got, `INSERT INTO sender_pace (sender_id, next_at) VALUES (?, ?)
		ON CONFLICT (sender_id) DO UPDATE SET next_at = EXCLUDED.next_at WHERE sender_pace.next_at <= ? RETURNING next_at`,
		senderID, b.db.TimeArg(&next), b.db.TimeArg(&now)); err != nil {
		return false, time.Time{}, err
	}
	if len(got) > 0 {
		return true, next, nil
	}
	var at []time.Time
	err := b.db.SelectPrepared(ctx, &at, `SELECT next_at FROM sender_pace WHERE sender_id = ?`, senderID)
	first, err := db.First(at, err)
	return false, *first, err
}

// Unpace frees the slot Pace moved to next, as of now: the action it was
// taken for did not happen.
func (b *BunStore) Unpace(ctx context.Context, senderID string, next, now time.Time) error {
	_, err := b.db.IDB(ctx).NewRaw(`UPDATE sender_pace SET next_at = ? WHERE sender_id = ? AND next_at = ?`, now, senderID, next).Exec(ctx)
	return err
}

// sample counts, for each sender, over its latest rows of table (at most
// last) sent in its window, the rows and those whose hit column is set:
// one branch per sender, each through the sender's index.
func (b *BunStore) sample(ctx context.Context, table, hit string, of []SampleOf, sentBefore time.Time, last int) (map[string]Sample, error) {
	rows, err := unionAll[SampleOf, struct {
		SenderID string `bun:"sender_id"`
		Sent     int    `bun:"sent"`
		Hits     int    `bun:"hits"`
	}](ctx, b.db, of, fmt.Sprintf(`SELECT CAST(? AS TEXT) AS sender_id, count(*) AS sent, count(r.%[2]s) AS hits FROM (SELECT %[2]s FROM %[1]s WHERE sender_id = ? AND sent_at >= ? AND sent_at < ? ORDER BY sent_at DESC LIMIT ?) AS r`, table, hit),
		func(s SampleOf) []any {
			from := since(s.Since)
			return []any{s.SenderID, s.SenderID, b.db.TimeArg(&from), b.db.TimeArg(&sentBefore), last}
		})
	out := make(map[string]Sample, len(of))
	for _, r := range rows {
		out[r.SenderID] = Sample{Sent: r.Sent, Hits: r.Hits}
	}
	return out, err
}

// unionAll runs branch, a SELECT with placeholders, once for each of
// items with args(item), up to statsChunk branches to a statement joined
// by UNION ALL, and returns every branch's rows: a question asked of many
// senders at once, each branch through the sender's own index.
func unionAll[T, R any](ctx context.Context, d *db.DB, items []T, branch string, args func(T) []any) ([]R, error) {
	var out []R
	for part := range slices.Chunk(items, statsChunk) {
		var q strings.Builder
		all := make([]any, 0, 8*len(part))
		for i, it := range part {
			if i > 0 {
				q.WriteString(" UNION ALL ")
			}
			q.WriteString(branch)
			all = append(all, args(it)...)
		}
		var rows []R
		// Prepared once per connection and number of branches: the
		// runner asks these for the same senders tick after tick.
		if err := d.SelectPrepared(ctx, &rows, q.String(), all...); err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// AcceptanceSample counts each sender's latest invitations (at most last)
// sent in its window and before sentBefore, and those accepted.
func (b *BunStore) AcceptanceSample(ctx context.Context, of []SampleOf, sentBefore time.Time, last int) (map[string]Sample, error) {
	return b.sample(ctx, "invitations", "accepted_at", of, sentBefore, last)
}

// BounceSample counts each sender's latest emails (at most last) sent in
// its window, and those that bounced hard.
func (b *BunStore) BounceSample(ctx context.Context, of []SampleOf, last int) (map[string]Sample, error) {
	return b.sample(ctx, "email_sends", "hard_bounced_at", of, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), last)
}

// InsertEmailSend records an email a mailbox sent.
func (b *BunStore) InsertEmailSend(ctx context.Context, e *EmailSend) error {
	_, err := b.db.IDB(ctx).NewInsert().Model(e).Exec(ctx)
	return err
}

// MarkHardBounce marks the sender's latest email to the lead bounced
// hard, and reports whether there was one not marked yet.
func (b *BunStore) MarkHardBounce(ctx context.Context, senderID, leadID string, at time.Time) (bool, error) {
	res, err := b.db.IDB(ctx).NewRaw(`UPDATE email_sends SET hard_bounced_at = ? WHERE hard_bounced_at IS NULL AND id = (
		SELECT id FROM email_sends WHERE sender_id = ? AND lead_id = ? ORDER BY sent_at DESC LIMIT 1)`, at, senderID, leadID).Exec(ctx)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// StaleOf asks for up to Limit of a sender's pending invitations sent
// before SentBefore.
type StaleOf struct {
	SenderID   string
	SentBefore time.Time
	Limit      int
}

// StaleInvitations returns, by sender, what each of of asks for, oldest
// first: one statement for up to statsChunk senders, a branch per sender
// through its index.
func (b *BunStore) StaleInvitations(ctx context.Context, of []StaleOf) (map[string][]SentInvitation, error) {
	rows, err := unionAll[StaleOf, Invitation](ctx, b.db, of, `SELECT * FROM (SELECT sender_id, lead_id, provider_id, member_id, sent_at
		FROM invitations WHERE sender_id = ? AND sent_at < ? AND accepted_at IS NULL AND withdrawn_at IS NULL ORDER BY sent_at LIMIT ?) AS r`,
		func(s StaleOf) []any { return []any{s.SenderID, b.db.TimeArg(&s.SentBefore), s.Limit} })
	out := map[string][]SentInvitation{}
	for _, r := range rows {
		out[r.SenderID] = append(out[r.SenderID], SentInvitation{LeadID: r.LeadID, Invitation: apikit.Deref(r.ProviderID), MemberID: apikit.Deref(r.MemberID), SentAt: r.SentAt})
	}
	for _, invs := range out {
		// A branch's rows keep their order on both engines only within
		// it: sorted again, oldest first.
		slices.SortStableFunc(invs, func(a, b SentInvitation) int { return a.SentAt.Compare(b.SentAt) })
	}
	return out, err
}

// MarkWithdrawn marks the sender's pending invitation to the lead
// withdrawn, and reports whether it was still pending.
func (b *BunStore) MarkWithdrawn(ctx context.Context, senderID, leadID string, at time.Time) (bool, error) {
	res, err := b.db.IDB(ctx).NewUpdate().Model((*Invitation)(nil)).Set("withdrawn_at = ?", at).
		Where("sender_id = ? AND lead_id = ? AND accepted_at IS NULL AND withdrawn_at IS NULL", senderID, leadID).Exec(ctx)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
