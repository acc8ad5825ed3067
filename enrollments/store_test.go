package enrollments_test

import (
	"testing"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/enrollments/enrollmentstest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	fx "github.com/leadline/leadline/internal/fixture"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	dbtest.Contract(t, func(t *testing.T, open func(t *testing.T) *db.DB) {
		enrollmentstest.TestStore(t, func(t *testing.T) (enrollments.Store, enrollmentstest.Fixture) {
			d := open(t)
			return enrollments.NewBunStore(d), fixture(t, d)
		})
	})
}

// fixture fills d with a workspace, a LinkedIn sender, a sequence and two
// leads.
func fixture(t *testing.T, d *db.DB) enrollmentstest.Fixture {
	t.Helper()
	w := fx.New(t, d, fx.Spec{Sequence: true, Leads: 2})
	return enrollmentstest.Fixture{WorkspaceID: w.WorkspaceID, SequenceID: w.SequenceID, SenderID: w.SenderID, LeadIDs: [2]string(w.LeadIDs)}
}
