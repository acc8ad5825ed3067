// Package sequencestest is the contract of sequences.Store: one suite that
// every store runs, on every engine it serves.
package sequencestest

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/sequences"
)

// Open returns a fresh store and the id of a workspace it may write
// sequences to, with the ids of two of the workspace's clients.
type Open func(t *testing.T) (store sequences.Store, workspaceID string, clients [2]string)

// TestStore runs the contract of sequences.Store on the stores open makes,
// one fresh store per test.
func TestStore(t *testing.T, open Open) {
	t.Run("SaveAndRead", func(t *testing.T) { saveAndRead(t, open) })
	t.Run("UniqueName", func(t *testing.T) { uniqueName(t, open) })
	t.Run("ListScope", func(t *testing.T) { listScope(t, open) })
	t.Run("Refs", func(t *testing.T) { refs(t, open) })
}

func sequence(ws, name string, client *string) *sequences.Sequence {
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	return &sequences.Sequence{ID: apikit.NewID(), WorkspaceID: ws, ClientID: client, Name: name, Status: sequences.Draft,
		SenderIDs: []string{}, Steps: []sequences.Step{{ID: "wait", Type: "wait"}}, CreatedAt: now, UpdatedAt: now}
}

// saveAndRead: a saved sequence reads back by id and by name in its
// workspace only; an update is read back; a missing one is no rows.
func saveAndRead(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, ws, _ := open(t)
	q := sequence(ws, "Outreach", nil)
	is.NoErr(st.Save(ctx, q, true))
	got, err := st.ByID(ctx, ws, q.ID)
	is.NoErr(err)
	is.Equal(got.Name, "Outreach")
	is.Equal(len(got.Steps), 1)
	got, err = st.ByName(ctx, ws, "Outreach")
	is.NoErr(err)
	is.Equal(got.ID, q.ID)
	q.Status = sequences.Active
	is.NoErr(st.Save(ctx, q, false))
	got, err = st.ByID(ctx, ws, q.ID)
	is.NoErr(err)
	is.Equal(got.Status, sequences.Active)
	_, err = st.ByID(ctx, apikit.NewID(), q.ID) // another workspace
	is.True(db.IsNoRows(err))
	_, err = st.ByName(ctx, ws, "Nothing")
	is.True(db.IsNoRows(err))
}

// uniqueName: a second sequence of one name in a workspace is
// E_CONFLICT.
func uniqueName(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, ws, _ := open(t)
	is.NoErr(st.Save(ctx, sequence(ws, "Outreach", nil), true))
	err := st.Save(ctx, sequence(ws, "Outreach", nil), true)
	is.Equal(apikit.ErrorCode(err), apikit.EConflict)
}

// listScope: a list is by name, paged with its total, and a scope keeps
// the sequences of its clients alone.
func listScope(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, ws, clients := open(t)
	for _, q := range []*sequences.Sequence{sequence(ws, "C", &clients[0]), sequence(ws, "A", nil), sequence(ws, "B", &clients[1])} {
		is.NoErr(st.Save(ctx, q, true))
	}
	page, total, err := st.List(ctx, ws, nil, sequences.Filter{Limit: 2})
	is.NoErr(err)
	is.Equal(total, 3)
	is.Equal(len(page), 2)
	is.Equal(page[0].Name, "A")
	is.Equal(page[1].Name, "B")
	page, total, err = st.List(ctx, ws, []string{clients[0]}, sequences.Filter{Limit: 10})
	is.NoErr(err)
	is.Equal(total, 1)
	is.Equal(page[0].Name, "C")
}

// refs: all of a workspace's sequences by name for nil ids, those among
// ids otherwise (unknown ids left out), none for no ids.
func refs(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, ws, clients := open(t)
	b, a := sequence(ws, "B", &clients[0]), sequence(ws, "A", nil)
	is.NoErr(st.Save(ctx, b, true))
	is.NoErr(st.Save(ctx, a, true))
	all, err := st.Refs(ctx, ws, nil)
	is.NoErr(err)
	is.Equal(all, []sequences.Ref{{ID: a.ID, Name: "A"}, {ID: b.ID, Name: "B", ClientID: &clients[0]}})
	some, err := st.Refs(ctx, ws, []string{b.ID, apikit.NewID()})
	is.NoErr(err)
	is.Equal(len(some), 1)
	is.Equal(some[0].ID, b.ID)
	none, err := st.Refs(ctx, ws, []string{})
	is.NoErr(err)
	is.Equal(len(none), 0)
}
