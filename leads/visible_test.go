package leads_test

import (
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/workspace"
)

// TestVisibleByIDs reads several leads at once as Get reads one: a client
// viewer gets its client's leads only, the workspace's members every lead
// of the workspace, and unknown ids are left out.
func TestVisibleByIDs(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b, ws := setupSpec(t, d, workspace.WorkspaceSpec{
			Name: "acme", Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}},
			Clients: []string{"Globex", "Initech"},
		})
		c, err := ws.Catalog(b.ctx, b.p)
		is.NoErr(err)
		var ids []string
		for i, client := range []*string{nil, &c.Clients[0].ID, &c.Clients[1].ID} {
			res, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{LinkedInID: str(string(rune('a' + i))), ClientID: client})
			is.NoErr(err)
			ids = append(ids, res.Lead.ID)
		}
		got := func(p apikit.Principal) []string {
			ls, err := b.svc.VisibleByIDs(b.ctx, p, append(slices.Clone(ids), "00000000-0000-4000-8000-000000000000"))
			is.NoErr(err)
			var out []string
			for _, l := range ls {
				out = append(out, l.ID)
			}
			slices.Sort(out)
			return out
		}
		all := slices.Sorted(slices.Values(ids))
		is.Equal(got(b.p), all)
		viewer := b.p
		viewer.Role, viewer.ClientIDs = apikit.RoleClientViewer, []string{c.Clients[0].ID}
		is.Equal(got(viewer), []string{ids[1]})
	})
}
