package sequences_test

import (
	"context"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/sequences/sequencestest"
	"github.com/leadline/leadline/workspace"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			sequencestest.TestStore(t, func(t *testing.T) (sequences.Store, string, [2]string) {
				d := dbtest.Open(t, e)
				ctx := context.Background()
				ws := workspace.NewService(d, apikit.NewFakeClock(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)))
				if _, err := ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{Name: "contract", Timezone: "UTC",
					Members: []workspace.MemberSpec{{Email: "owner@contract.test", Role: apikit.RoleOwner}}, Clients: []string{"Globex", "Initech"}}}}); err != nil {
					t.Fatal(err)
				}
				w, err := ws.ByName(ctx, "contract")
				if err != nil {
					t.Fatal(err)
				}
				clients, err := ws.Named(ctx, w.ID, workspace.Clients, nil)
				if err != nil || len(clients) != 2 {
					t.Fatal(err, clients)
				}
				return sequences.NewBunStore(d), w.ID, [2]string{clients[0].ID, clients[1].ID}
			})
		})
	}
}
