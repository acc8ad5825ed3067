// Package leadstest is the contract of leads.Store: one suite that every
// store runs, on every engine it serves.
package leadstest

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
)

// Fixture is what a fresh store comes with: a workspace it may write
// leads to, one of the workspace's clients and two of its tags.
type Fixture struct {
	WorkspaceID, ClientID string
	TagIDs                [2]string
}

// Open returns a fresh store and its fixture.
type Open func(t *testing.T) (leads.Store, Fixture)

// TestStore runs the contract of leads.Store on the stores open makes,
// one fresh store per test.
func TestStore(t *testing.T, open Open) {
	t.Run("InsertAndRead", func(t *testing.T) { insertAndRead(t, open) })
	t.Run("FindByEmail", func(t *testing.T) { findByEmail(t, open) })
	t.Run("ListScope", func(t *testing.T) { listScope(t, open) })
	t.Run("Tags", func(t *testing.T) { tags(t, open) })
}

var at = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

func lead(ws string, name string, client *string) *leads.Lead {
	return &leads.Lead{ID: apikit.NewID(), WorkspaceID: ws, ClientID: client, Name: &name, Custom: map[string]any{}, CreatedAt: at, UpdatedAt: at}
}

// insertAndRead: an inserted lead reads back by id in its workspace only,
// among ids (unknown ones left out) and by name; an update reads back.
func insertAndRead(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	l := lead(f.WorkspaceID, "Ada Lovelace", nil)
	l.Custom = map[string]any{"tier": "gold"}
	is.NoErr(st.Insert(ctx, l))
	got, err := st.ByID(ctx, f.WorkspaceID, l.ID)
	is.NoErr(err)
	is.Equal(*got.Name, "Ada Lovelace")
	is.Equal(got.Custom["tier"], "gold")
	_, err = st.ByID(ctx, apikit.NewID(), l.ID) // another workspace
	is.True(db.IsNoRows(err))
	many, err := st.ByIDs(ctx, f.WorkspaceID, []string{l.ID, apikit.NewID()})
	is.NoErr(err)
	is.Equal(len(many), 1)
	names, err := st.Names(ctx, f.WorkspaceID, []string{l.ID, apikit.NewID()})
	is.NoErr(err)
	is.Equal(names, map[string]string{l.ID: "Ada Lovelace"})
	company := "Analytical Engines"
	l.Company, l.UpdatedAt = &company, at.Add(time.Minute)
	is.NoErr(st.Update(ctx, l))
	got, err = st.ByID(ctx, f.WorkspaceID, l.ID)
	is.NoErr(err)
	is.Equal(*got.Company, company)
}

// findByEmail: a lead is found by its work email whatever its case, in
// its workspace only; no lead is no rows.
func findByEmail(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	l := lead(f.WorkspaceID, "Ada", nil)
	email := "ada@example.test"
	l.EmailWork = &email
	is.NoErr(st.Insert(ctx, l))
	got, err := st.FindBy(ctx, f.WorkspaceID, "email_work", "ADA@example.test")
	is.NoErr(err)
	is.Equal(got.ID, l.ID)
	_, err = st.FindBy(ctx, f.WorkspaceID, "email_work", "grace@example.test")
	is.True(db.IsNoRows(err))
	_, err = st.FindBy(ctx, apikit.NewID(), "email_work", email)
	is.True(db.IsNoRows(err))
}

// listScope: a list is newest first with its total; a client filter and
// a scope keep the client's leads alone.
func listScope(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	var ids []string
	for i, client := range []*string{nil, &f.ClientID, nil} {
		l := lead(f.WorkspaceID, string(rune('A'+i)), client)
		is.NoErr(st.Insert(ctx, l))
		ids = append(ids, l.ID)
	}
	page, total, err := st.List(ctx, f.WorkspaceID, nil, leads.Filter{Limit: 2})
	is.NoErr(err)
	is.Equal(total, 3)
	is.Equal(len(page), 2)
	is.Equal(page[0].ID, ids[2])
	page, total, err = st.List(ctx, f.WorkspaceID, nil, leads.Filter{ClientID: f.ClientID, Limit: 10})
	is.NoErr(err)
	is.Equal(total, 1)
	is.Equal(page[0].ID, ids[1])
	page, total, err = st.List(ctx, f.WorkspaceID, []string{f.ClientID}, leads.Filter{Limit: 10})
	is.NoErr(err)
	is.Equal(total, 1)
	is.Equal(page[0].ID, ids[1])
}

// tags: a tag is added once and removed once, and a lead's tags come by
// name.
func tags(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	l := lead(f.WorkspaceID, "Ada", nil)
	is.NoErr(st.Insert(ctx, l))
	for _, id := range f.TagIDs {
		added, err := st.AddTag(ctx, l.ID, id, at)
		is.NoErr(err)
		is.True(added)
	}
	added, err := st.AddTag(ctx, l.ID, f.TagIDs[0], at)
	is.NoErr(err)
	is.True(!added) // already tagged
	got, err := st.Tags(ctx, l.ID)
	is.NoErr(err)
	is.Equal(len(got), 2)
	is.True(got[0].Name <= got[1].Name)
	removed, err := st.RemoveTag(ctx, l.ID, f.TagIDs[0])
	is.NoErr(err)
	is.True(removed)
	removed, err = st.RemoveTag(ctx, l.ID, f.TagIDs[0])
	is.NoErr(err)
	is.True(!removed)
	got, err = st.Tags(ctx, l.ID)
	is.NoErr(err)
	is.Equal(len(got), 1)
	is.Equal(got[0].ID, f.TagIDs[1])
}
