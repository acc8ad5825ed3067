// Package taskstest is the contract of tasks.Store: one suite that every
// store runs, on every engine it serves.
package taskstest

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/tasks"
)

// Fixture is what a fresh store comes with: a workspace, two of its
// clients, one of its sequences, two of its leads and each lead's
// enrollment in the sequence (EnrollmentIDs[i] is LeadIDs[i]'s), and a
// member.
type Fixture struct {
	WorkspaceID, SequenceID string
	ClientIDs               [2]string
	LeadIDs, EnrollmentIDs  [2]string
	// MemberID is an active member of the workspace.
	MemberID string
}

// Open returns a fresh store and its fixture.
type Open func(t *testing.T) (tasks.Store, Fixture)

// TestStore runs the contract of tasks.Store on the stores open makes, one
// fresh store per test.
func TestStore(t *testing.T, open Open) {
	t.Run("OneTaskPerVisit", func(t *testing.T) { onePerVisit(t, open) })
	t.Run("FinishOnce", func(t *testing.T) { finishOnce(t, open) })
	t.Run("List", func(t *testing.T) { list(t, open) })
	t.Run("Assignee", func(t *testing.T) { assignee(t, open) })
}

// assignee: a task keeps the assignee it is inserted with; without one it
// takes the first member its owners name, in the INSERT, and none when
// they name nobody; a visit that has its task already takes nothing;
// SetAssignee changes it; the assignee filter takes a member or none.
func assignee(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	nobody := func(*tasks.Task) (string, []any) { return "(SELECT m.id FROM members AS m WHERE m.id IS NULL)", nil }
	member := func(*tasks.Task) (string, []any) {
		return "(SELECT m.id FROM members AS m WHERE m.id = ?)", []any{f.MemberID}
	}
	given := task(f, 0, nil, "call", at)
	given.AssigneeID = &f.MemberID
	owned := task(f, 1, nil, "call", at.Add(time.Hour))
	none := task(f, 1, nil, "note", at.Add(2*time.Hour))
	for _, tk := range []*tasks.Task{given, owned} {
		added, err := st.Insert(ctx, tk, nobody, member)
		is.NoErr(err)
		is.True(added)
		is.Equal(apikit.Deref(tk.AssigneeID), f.MemberID)
	}
	added, err := st.Insert(ctx, none, nobody)
	is.NoErr(err)
	is.True(added)
	is.Equal(none.AssigneeID, nil)
	again := task(f, 1, nil, "note", at.Add(2*time.Hour))
	added, err = st.Insert(ctx, again, member)
	is.NoErr(err)
	is.True(!added)
	got, err := st.ByID(ctx, f.WorkspaceID, none.ID)
	is.NoErr(err)
	is.Equal(got.AssigneeID, nil)

	ids := func(assignee string) []string {
		t.Helper()
		page, _, err := st.List(ctx, f.WorkspaceID, nil, tasks.Filter{AssigneeID: assignee, Status: tasks.Open, Limit: 10})
		is.NoErr(err)
		out := []string{}
		for _, tk := range page {
			out = append(out, tk.ID)
		}
		return out
	}
	is.Equal(ids(f.MemberID), []string{given.ID, owned.ID})
	is.Equal(ids("none"), []string{none.ID})
	none.AssigneeID, none.UpdatedAt = &f.MemberID, at.Add(3*time.Hour)
	is.NoErr(st.SetAssignee(ctx, none))
	is.Equal(ids("none"), []string{})
	got, err = st.ByID(ctx, f.WorkspaceID, none.ID)
	is.NoErr(err)
	is.Equal(*got.AssigneeID, f.MemberID)
	is.True(got.UpdatedAt.Equal(at.Add(3 * time.Hour)))
	owned.AssigneeID = nil
	is.NoErr(st.SetAssignee(ctx, owned))
	is.Equal(ids("none"), []string{owned.ID})
}

var at = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

// task is an open task of the i-th lead's enrollment at step, for the
// visit that started at started, due a day later.
func task(f Fixture, i int, client *string, step string, started time.Time) *tasks.Task {
	return &tasks.Task{ID: apikit.NewID(), WorkspaceID: f.WorkspaceID, ClientID: client, LeadID: f.LeadIDs[i], EnrollmentID: f.EnrollmentIDs[i],
		SequenceID: f.SequenceID, StepID: step, StepStartedAt: started, Title: "Call", DueAt: started.Add(24 * time.Hour), Status: tasks.Open,
		CreatedAt: started, UpdatedAt: started}
}

// onePerVisit: a visit of a step by an enrollment has one task: a second
// insert for it adds nothing and the first is what ForVisit finds; a later
// visit gets a task of its own; a task reads back by id in its workspace
// only.
func onePerVisit(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	first := task(f, 0, &f.ClientIDs[0], "call", at)
	added, err := st.Insert(ctx, first)
	is.NoErr(err)
	is.True(added)
	again := task(f, 0, nil, "call", at)
	again.Title = "Call again"
	added, err = st.Insert(ctx, again)
	is.NoErr(err)
	is.True(!added)
	got, err := st.ForVisit(ctx, f.EnrollmentIDs[0], "call", at)
	is.NoErr(err)
	is.Equal(got.ID, first.ID)
	is.Equal(got.Title, "Call")
	is.Equal(*got.ClientID, f.ClientIDs[0])
	_, err = st.ForVisit(ctx, f.EnrollmentIDs[0], "call", at.Add(time.Second))
	is.True(db.IsNoRows(err))

	later := task(f, 0, nil, "call", at.Add(time.Hour))
	added, err = st.Insert(ctx, later)
	is.NoErr(err)
	is.True(added)
	got, err = st.ByID(ctx, f.WorkspaceID, later.ID)
	is.NoErr(err)
	is.True(got.StepStartedAt.Equal(at.Add(time.Hour)))
	is.Equal(got.Status, tasks.Open)
	_, err = st.ByID(ctx, apikit.NewID(), later.ID) // another workspace
	is.True(db.IsNoRows(err))
	_, err = st.ByID(ctx, f.WorkspaceID, again.ID) // never added
	is.True(db.IsNoRows(err))
}

// finishOnce: an open task is finished once with its outcome, note and
// time; finishing it again changes nothing and says so.
func finishOnce(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	tk := task(f, 0, nil, "call", at)
	_, err := st.Insert(ctx, tk)
	is.NoErr(err)
	done, note := at.Add(time.Hour), "Spoke to Ann.\nCall back in May."
	tk.Status, tk.Note, tk.CompletedAt, tk.UpdatedAt = tasks.Done, &note, &done, done
	ok, err := st.Finish(ctx, tk)
	is.NoErr(err)
	is.True(ok)
	skipped := *tk
	later := done.Add(time.Hour)
	skipped.Status, skipped.Note, skipped.CompletedAt, skipped.UpdatedAt = tasks.Skipped, nil, &later, later
	ok, err = st.Finish(ctx, &skipped)
	is.NoErr(err)
	is.True(!ok) // finished already
	got, err := st.ByID(ctx, f.WorkspaceID, tk.ID)
	is.NoErr(err)
	is.Equal(got.Status, tasks.Done)
	is.Equal(*got.Note, note)
	is.True(got.CompletedAt != nil && got.CompletedAt.Equal(done))
	is.True(got.UpdatedAt.Equal(done))
	is.Equal(got.CompletedBy, nil)
}

// list: the workspace's tasks come the earliest due first, with their
// total, one page at a time; each filter (status, sequence, lead, client,
// due before) and a key's client scope narrow them.
func list(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	globex, initech := &f.ClientIDs[0], &f.ClientIDs[1]
	a := task(f, 0, globex, "call", at.Add(2*time.Hour)) // due third
	b := task(f, 1, initech, "call", at)                 // due first
	c := task(f, 1, nil, "note", at.Add(time.Hour))      // due second
	for _, tk := range []*tasks.Task{a, b, c} {
		_, err := st.Insert(ctx, tk)
		is.NoErr(err)
	}
	done := at.Add(time.Hour)
	c.Status, c.CompletedAt, c.UpdatedAt = tasks.Skipped, &done, done
	ok, err := st.Finish(ctx, c)
	is.NoErr(err)
	is.True(ok)

	ids := func(ts []tasks.Task) []string {
		out := []string{}
		for _, tk := range ts {
			out = append(out, tk.ID)
		}
		return out
	}
	page, total, err := st.List(ctx, f.WorkspaceID, nil, tasks.Filter{Limit: 10})
	is.NoErr(err)
	is.Equal(total, 3)
	is.Equal(ids(page), []string{b.ID, c.ID, a.ID})
	page, total, err = st.List(ctx, f.WorkspaceID, nil, tasks.Filter{Limit: 1, Offset: 1})
	is.NoErr(err)
	is.Equal(total, 3)
	is.Equal(ids(page), []string{c.ID})

	cutoff := at.Add(26 * time.Hour)
	for _, tc := range []struct {
		name  string
		scope []string
		f     tasks.Filter
		want  []string
	}{
		{"open", nil, tasks.Filter{Status: tasks.Open}, []string{b.ID, a.ID}},
		{"skipped", nil, tasks.Filter{Status: tasks.Skipped}, []string{c.ID}},
		{"sequence", nil, tasks.Filter{SequenceID: f.SequenceID}, []string{b.ID, c.ID, a.ID}},
		{"another sequence", nil, tasks.Filter{SequenceID: apikit.NewID()}, []string{}},
		{"lead", nil, tasks.Filter{LeadID: f.LeadIDs[1]}, []string{b.ID, c.ID}},
		{"client", nil, tasks.Filter{ClientID: *initech}, []string{b.ID}},
		{"due before", nil, tasks.Filter{DueBefore: &cutoff}, []string{b.ID, c.ID}},
		{"scope", []string{*globex}, tasks.Filter{}, []string{a.ID}},
		{"scope and filter", []string{*globex}, tasks.Filter{LeadID: f.LeadIDs[1]}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			tc.f.Limit = 10
			page, total, err := st.List(ctx, f.WorkspaceID, tc.scope, tc.f)
			is.NoErr(err)
			is.Equal(ids(page), tc.want)
			is.Equal(total, len(tc.want))
		})
	}
	page, total, err = st.List(ctx, apikit.NewID(), nil, tasks.Filter{Limit: 10})
	is.NoErr(err)
	is.Equal(total, 0)
	is.Equal(len(page), 0)
}
