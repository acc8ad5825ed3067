package sequences_test

import (
	"context"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/sequences/sequencestest"
	"github.com/leadline/leadline/workspace"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	dbtest.Contract(t, func(t *testing.T, open func(t *testing.T) *db.DB) {
		sequencestest.TestStore(t, func(t *testing.T) (sequences.Store, string, [2]string) {
			d := open(t)
			ctx := context.Background()
			ws := workspace.NewService(d, apikit.NewFakeClock(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)))
			w, clients, _, err := ws.ApplyWorkspace(ctx, workspace.WorkspaceSpec{Name: "contract", Timezone: "UTC",
				Members: []workspace.MemberSpec{{Email: "owner@contract.test", Role: apikit.RoleOwner}}, Clients: []string{"Globex", "Initech"}})
			if err != nil {
				t.Fatal(err)
			}
			return sequences.NewBunStore(d), w.ID, [2]string{clients["Globex"], clients["Initech"]}
		})
	})
}
