package tasks_test

import (
	"context"
	"testing"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/fixture"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/tasks/taskstest"
	"github.com/leadline/leadline/workspace"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	dbtest.Contract(t, func(t *testing.T, open func(t *testing.T) *db.DB) {
		taskstest.TestStore(t, func(t *testing.T) (tasks.Store, taskstest.Fixture) {
			d := open(t)
			w := fixture.New(t, d, fixture.Spec{Clients: []string{"Globex", "Initech"}, Leads: 2, Enrolled: true})
			ms, err := workspace.NewBunStore(d).Members(context.Background(), w.WorkspaceID)
			if err != nil || len(ms) == 0 {
				t.Fatalf("the fixture's members: %v, %v", ms, err)
			}
			return tasks.NewBunStore(d), taskstest.Fixture{WorkspaceID: w.WorkspaceID, SequenceID: w.SequenceID,
				ClientIDs: [2]string{w.Clients["Globex"], w.Clients["Initech"]}, LeadIDs: [2]string(w.LeadIDs), EnrollmentIDs: [2]string(w.EnrollmentIDs),
				MemberID: ms[0].ID}
		})
	})
}
