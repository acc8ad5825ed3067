package email

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// TestStatesLease: one reader holds a mailbox's lease at a time; its
// progress survives the lease changing hands.
func TestStatesLease(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock := apikit.NewFakeClock(t0)
		s := newSender(t, d, clock, "anna@leadline.test", nil)
		st := NewStates(d)
		now := clock.Now()

		m, ok, err := st.Take(ctx, s.ID, "a", now, now.Add(time.Minute))
		is.NoErr(err)
		is.True(ok)
		is.Equal(m.LastUID, uint32(0)) // a new mailbox
		is.Equal(*m.LeaseOwner, "a")
		_, ok, err = st.Take(ctx, s.ID, "b", now, now.Add(time.Minute))
		is.NoErr(err)
		is.True(!ok) // a holds it
		_, ok, err = st.Take(ctx, s.ID, "a", now, now.Add(2*time.Minute))
		is.NoErr(err)
		is.True(ok) // a takes its own again
		is.NoErr(st.Renew(ctx, s.ID, "a", now.Add(3*time.Minute)))
		is.True(errors.Is(st.Save(ctx, s.ID, "b", "INBOX", 7, 10, now), ErrLeaseLost))
		is.True(errors.Is(st.Renew(ctx, s.ID, "b", now.Add(time.Hour)), ErrLeaseLost))

		is.NoErr(st.InTx(ctx, func(ctx context.Context) error { return st.Save(ctx, s.ID, "a", "INBOX", 7, 10, now) }))

		// a stops renewing: b takes the lease when it runs out.
		clock.Advance(3 * time.Minute)
		now = clock.Now()
		m, ok, err = st.Take(ctx, s.ID, "b", now, now.Add(time.Minute))
		is.NoErr(err)
		is.True(ok)
		is.Equal(m.Folder, "INBOX")
		is.Equal(m.UIDValidity, uint32(7))
		is.Equal(m.LastUID, uint32(10))
		is.True(errors.Is(st.Save(ctx, s.ID, "a", "INBOX", 7, 11, now), ErrLeaseLost)) // a lost it
		is.True(errors.Is(st.Renew(ctx, s.ID, "a", now.Add(time.Hour)), ErrLeaseLost))

		// Large UIDs and UIDVALIDITYs (32 bits unsigned) are kept.
		is.NoErr(st.Save(ctx, s.ID, "b", "INBOX", 4_000_000_000, 4_000_000_001, now))
		got, err := st.Get(ctx, s.ID)
		is.NoErr(err)
		is.Equal(got.UIDValidity, uint32(4_000_000_000))
		is.Equal(got.LastUID, uint32(4_000_000_001))

		// Released, a takes it at once.
		is.NoErr(st.Release(ctx, s.ID, "b"))
		m, ok, err = st.Take(ctx, s.ID, "a", now, now.Add(time.Minute))
		is.NoErr(err)
		is.True(ok)
		is.Equal(m.LastUID, uint32(4_000_000_001))
	})
}
