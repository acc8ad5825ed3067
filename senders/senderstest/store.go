// Package senderstest is the contract of senders.Store: one suite that
// every store runs, on every engine it serves.
package senderstest

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
)

// Fixture is what a fresh store comes with: a workspace it may write
// senders to, one of the workspace's clients and one of its leads.
type Fixture struct {
	WorkspaceID, ClientID, LeadID string
}

// Open returns a fresh store and its fixture.
type Open func(t *testing.T) (senders.Store, Fixture)

// TestStore runs the contract of senders.Store on the stores open makes,
// one fresh store per test.
func TestStore(t *testing.T, open Open) {
	t.Run("SaveAndRead", func(t *testing.T) { saveAndRead(t, open) })
	t.Run("ListAndRefs", func(t *testing.T) { listAndRefs(t, open) })
	t.Run("TakeAndGiveBack", func(t *testing.T) { takeAndGiveBack(t, open) })
	t.Run("Invitations", func(t *testing.T) { invitations(t, open) })
}

var at = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

func sender(ws, name string, client *string, ch senders.Channel) *senders.Sender {
	return &senders.Sender{ID: apikit.NewID(), WorkspaceID: ws, ClientID: client, Name: name, Channel: ch, Timezone: "Europe/Berlin",
		Transport: "sandbox", Status: senders.Active, Schedule: senders.DefaultSchedule(), Caps: senders.Caps{}, Health: senders.Healthy,
		HealthReasons: []senders.HealthReason{}, CreatedAt: at, UpdatedAt: at}
}

// saveAndRead: a saved sender reads back by id and by name in its
// workspace only, an update reads back, a second one of a name is
// E_CONFLICT and a missing one is no rows.
func saveAndRead(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	s := sender(f.WorkspaceID, "Ada", nil, senders.LinkedIn)
	is.NoErr(st.Save(ctx, s, true))
	got, err := st.ByID(ctx, f.WorkspaceID, s.ID)
	is.NoErr(err)
	is.Equal(got.Name, "Ada")
	is.Equal(got.Schedule, senders.DefaultSchedule())
	s.Status = senders.Paused
	is.NoErr(st.Save(ctx, s, false))
	got, err = st.ByName(ctx, f.WorkspaceID, "Ada")
	is.NoErr(err)
	is.Equal(got.Status, senders.Paused)
	is.Equal(apikit.ErrorCode(st.Save(ctx, sender(f.WorkspaceID, "Ada", nil, senders.Email), true)), apikit.EConflict)
	_, err = st.ByID(ctx, apikit.NewID(), s.ID) // another workspace
	is.True(db.IsNoRows(err))
	_, err = st.ByName(ctx, f.WorkspaceID, "Nobody")
	is.True(db.IsNoRows(err))
}

// listAndRefs: the workspace's senders come by name; a scope keeps its
// clients' senders; refs of nil ids are all of them, of ids those that
// exist, of no ids none; costs are all of them.
func listAndRefs(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	b, a := sender(f.WorkspaceID, "B", &f.ClientID, senders.Email), sender(f.WorkspaceID, "A", nil, senders.LinkedIn)
	is.NoErr(st.Save(ctx, b, true))
	is.NoErr(st.Save(ctx, a, true))
	all, err := st.InWorkspace(ctx, f.WorkspaceID)
	is.NoErr(err)
	is.Equal(len(all), 2)
	is.Equal(all[0].ID, a.ID)
	page, total, err := st.List(ctx, f.WorkspaceID, []string{f.ClientID}, senders.Filter{Limit: 10})
	is.NoErr(err)
	is.Equal(total, 1)
	is.Equal(page[0].ID, b.ID)
	refs, err := st.Refs(ctx, f.WorkspaceID, nil)
	is.NoErr(err)
	is.Equal(refs, []senders.Ref{{ID: a.ID, Name: "A", Channel: senders.LinkedIn}, {ID: b.ID, Name: "B", ClientID: &f.ClientID, Channel: senders.Email}})
	refs, err = st.Refs(ctx, f.WorkspaceID, []string{b.ID, apikit.NewID()})
	is.NoErr(err)
	is.Equal(len(refs), 1)
	refs, err = st.Refs(ctx, f.WorkspaceID, []string{})
	is.NoErr(err)
	is.Equal(len(refs), 0)
	costs, err := st.Costs(ctx, f.WorkspaceID)
	is.NoErr(err)
	is.Equal(len(costs), 2)
	is.Equal(costs[1].ID, b.ID)
	is.Equal(*costs[1].ClientID, f.ClientID)
	is.Equal(costs[1].MonthlyCost, b.MonthlyCost)
	is.True(costs[1].CreatedAt.Equal(all[1].CreatedAt))
}

// takeAndGiveBack: a counter takes units up to its limit and no more, a
// limit of 0 takes none, a unit given back can be taken again, and the
// day's usage shows what was taken.
func takeAndGiveBack(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	s := sender(f.WorkspaceID, "Ada", nil, senders.LinkedIn)
	is.NoErr(st.Save(ctx, s, true))
	for i := range 3 {
		ok, err := st.Take(ctx, s.ID, "2026-11-25", "invite", 2)
		is.NoErr(err)
		is.Equal(ok, i < 2)
	}
	ok, err := st.Take(ctx, s.ID, "2026-11-25", "message", 0)
	is.NoErr(err)
	is.True(!ok)
	is.NoErr(st.GiveBack(ctx, s.ID, "2026-11-25", "invite"))
	ok, err = st.Take(ctx, s.ID, "2026-11-25", "invite", 2)
	is.NoErr(err)
	is.True(ok)
	use, err := st.Usage(ctx, s.ID, "2026-11-25", "2026-11-25")
	is.NoErr(err)
	is.Equal(use, []senders.Usage{{SenderID: s.ID, Day: "2026-11-25", Action: "invite", Used: 2}})
}

// invitations: an invitation is accepted once, while pending; the lead's
// invitations show it.
func invitations(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	s := sender(f.WorkspaceID, "Ada", nil, senders.LinkedIn)
	is.NoErr(st.Save(ctx, s, true))
	is.NoErr(st.InsertInvitation(ctx, &senders.Invitation{ID: apikit.NewID(), WorkspaceID: f.WorkspaceID, SenderID: s.ID, LeadID: f.LeadID, SentAt: at}))
	sent, err := st.AcceptInvitation(ctx, s.ID, f.LeadID, at.Add(time.Hour))
	is.NoErr(err)
	is.True(sent != nil && sent.Equal(at))
	sent, err = st.AcceptInvitation(ctx, s.ID, f.LeadID, at.Add(2*time.Hour))
	is.NoErr(err)
	is.Equal(sent, nil) // accepted already
	invs, err := st.LeadInvitations(ctx, f.LeadID)
	is.NoErr(err)
	is.Equal(len(invs), 1)
	is.Equal(invs[0].SenderID, s.ID)
	is.True(invs[0].AcceptedAt != nil && invs[0].AcceptedAt.Equal(at.Add(time.Hour)))
}
