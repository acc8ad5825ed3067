package workspace_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/workspace"
)

// blacklistValues are a page's entries as kind:value.
func blacklistValues(es []workspace.BlacklistEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Kind+":"+e.Value)
	}
	return out
}

// TestBlacklistManaged: a manager adds values normalised as matching
// reads them (a repeat is a no-op that says so), lists them with who
// added them, and removes them by id or by value; each change is in the
// activity log with its member. Matching follows at once.
func TestBlacklistManaged(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		w, err := b.svc.ByName(ctx, "acme")
		is.NoErr(err)
		m, err := workspace.NewBunStore(d).MemberByEmail(ctx, w.ID, "boss@acme.test")
		is.NoErr(err)
		boss := apikit.Principal{WorkspaceID: w.ID, WorkspaceName: w.Name, MemberID: m.ID, MemberEmail: m.Email, Role: apikit.RoleManager}

		res, err := b.svc.AddBlacklist(ctx, boss, workspace.BlacklistDomain, []string{" @Globex.EXAMPLE ", "umbrella.test", "globex.example"})
		is.NoErr(err)
		is.Equal(blacklistValues(res.Added), []string{"domain:globex.example"})
		is.Equal(res.AlreadyListed, []string{"umbrella.test"}) // from the setup file
		hit, err := b.svc.BlacklistHit(ctx, w.ID, "", []string{"ann@globex.example"}, nil)
		is.NoErr(err)
		is.Equal(hit, "domain:globex.example")
		_, err = b.svc.AddBlacklist(ctx, boss, workspace.BlacklistLinkedIn, []string{"https://www.linkedin.com/in/Jane-Doe/?trk=x", "ACoAAB123"})
		is.NoErr(err)
		hit, err = b.svc.BlacklistHit(ctx, w.ID, "", nil, []string{"jane-doe"})
		is.NoErr(err)
		is.Equal(hit, "linkedin:jane-doe")
		b.clock.Advance(time.Minute)
		_, err = b.svc.AddBlacklist(ctx, boss, workspace.BlacklistCompany, []string{"Globex Corp"})
		is.NoErr(err)

		all, err := b.svc.ListBlacklist(ctx, boss, workspace.BlacklistFilter{})
		is.NoErr(err)
		is.Equal(all.Total, 6)
		is.Equal(blacklistValues(all.Data), []string{"company:globex corp", "company:umbrella", "domain:globex.example", "domain:umbrella.test",
			"linkedin:acoaab123", "linkedin:jane-doe"})
		is.Equal(all.Data[0].MemberEmail, "boss@acme.test")
		is.Equal(all.Data[1].MemberEmail, "") // the setup file
		found, err := b.svc.ListBlacklist(ctx, boss, workspace.BlacklistFilter{Q: "GLOBEX", Limit: 1})
		is.NoErr(err)
		is.Equal(found.Total, 2)
		is.True(found.HasMore)
		is.Equal(blacklistValues(found.Data), []string{"company:globex corp"})

		// Remove by id and by kind and value; an unknown one removes
		// nothing.
		_, err = b.svc.RemoveBlacklist(ctx, boss, workspace.BlacklistRemoval{IDs: []string{all.Data[0].ID, apikit.NewID()}})
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
		_, err = b.svc.RemoveBlacklist(ctx, boss, workspace.BlacklistRemoval{Kind: workspace.BlacklistDomain, Values: []string{"globex.example", "nope.example"}})
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
		is.True(strings.Contains(err.Error(), "domain nope.example"))
		gone, err := b.svc.RemoveBlacklist(ctx, boss, workspace.BlacklistRemoval{IDs: []string{all.Data[0].ID}})
		is.NoErr(err)
		is.Equal(blacklistValues(gone), []string{"company:globex corp"})
		gone, err = b.svc.RemoveBlacklist(ctx, boss, workspace.BlacklistRemoval{Kind: workspace.BlacklistDomain, Values: []string{"Globex.example"}})
		is.NoErr(err)
		is.Equal(len(gone), 1)
		hit, err = b.svc.BlacklistHit(ctx, w.ID, "", []string{"ann@globex.example"}, nil)
		is.NoErr(err)
		is.Equal(hit, "")
		all, err = b.svc.ListBlacklist(ctx, boss, workspace.BlacklistFilter{})
		is.NoErr(err)
		is.Equal(all.Total, 4)

		// The activity log: who added and removed what.
		evs, err := events.NewLog(d, b.clock).Page(ctx, w.ID, []string{workspace.EventBlacklistAdded, workspace.EventBlacklistRemoved}, time.Time{}, "", 100)
		is.NoErr(err)
		is.Equal(len(evs), 6) // 4 added, 2 removed
		for _, e := range evs {
			is.Equal(e.MemberID, boss.MemberID)
		}
		is.Equal(evs[5].Kind, workspace.EventBlacklistRemoved)
		is.Equal(evs[5].Data["value"], "globex.example")
	})
}

// TestBlacklistRefusals: below manager, a scoped manager, an unknown
// kind, an empty value, a non-domain, a multi-line value, too many values
// and a bad page are refused, and change nothing.
func TestBlacklistRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		w, err := b.svc.ByName(ctx, "acme")
		is.NoErr(err)
		owner := apikit.Principal{WorkspaceID: w.ID, WorkspaceName: w.Name, Role: apikit.RoleOwner}
		member := owner
		member.Role = apikit.RoleMember
		scoped := owner
		scoped.Role, scoped.ClientIDs = apikit.RoleManager, []string{apikit.NewID()}
		for _, p := range []apikit.Principal{member, scoped} {
			_, err := b.svc.ListBlacklist(ctx, p, workspace.BlacklistFilter{})
			is.Equal(apikit.ErrorCode(err), apikit.EForbidden)
			_, err = b.svc.AddBlacklist(ctx, p, workspace.BlacklistCompany, []string{"Hooli"})
			is.Equal(apikit.ErrorCode(err), apikit.EForbidden)
			_, err = b.svc.RemoveBlacklist(ctx, p, workspace.BlacklistRemoval{Kind: workspace.BlacklistCompany, Values: []string{"umbrella"}})
			is.Equal(apikit.ErrorCode(err), apikit.EForbidden)
		}
		for _, c := range []struct {
			kind   string
			values []string
			code   string
		}{
			{"phone", []string{"1"}, apikit.EPayloadInvalid},
			{workspace.BlacklistCompany, nil, apikit.EPayloadInvalid},
			{workspace.BlacklistCompany, []string{"Hooli", " "}, apikit.EPayloadInvalid},
			{workspace.BlacklistCompany, []string{"Hooli", "two\nlines"}, apikit.EPayloadInvalid},
			{workspace.BlacklistDomain, []string{"hooli.example", "ann@hooli.example"}, apikit.EPayloadInvalid},
			{workspace.BlacklistDomain, []string{"https://hooli.example/"}, apikit.EPayloadInvalid},
			{workspace.BlacklistDomain, []string{"localhost"}, apikit.EPayloadInvalid},
			{workspace.BlacklistLinkedIn, []string{"jane doe"}, apikit.EPayloadInvalid},
			{workspace.BlacklistCompany, make([]string, workspace.MaxBlacklistValues+1), apikit.ETooMany},
		} {
			_, err := b.svc.AddBlacklist(ctx, owner, c.kind, c.values)
			is.Equal(apikit.ErrorCode(err), c.code)
			is.True(apikit.AsError(err).Remedy != "")
		}
		_, err = b.svc.ListBlacklist(ctx, owner, workspace.BlacklistFilter{Kind: "phone"})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		_, err = b.svc.ListBlacklist(ctx, owner, workspace.BlacklistFilter{Limit: 1000})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		_, err = b.svc.RemoveBlacklist(ctx, owner, workspace.BlacklistRemoval{})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		_, err = b.svc.RemoveBlacklist(ctx, owner, workspace.BlacklistRemoval{IDs: []string{"not-an-id"}})
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
		all, err := b.svc.ListBlacklist(ctx, owner, workspace.BlacklistFilter{})
		is.NoErr(err)
		is.Equal(blacklistValues(all.Data), []string{"company:umbrella", "domain:umbrella.test"}) // as the setup file left it

		// A setup file is held to the same rules.
		s := acme()
		s.Workspaces[0].Blacklist.Domains = []string{"https://umbrella.test"}
		_, err = b.svc.Apply(ctx, s)
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		is.True(strings.Contains(err.Error(), `Workspace "acme": blacklist:`))
	})
}
