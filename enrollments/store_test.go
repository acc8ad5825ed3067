package enrollments_test

import (
	"context"
	"testing"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/enrollments/enrollmentstest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	fx "github.com/leadline/leadline/internal/fixture"
	"github.com/leadline/leadline/sequences"
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
	w := fx.New(t, d, fx.Spec{Sender: true, Leads: 2})
	q := &sequences.Sequence{ID: apikit.NewID(), WorkspaceID: w.WorkspaceID, Name: "Outreach", Status: sequences.Active, SenderIDs: []string{w.SenderID},
		Steps: []sequences.Step{{ID: "wait", Type: "wait"}}, CreatedAt: fx.At, UpdatedAt: fx.At}
	if err := sequences.NewBunStore(d).Save(context.Background(), q, true); err != nil {
		t.Fatal(err)
	}
	return enrollmentstest.Fixture{WorkspaceID: w.WorkspaceID, SequenceID: q.ID, SenderID: w.SenderID, LeadIDs: [2]string(w.LeadIDs)}
}
