package webhooks_test

import (
	"testing"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	fx "github.com/leadline/leadline/internal/fixture"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/webhooks/webhookstest"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	dbtest.Contract(t, func(t *testing.T, open func(t *testing.T) *db.DB) {
		webhookstest.TestStore(t, func(t *testing.T) (webhooks.Store, string) {
			d := open(t)
			return webhooks.NewBunStore(d), fx.New(t, d, fx.Spec{}).WorkspaceID
		})
	})
}
