package db_test

import (
	"context"
	"testing"

	"github.com/matryer/is"
	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

type listProbe struct {
	bun.BaseModel `bun:"table:list_probe,alias:p"`

	ID          string  `bun:"id,pk"`
	WorkspaceID string  `bun:"workspace_id"`
	ClientID    *string `bun:"client_id"`
	Kind        string  `bun:"kind"`
}

// TestListQuery holds the list stores' shared query to the principal's
// client scope (a scoped key sees its clients' rows and no row of no
// client), the workspace, filters left out when empty, and paging with the
// total of every page.
func TestListQuery(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		_, err := d.ExecContext(ctx, "CREATE TABLE list_probe (id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, client_id TEXT, kind TEXT NOT NULL)")
		is.NoErr(err)
		a, b := "client-a", "client-b"
		rows := []listProbe{
			{ID: "1", WorkspaceID: "w1", ClientID: &a, Kind: "x"},
			{ID: "2", WorkspaceID: "w1", ClientID: &b, Kind: "y"},
			{ID: "3", WorkspaceID: "w1", Kind: "x"},
			{ID: "4", WorkspaceID: "w1", ClientID: &a, Kind: "y"},
			{ID: "5", WorkspaceID: "w2", ClientID: &a, Kind: "x"},
		}
		_, err = d.NewInsert().Model(&rows).Exec(ctx)
		is.NoErr(err)

		ids := func(ps []listProbe) []string {
			out := []string{}
			for _, p := range ps {
				out = append(out, p.ID)
			}
			return out
		}
		// Each scope lists exactly the workspace's rows the principal sees.
		for _, scope := range [][]string{nil, {a}, {a, b}, {"client-c"}} {
			p := apikit.Principal{WorkspaceID: "w1", ClientIDs: scope}
			want := []string{}
			for _, r := range rows {
				c := ""
				if r.ClientID != nil {
					c = *r.ClientID
				}
				if r.WorkspaceID == p.WorkspaceID && p.SeesClient(c) {
					want = append(want, r.ID)
				}
			}
			for _, alias := range []string{"p", ""} {
				got, total, err := db.List[listProbe](d.IDB(ctx), alias, p.WorkspaceID, p.ClientIDs).Page(ctx, "id", 10, 0)
				is.NoErr(err)
				is.Equal(ids(got), want) // the scope is Principal.SeesClient's
				is.Equal(total, len(want))
			}
		}

		// An empty filter is left out; a given one keeps its rows.
		got, total, err := db.List[listProbe](d.IDB(ctx), "p", "w1", nil).Equal("kind", "").Page(ctx, "p.id", 10, 0)
		is.NoErr(err)
		is.Equal(total, 4)
		is.Equal(len(got), 4)
		got, total, err = db.List[listProbe](d.IDB(ctx), "p", "w1", nil).Equal("kind", "x").Page(ctx, "p.id DESC", 10, 0)
		is.NoErr(err)
		is.Equal(ids(got), []string{"3", "1"})
		is.Equal(total, 2)

		// Where and Apply add conditions; a page counts every page's rows.
		got, total, err = db.List[listProbe](d.IDB(ctx), "p", "w1", []string{a, b}).Where("p.kind = ?", "y").
			Apply(func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("p.id <> ?", "9") }).
			Page(ctx, "p.id DESC", 1, 1)
		is.NoErr(err)
		is.Equal(ids(got), []string{"2"})
		is.Equal(total, 2)

		// Past the end: no rows, the total still counted.
		got, total, err = db.List[listProbe](d.IDB(ctx), "p", "w1", nil).Page(ctx, "p.id", 10, 10)
		is.NoErr(err)
		is.Equal(len(got), 0)
		is.Equal(total, 4)
	})
}
