package senders_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
	"github.com/leadline/leadline/transports/unipile"
)

// TestByTransport lists the senders of a transport across workspaces,
// paused ones too.
func TestByTransport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d, time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC))
		b.apply(t, senders.Spec{Name: "anna", Channel: senders.LinkedIn})
		store := senders.NewBunStore(d)
		var want []string
		for _, st := range []senders.Status{senders.Active, senders.Paused} {
			addr := string(st) + "@acme.test"
			s := &senders.Sender{ID: apikit.NewID(), WorkspaceID: b.ws.ID, Name: string(st), Channel: senders.Email, Address: &addr,
				Timezone: "UTC", Transport: email.Name, Status: st, Schedule: senders.DefaultSchedule(),
				Caps: senders.Caps{"email": 30}, Health: senders.Healthy, CreatedAt: b.clock.Now(), UpdatedAt: b.clock.Now()}
			is.NoErr(store.Save(ctx, s, true))
			want = append(want, s.ID)
		}
		got, err := b.svc.ByTransport(ctx, email.Name)
		is.NoErr(err)
		var ids []string
		for _, s := range got {
			ids = append(ids, s.ID)
		}
		if want[0] > want[1] {
			want[0], want[1] = want[1], want[0]
		}
		is.Equal(ids, want) // by id, the sandbox sender left out
		none, err := b.svc.ByTransport(ctx, unipile.Name)
		is.NoErr(err)
		is.Equal(len(none), 0)
	})
}
