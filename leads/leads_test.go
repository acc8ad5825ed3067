package leads_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/workspace"
)

type bundle struct {
	svc *leads.Service
	p   apikit.Principal
	ctx context.Context
}

func setup(t testing.TB, d *db.DB) bundle {
	t.Helper()
	b, _ := setupSpec(t, d, workspace.WorkspaceSpec{
		Name: "acme", Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}}, Clients: []string{"Globex"},
	})
	return b
}

// setupSpec applies spec and returns a bundle acting as a manager of it.
func setupSpec(t testing.TB, d *db.DB, spec workspace.WorkspaceSpec) (bundle, *workspace.Service) {
	t.Helper()
	ctx := context.Background()
	clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	ws := workspace.NewService(d, clock)
	if _, err := ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{spec}}); err != nil {
		t.Fatal(err)
	}
	_, secret, err := ws.CreateKey(ctx, workspace.KeyInput{Workspace: spec.Name, MemberEmail: spec.Members[0].Email, Role: apikit.RoleManager})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ws.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return bundle{svc: leads.NewService(d, clock, ws, events.NewLog(d, clock)), p: p, ctx: apikit.WithPrincipal(ctx, p)}, ws
}

func str(s string) *string { return &s }

// TestServiceContract runs the service's core rules directly against the
// store on every engine; the HTTP tests in server cover the rest.
func TestServiceContract(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d)
		res, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str(" Kim@Example.TEST "), Name: str("Kim")})
		is.NoErr(err)
		is.True(res.Created)
		res2, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("kim@example.test"), Company: str("Initrode")})
		is.NoErr(err)
		is.True(!res2.Created)
		is.Equal(res2.Lead.ID, res.Lead.ID)
		is.Equal(*res2.Lead.Name, "Kim")

		_, err = b.svc.Upsert(b.ctx, b.p, leads.LeadInput{Name: str("no identity")})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		_, err = b.svc.Upsert(b.ctx, b.p, leads.LeadInput{LinkedInID: str("x"), Custom: map[string]any{"k": "a\x00"}})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid) // text no database can store
		_, err = b.svc.Get(b.ctx, b.p, apikit.NewID())
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)

		page, err := b.svc.List(b.ctx, b.p, leads.Filter{Q: "initro"})
		is.NoErr(err)
		is.Equal(page.Total, 1)
		_, err = b.svc.List(b.ctx, b.p, leads.Filter{Limit: 201})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)

		evs, err := b.svc.Timeline(b.ctx, b.p, res.Lead.ID, 10)
		is.NoErr(err)
		is.Equal(len(evs), 2)
		is.Equal(evs[0].Kind, leads.EventUpdated)
		is.Equal(evs[1].Kind, leads.EventCreated)
	})
}

// TestTotalsFollowClients checks the per-client lead counts behind
// unfiltered totals as leads are created and get their client filled.
func TestTotalsFollowClients(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d)
		page, err := b.svc.List(b.ctx, b.p, leads.Filter{})
		is.NoErr(err)
		is.Equal(page.Total, 0)
		var clientID string
		is.NoErr(d.NewRaw("SELECT id FROM clients WHERE name = 'Globex'").Scan(b.ctx, &clientID))
		for i := range 5 {
			_, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{LinkedInID: str(fmt.Sprint("c", i))})
			is.NoErr(err)
		}
		_, err = b.svc.Upsert(b.ctx, b.p, leads.LeadInput{LinkedInID: str("c0"), ClientID: &clientID}) // fills the client
		is.NoErr(err)
		_, err = b.svc.Upsert(b.ctx, b.p, leads.LeadInput{LinkedInID: str("c9"), ClientID: &clientID})
		is.NoErr(err)
		for _, c := range []struct {
			scope  []string
			filter string
			want   int
		}{
			{nil, "", 6}, {nil, clientID, 2}, {[]string{clientID}, "", 2}, {[]string{clientID}, clientID, 2},
		} {
			p := b.p
			p.ClientIDs = c.scope
			page, err := b.svc.List(b.ctx, p, leads.Filter{ClientID: c.filter})
			is.NoErr(err)
			is.Equal(page.Total, c.want)
			is.Equal(len(page.Data), c.want)
		}
	})
}

func seedN(b *testing.B, bd bundle, n int) {
	for i := range n {
		_, err := bd.svc.Upsert(bd.ctx, bd.p, leads.LeadInput{LinkedInID: str(fmt.Sprintf("B%07d", i)), Name: str(fmt.Sprintf("Person %d", i)),
			Company: str([]string{"Northwind", "Contoso", "Fabrikam"}[i%3]), EmailWork: str(fmt.Sprintf("p%d@x.test", i))})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkService measures the service and store on each engine with a
// few thousand leads; bench/leadsload measures a million.
func BenchmarkService(b *testing.B) {
	for _, e := range dbtest.Engines() {
		bd := setup(b, dbtest.Open(b, e))
		seedN(b, bd, 5000)
		b.Run(string(e)+"/list", func(b *testing.B) {
			for b.Loop() {
				if _, err := bd.svc.List(bd.ctx, bd.p, leads.Filter{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(e)+"/list-q", func(b *testing.B) {
			for b.Loop() {
				if _, err := bd.svc.List(bd.ctx, bd.p, leads.Filter{Q: "contos"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(e)+"/upsert", func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				if _, err := bd.svc.Upsert(bd.ctx, bd.p, leads.LeadInput{LinkedInID: str(fmt.Sprintf("B%07d", i%5000)), Headline: str(fmt.Sprint("H", i))}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestInboundMatchAndProviderID: a profile view keeps the provider's id of
// the person (unless another lead holds it), and an inbound message finds
// its lead by that id or by its address; an unsubscribe marks the lead
// do-not-contact once.
func TestInboundMatchAndProviderID(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d)
		kim, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{PublicIdentifier: str("kim-lee"), EmailPersonal: str("Kim@Home.test")})
		is.NoErr(err)
		bo, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{PublicIdentifier: str("bo-chen")})
		is.NoErr(err)
		is.NoErr(b.svc.SetProfile(b.ctx, b.p.WorkspaceID, kim.Lead.ID, map[string]any{"provider_id": "ACo-kim", "headline": "CTO"}))
		// Bo's view names Kim's id by mistake: it stays Kim's.
		is.NoErr(b.svc.SetProfile(b.ctx, b.p.WorkspaceID, bo.Lead.ID, map[string]any{"provider_id": "ACo-kim"}))
		got, err := b.svc.Get(b.ctx, b.p, kim.Lead.ID)
		is.NoErr(err)
		is.Equal(*got.ProviderID, "ACo-kim")
		got, err = b.svc.Get(b.ctx, b.p, bo.Lead.ID)
		is.NoErr(err)
		is.Equal(got.ProviderID, nil)

		for _, c := range []struct{ email, pid, want string }{
			{"", "ACo-kim", kim.Lead.ID}, {"kim@home.TEST", "", kim.Lead.ID}, {"nobody@x.test", "ACo-none", ""}, {"", "", ""},
		} {
			id, err := b.svc.MatchInbound(b.ctx, b.p.WorkspaceID, c.email, c.pid, "")
			is.NoErr(err)
			is.Equal(id, c.want)
		}
		is.NoErr(b.svc.Unsubscribe(b.ctx, b.p.WorkspaceID, kim.Lead.ID, leads.UnsubscribedByReply))
		is.NoErr(b.svc.Unsubscribe(b.ctx, b.p.WorkspaceID, kim.Lead.ID, leads.UnsubscribedByReply))
		got, err = b.svc.Get(b.ctx, b.p, kim.Lead.ID)
		is.NoErr(err)
		is.True(got.DoNotContact)
		is.Equal(apikit.ErrorCode(b.svc.Unsubscribe(b.ctx, apikit.NewID(), kim.Lead.ID, leads.UnsubscribedByLink)), apikit.ENotFound)
	})
}
