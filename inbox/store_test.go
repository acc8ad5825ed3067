package inbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/inbox/inboxtest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/workspace"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	dbtest.Contract(t, func(t *testing.T, open func(t *testing.T) *db.DB) {
		inboxtest.TestStore(t, func(t *testing.T) (inbox.Store, inboxtest.Fixture) {
			d := open(t)
			ctx := context.Background()
			clock := apikit.NewFakeClock(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
			w, clients, _, err := workspace.NewService(d, clock).ApplyWorkspace(ctx, workspace.WorkspaceSpec{Name: "contract", Timezone: "UTC",
				Members: []workspace.MemberSpec{{Email: "owner@contract.test", Role: apikit.RoleOwner}}})
			if err != nil {
				t.Fatal(err)
			}
			ss := senders.NewService(d, clock, events.NewLog(d, clock))
			if _, err := ss.Apply(ctx, senders.Owner{WorkspaceID: w.ID, Timezone: w.Timezone, Clients: clients},
				[]senders.Spec{{Name: "anna", Channel: senders.LinkedIn}}); err != nil {
				t.Fatal(err)
			}
			s, err := ss.ByName(ctx, w.ID, "anna")
			if err != nil {
				t.Fatal(err)
			}
			l := &leads.Lead{ID: apikit.NewID(), WorkspaceID: w.ID, Custom: map[string]any{}, CreatedAt: clock.Now(), UpdatedAt: clock.Now()}
			if err := leads.NewBunStore(d).Insert(ctx, l); err != nil {
				t.Fatal(err)
			}
			return inbox.NewBunStore(d), inboxtest.Fixture{WorkspaceID: w.ID, SenderID: s.ID, LeadID: l.ID}
		})
	})
}
