package leads_test

import (
	"testing"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/fixture"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/leads/leadstest"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	dbtest.Contract(t, func(t *testing.T, open func(t *testing.T) *db.DB) {
		leadstest.TestStore(t, func(t *testing.T) (leads.Store, leadstest.Fixture) {
			d := open(t)
			w := fixture.New(t, d, fixture.Spec{Clients: []string{"Globex"}, Tags: []string{"hot", "cold"}})
			return leads.NewBunStore(d), leadstest.Fixture{WorkspaceID: w.WorkspaceID, ClientID: w.Clients["Globex"], TagIDs: [2]string{w.Tags[0].ID, w.Tags[1].ID}}
		})
	})
}
