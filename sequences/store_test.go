package sequences_test

import (
	"testing"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/fixture"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/sequences/sequencestest"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	dbtest.Contract(t, func(t *testing.T, open func(t *testing.T) *db.DB) {
		sequencestest.TestStore(t, func(t *testing.T) (sequences.Store, string, [2]string) {
			d := open(t)
			w := fixture.New(t, d, fixture.Spec{Clients: []string{"Globex", "Initech"}})
			return sequences.NewBunStore(d), w.WorkspaceID, [2]string{w.Clients["Globex"], w.Clients["Initech"]}
		})
	})
}
