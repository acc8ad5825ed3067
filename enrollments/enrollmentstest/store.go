// Package enrollmentstest is the contract of enrollments.Store: one suite
// that every store runs, on every engine it serves.
package enrollmentstest

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
)

// Fixture is what a fresh store comes with: a workspace, one of its
// sequences, one of its senders and two of its leads.
type Fixture struct {
	WorkspaceID, SequenceID, SenderID string
	LeadIDs                           [2]string
}

// Open returns a fresh store and its fixture.
type Open func(t *testing.T) (enrollments.Store, Fixture)

// TestStore runs the contract of enrollments.Store on the stores open
// makes, one fresh store per test.
func TestStore(t *testing.T, open Open) {
	t.Run("InsertAndRead", func(t *testing.T) { insertAndRead(t, open) })
	t.Run("OneLiveEnrollmentPerLead", func(t *testing.T) { oneLive(t, open) })
	t.Run("Claim", func(t *testing.T) { claim(t, open) })
	t.Run("ContactedAndWaiting", func(t *testing.T) { contactedAndWaiting(t, open) })
}

var at = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

func enrollment(f Fixture, lead string, status enrollments.Status, created time.Time) enrollments.Enrollment {
	due := created
	return enrollments.Enrollment{ID: apikit.NewID(), WorkspaceID: f.WorkspaceID, SequenceID: f.SequenceID, LeadID: lead, SenderID: &f.SenderID,
		Status: status, StepID: "wait", StepStartedAt: created, NextRunAt: &due, CreatedAt: created, UpdatedAt: created}
}

// insertAndRead: an inserted enrollment reads back by id in its workspace
// only; a saved change reads back; the lead's enrollments come newest
// first and its live ones alone are live.
func insertAndRead(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	old, cur := enrollment(f, f.LeadIDs[0], enrollments.Finished, at), enrollment(f, f.LeadIDs[0], enrollments.Active, at.Add(time.Hour))
	is.NoErr(st.Insert(ctx, []enrollments.Enrollment{old, cur}))
	got, err := st.ByID(ctx, f.WorkspaceID, cur.ID)
	is.NoErr(err)
	is.Equal(got.Status, enrollments.Active)
	_, err = st.ByID(ctx, apikit.NewID(), cur.ID) // another workspace
	is.True(db.IsNoRows(err))
	reason := "outside_schedule"
	got.Status, got.WaitingFor, got.UpdatedAt = enrollments.Paused, &reason, at.Add(2*time.Hour)
	is.NoErr(st.Save(ctx, got))
	got, err = st.ByID(ctx, f.WorkspaceID, cur.ID)
	is.NoErr(err)
	is.Equal(got.Status, enrollments.Paused)
	is.Equal(*got.WaitingFor, reason)
	all, err := st.ForLead(ctx, f.WorkspaceID, f.LeadIDs[0])
	is.NoErr(err)
	is.Equal(len(all), 2)
	is.Equal(all[0].ID, cur.ID)
	live, err := st.Live(ctx, f.WorkspaceID, f.LeadIDs[:])
	is.NoErr(err)
	is.Equal(len(live), 1)
	is.Equal(live[0].ID, cur.ID)
}

// oneLive: a lead has at most one live enrollment in a workspace.
func oneLive(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	is.NoErr(st.Insert(ctx, []enrollments.Enrollment{enrollment(f, f.LeadIDs[0], enrollments.Active, at)}))
	err := st.Insert(ctx, []enrollments.Enrollment{enrollment(f, f.LeadIDs[0], enrollments.Paused, at)})
	is.True(db.IsUniqueViolation(err))
}

// claim: the due enrollments are leased, the earliest first and at most
// limit; a leased one is not claimed again before its lease ends, and
// one not yet due is not claimed.
func claim(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	early, late := enrollment(f, f.LeadIDs[0], enrollments.Active, at), enrollment(f, f.LeadIDs[1], enrollments.Active, at.Add(time.Minute))
	is.NoErr(st.Insert(ctx, []enrollments.Enrollment{late, early}))
	now := at.Add(2 * time.Minute)
	got, err := st.Claim(ctx, now, now.Add(time.Minute), 1)
	is.NoErr(err)
	is.Equal(len(got), 1)
	is.Equal(got[0].ID, early.ID)
	got, err = st.Claim(ctx, now, now.Add(time.Minute), 10)
	is.NoErr(err)
	is.Equal(len(got), 1)
	is.Equal(got[0].ID, late.ID)
	got, err = st.Claim(ctx, now.Add(30*time.Second), now.Add(time.Minute), 10)
	is.NoErr(err)
	is.Equal(len(got), 0) // both leased
	got, err = st.Claim(ctx, now.Add(time.Minute), now.Add(2*time.Minute), 10)
	is.NoErr(err)
	is.Equal(len(got), 2) // the leases ended
	got, err = st.Claim(ctx, at.Add(-time.Hour), at, 10)
	is.NoErr(err)
	is.Equal(len(got), 0) // nothing due yet
}

// contactedAndWaiting: first contacts are read by id (none for an
// enrollment that made none), and active enrollments are counted by what
// they wait for.
func contactedAndWaiting(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	a, b := enrollment(f, f.LeadIDs[0], enrollments.Active, at), enrollment(f, f.LeadIDs[1], enrollments.Active, at)
	contacted, reason := at.Add(time.Hour), "sender_paused"
	a.ContactedAt, a.WaitingFor = &contacted, &reason
	is.NoErr(st.Insert(ctx, []enrollments.Enrollment{a, b}))
	got, err := st.ContactedAt(ctx, []string{a.ID, b.ID})
	is.NoErr(err)
	is.Equal(len(got), 1)
	is.True(got[a.ID].Equal(contacted))
	waiting, err := st.Waiting(ctx, f.SequenceID, []string{reason, "note_quota"})
	is.NoErr(err)
	is.Equal(waiting, map[string]int{reason: 1})
}
