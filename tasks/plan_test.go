package tasks_test

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/fixture"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/tasks"
)

// TestAssigneePlans explains, on both engines, the list of a member's open
// tasks (the console's "My tasks", GET /v1/tasks?assignee_id=…&status=open)
// and the INSERT of a task step's task with its owner's reads: the list
// reads the tasks_assignee index in its order (no sort on SQLite), and the
// owner's reads seek the lead's threads and events through their lead_id
// indexes, never a workspace's, and check each member by its key.
func TestAssigneePlans(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		w, pl := planWorld(t, d)
		p := apikit.Principal{WorkspaceID: w.WorkspaceID, Role: apikit.RoleMember, MemberID: apikit.NewID()}
		rec := dbtest.Record(d)
		var inserts []string
		for _, q := range rec.During(func() {
			if err := d.InTx(ctx, func(ctx context.Context) error {
				_, err := pl.Tasks.Open(ctx, tasks.Task{WorkspaceID: w.WorkspaceID, LeadID: w.LeadIDs[0], EnrollmentID: w.EnrollmentIDs[0],
					SequenceID: w.SequenceID, StepID: "call", StepStartedAt: fixture.At, Title: "Call", DueAt: fixture.At.Add(24 * time.Hour)})
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}) {
			if strings.HasPrefix(q, `INSERT INTO "tasks"`) {
				inserts = append(inserts, q)
			}
		}
		if len(inserts) != 1 {
			t.Fatalf("%d task INSERTs recorded, want 1", len(inserts))
		}
		scan := regexp.MustCompile(`^SCAN (threads|th|events|ev|members|am)\b|Seq Scan on (threads|events|members)\b`)
		plan := dbtest.Plan(t, d, inserts[0])
		for _, line := range plan {
			if scan.MatchString(line) {
				t.Errorf("%s: the task's owner is read by a scan: %s", d.Engine, line)
			}
		}
		if all := strings.Join(plan, "\n"); !strings.Contains(all, "threads_lead") || !strings.Contains(all, "events_lead") {
			t.Errorf("%s: the task's owner is not read through the lead's threads and events:\n%s", d.Engine, all)
		}

		moreTasks(t, d, pl, w, 200)
		mine := rec.During(func() {
			if _, err := pl.Tasks.List(ctx, p, tasks.Filter{AssigneeID: p.MemberID, Status: tasks.Open, Limit: 50}); err != nil {
				t.Fatal(err)
			}
		})
		dbtest.AssertNoScan(t, d, "tasks", "", mine)
		for _, q := range mine {
			plan := strings.Join(dbtest.Plan(t, d, q), "\n")
			if !strings.Contains(plan, "tasks_assignee") {
				t.Errorf("%s: a member's open tasks are not read through tasks_assignee:\n%s", d.Engine, plan)
			}
			if d.Engine == db.SQLite && strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("sqlite: a member's open tasks are sorted, not read in the index's order:\n%s", plan)
			}
		}
	})
}

// planWorld is a workspace with one client and one enrolled lead, and the
// platform over it, for the plan tests.
func planWorld(t *testing.T, d *db.DB) (fixture.World, *platform.Platform) {
	w := fixture.New(t, d, fixture.Spec{Clients: []string{"Globex"}, Leads: 1, Enrolled: true})
	return w, platform.New(platform.Config{DB: d, Clock: apikit.NewFakeClock(fixture.At), Logger: slog.New(slog.DiscardHandler)})
}

// moreTasks opens n more tasks of the world's one enrolment, of no client
// and nobody's, and gives Postgres statistics: with a task or two every
// index costs the same, and the planner's pick says nothing of the index a
// list of real size reads.
func moreTasks(t *testing.T, d *db.DB, pl *platform.Platform, w fixture.World, n int) {
	t.Helper()
	ctx := context.Background()
	if err := d.InTx(ctx, func(ctx context.Context) error {
		for i := range n {
			if _, err := pl.Tasks.Open(ctx, tasks.Task{WorkspaceID: w.WorkspaceID, LeadID: w.LeadIDs[0], EnrollmentID: w.EnrollmentIDs[0],
				SequenceID: w.SequenceID, StepID: "call", StepStartedAt: fixture.At.Add(time.Duration(i+1) * time.Minute), Title: "Call",
				DueAt: fixture.At.Add(time.Duration(i) * time.Hour)}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if d.Engine == db.Postgres {
		if _, err := d.ExecContext(ctx, "ANALYZE tasks"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestClientTaskPlans explains, on both engines, a client viewer's task
// list (the console's /app/tasks for a client viewer, GET /v1/tasks with a
// client-scoped key) and a manager's filter by one client: both read the
// tasks_client index, never every task of the workspace with each one's
// row, and one client's tasks come in its due order (no sort on SQLite).
func TestClientTaskPlans(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		w, pl := planWorld(t, d)
		globex := w.Clients["Globex"]
		moreTasks(t, d, pl, w, 200)
		rec := dbtest.Record(d)
		viewer := apikit.Principal{WorkspaceID: w.WorkspaceID, Role: apikit.RoleClientViewer, MemberID: apikit.NewID(), ClientIDs: []string{globex}}
		manager := apikit.Principal{WorkspaceID: w.WorkspaceID, Role: apikit.RoleManager, MemberID: apikit.NewID()}
		for _, c := range []struct {
			name string
			p    apikit.Principal
			f    tasks.Filter
		}{
			{"viewer", viewer, tasks.Filter{Limit: 50}},
			{"viewer, open", viewer, tasks.Filter{Status: tasks.Open, Limit: 50}},
			{"manager, one client", manager, tasks.Filter{ClientID: globex, Limit: 50}},
		} {
			qs := rec.During(func() {
				if _, err := pl.Tasks.List(ctx, c.p, c.f); err != nil {
					t.Fatal(err)
				}
			})
			dbtest.AssertNoScan(t, d, "tasks", "", qs)
			for _, q := range qs {
				plan := strings.Join(dbtest.Plan(t, d, q), "\n")
				if !strings.Contains(plan, "tasks_client") {
					t.Errorf("%s, %s: a client's tasks are not read through tasks_client:\n%s", d.Engine, c.name, plan)
				}
				if d.Engine == db.SQLite && strings.Contains(plan, "TEMP B-TREE") {
					t.Errorf("sqlite, %s: a client's tasks are sorted, not read in the index's order:\n%s", c.name, plan)
				}
			}
		}
	})
}
