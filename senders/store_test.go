package senders_test

import (
	"testing"
	"time"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/senders/senderstest"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	dbtest.Contract(t, func(t *testing.T, open func(t *testing.T) *db.DB) {
		senderstest.TestStore(t, func(t *testing.T) (senders.Store, senderstest.Fixture) {
			b := setup(t, open(t), time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
			return senders.NewBunStore(b.db), senderstest.Fixture{WorkspaceID: b.ws.ID, ClientID: b.clients["Globex"], LeadID: b.leads(t, 1)[0].ID}
		})
	})
}
