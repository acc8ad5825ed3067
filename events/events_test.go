package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/workspace"
)

func TestLog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		ws := workspace.NewService(d, clock)
		_, err := ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{Name: "acme"}}})
		is.NoErr(err)
		w, err := ws.ByName(ctx, "acme")
		is.NoErr(err)
		log := events.NewLog(d, clock)
		lead := apikit.NewID()
		p := apikit.Principal{WorkspaceID: w.ID, MemberID: apikit.NewID(), KeyID: apikit.NewID()}
		actx := apikit.WithPrincipal(ctx, p)

		is.NoErr(log.Emit(actx, events.Event{LeadID: lead, Kind: "first"}))
		is.NoErr(log.Emit(actx, events.Event{LeadID: lead, Kind: "same instant", Data: map[string]any{"n": 1}}))
		clock.Advance(time.Second)
		is.NoErr(log.EmitMany(ctx, []events.Event{{WorkspaceID: w.ID, LeadID: lead, Kind: "platform"}})) // no principal: no actor
		is.NoErr(log.Emit(actx, events.Event{LeadID: apikit.NewID(), Kind: "other lead"}))

		// An event written in a transaction that rolls back is gone with it.
		_ = d.InTx(actx, func(ctx context.Context) error {
			is.NoErr(log.Emit(ctx, events.Event{LeadID: lead, Kind: "rolled back"}))
			return apikit.Invalid("no", "")
		})

		evs, total, err := log.ForLead(ctx, w.ID, lead, 10, 0)
		is.NoErr(err)
		is.Equal(total, 3)
		is.Equal([]string{evs[0].Kind, evs[1].Kind, evs[2].Kind}, []string{"platform", "same instant", "first"}) // newest first
		is.Equal(evs[0].MemberID, "")
		is.Equal(evs[1].MemberID, p.MemberID) // the actor is the key's member
		is.Equal(evs[1].KeyID, p.KeyID)
		is.Equal(evs[1].Data["n"], float64(1))
		is.True(evs[0].CreatedAt.After(evs[1].CreatedAt))
	})
}
