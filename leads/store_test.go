package leads_test

import (
	"context"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/leads/leadstest"
	"github.com/leadline/leadline/workspace"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	dbtest.Contract(t, func(t *testing.T, open func(t *testing.T) *db.DB) {
		leadstest.TestStore(t, func(t *testing.T) (leads.Store, leadstest.Fixture) {
			d := open(t)
			ctx := context.Background()
			ws := workspace.NewService(d, apikit.NewFakeClock(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)))
			w, clients, _, err := ws.ApplyWorkspace(ctx, workspace.WorkspaceSpec{Name: "contract", Timezone: "UTC",
				Members: []workspace.MemberSpec{{Email: "owner@contract.test", Role: apikit.RoleOwner}}, Clients: []string{"Globex"},
				Tags: []string{"hot", "cold"}})
			if err != nil {
				t.Fatal(err)
			}
			tags, err := ws.Named(ctx, w.ID, workspace.Tags, nil)
			if err != nil || len(tags) != 2 {
				t.Fatal(err, tags)
			}
			return leads.NewBunStore(d), leadstest.Fixture{WorkspaceID: w.ID, ClientID: clients["Globex"], TagIDs: [2]string{tags[0].ID, tags[1].ID}}
		})
	})
}
