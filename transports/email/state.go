package email

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
)

// Mailbox is where the reader is in a sender's inbox (a row of mailboxes):
// the folder read, its UIDVALIDITY and the last UID taken in, and who
// holds the lease on it.
type Mailbox struct {
	bun.BaseModel `bun:"table:mailboxes,alias:mb"`

	SenderID    string     `bun:"sender_id,pk"`
	Folder      string     `bun:"folder"`
	UIDValidity uint32     `bun:"uid_validity"`
	LastUID     uint32     `bun:"last_uid"`
	LeaseOwner  *string    `bun:"lease_owner"`
	LeaseUntil  *time.Time `bun:"lease_until"`
	UpdatedAt   time.Time  `bun:"updated_at"`
}

// ErrLeaseLost is a lease that another reader holds now: what this one
// read is left to it.
var ErrLeaseLost = errors.New("the mailbox's lease is held by another reader")

// States keeps the mailboxes' progress and leases, on either engine.
// Every method joins the transaction ctx carries.
type States struct{ db *db.DB }

// NewStates returns the mailboxes' store on d.
func NewStates(d *db.DB) *States { return &States{db: d} }

// InTx runs fn in a transaction (see db.DB.InTx): the reader queues what
// it read and saves its progress in one.
func (s *States) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.db.InTx(ctx, fn)
}

// Take takes the lease on sender's mailbox for owner until until, when
// no one holds it, it ran out at now, or owner holds it already; it
// returns the mailbox's progress and whether owner holds the lease now.
func (s *States) Take(ctx context.Context, senderID, owner string, now, until time.Time) (Mailbox, bool, error) {
	var out []Mailbox
	err := s.db.IDB(ctx).NewRaw(`INSERT INTO mailboxes AS mb (sender_id, folder, uid_validity, last_uid, lease_owner, lease_until, updated_at)
		VALUES (?, '', 0, 0, ?, ?, ?)
		ON CONFLICT (sender_id) DO UPDATE SET lease_owner = excluded.lease_owner, lease_until = excluded.lease_until
		WHERE mb.lease_owner IS NULL OR mb.lease_owner = excluded.lease_owner OR mb.lease_until IS NULL OR mb.lease_until <= ?
		RETURNING sender_id, folder, uid_validity, last_uid, lease_owner, lease_until, updated_at`,
		senderID, owner, s.db.TimeArg(&until), s.db.TimeArg(&now), s.db.TimeArg(&now)).Scan(ctx, &out)
	if err != nil || len(out) == 0 {
		return Mailbox{}, false, err
	}
	return out[0], true, nil
}

// Renew extends owner's lease until until; ErrLeaseLost when owner no
// longer holds it.
func (s *States) Renew(ctx context.Context, senderID, owner string, until time.Time) error {
	return s.held(s.db.IDB(ctx).NewUpdate().Model((*Mailbox)(nil)).Set("lease_until = ?", s.db.TimeArg(&until)).
		Where("sender_id = ? AND lease_owner = ?", senderID, owner).Exec(ctx))
}

// Release gives owner's lease up, for another reader to take at once.
func (s *States) Release(ctx context.Context, senderID, owner string) error {
	_, err := s.db.IDB(ctx).NewUpdate().Model((*Mailbox)(nil)).Set("lease_owner = NULL").Set("lease_until = NULL").
		Where("sender_id = ? AND lease_owner = ?", senderID, owner).Exec(ctx)
	return err
}

// Save records owner's progress in sender's mailbox: the folder, its
// UIDVALIDITY and the last UID taken in. ErrLeaseLost when owner no
// longer holds the lease (the transaction that queued what was read
// should then roll back).
func (s *States) Save(ctx context.Context, senderID, owner, folder string, uidValidity, lastUID uint32, now time.Time) error {
	return s.held(s.db.IDB(ctx).NewUpdate().Model((*Mailbox)(nil)).
		Set("folder = ?", folder).Set("uid_validity = ?", uidValidity).Set("last_uid = ?", lastUID).Set("updated_at = ?", s.db.TimeArg(&now)).
		Where("sender_id = ? AND lease_owner = ?", senderID, owner).Exec(ctx))
}

// Get returns sender's mailbox row.
func (s *States) Get(ctx context.Context, senderID string) (Mailbox, error) {
	var m Mailbox
	err := s.db.IDB(ctx).NewSelect().Model(&m).Where("sender_id = ?", senderID).Scan(ctx)
	return m, err
}

// held is ErrLeaseLost for an update that changed no row.
func (s *States) held(res sql.Result, err error) error {
	changed, err := db.Changed(res, err)
	if err == nil && !changed {
		return ErrLeaseLost
	}
	return err
}
