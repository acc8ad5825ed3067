package inbox_test

import (
	"testing"

	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/inbox/inboxtest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/fixture"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	dbtest.Contract(t, func(t *testing.T, open func(t *testing.T) *db.DB) {
		inboxtest.TestStore(t, func(t *testing.T) (inbox.Store, inboxtest.Fixture) {
			d := open(t)
			w := fixture.New(t, d, fixture.Spec{Sender: true, Leads: 1})
			return inbox.NewBunStore(d), inboxtest.Fixture{WorkspaceID: w.WorkspaceID, SenderID: w.SenderID, LeadID: w.LeadIDs[0]}
		})
	})
}
