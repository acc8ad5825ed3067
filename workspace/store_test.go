package workspace_test

import (
	"context"
	"testing"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/workspace"
	"github.com/leadline/leadline/workspace/workspacetest"
)

// TestBunStore runs the store contract on SQLite, and on Postgres when
// LEADLINE_TEST_POSTGRES is set: each test a database of its own.
func TestBunStore(t *testing.T) {
	t.Parallel()
	dbtest.Contract(t, func(t *testing.T, open func(t *testing.T) *db.DB) {
		workspacetest.TestStore(t, func(t *testing.T) (workspace.Store, func(ctx context.Context, fn func(ctx context.Context) error) error) {
			d := open(t)
			return workspace.NewBunStore(d), d.InTx
		})
	})
}
