package simulate_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/simulate"
	"github.com/leadline/leadline/workspace"
)

// TestSimulatedFortnight runs the sample setup for two weeks and checks the
// run against the sandbox's audit and an independent count of the export.
func TestSimulatedFortnight(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		t.Parallel() // the engines side by side
		is := is.New(t)
		ctx := context.Background()
		f, err := setup.ReadFile("../examples/setup.yaml")
		is.NoErr(err)
		var out bytes.Buffer
		res, err := simulate.Run(ctx, simulate.Config{DB: d, Setup: f, Days: 14, Seed: 7, Leads: 300, Start: "2026-03-02", Rates: sandbox.DefaultRates, Out: &out})
		is.NoErr(err)
		is.Equal(len(res.Violations), 0)
		is.True(res.Actions > 300)
		is.True(res.Accepted > 0)
		is.True(res.Replies > 0)
		is.True(strings.Contains(out.String(), "0 violations."))
		// The inbox has threads with replies of several intents, among them
		// out-of-office ones, and the task step left open tasks.
		is.True(res.Threads > 0)
		is.True(res.Intents["ooo"] > 0)
		is.True(len(res.Intents) >= 4)
		is.True(res.OpenTasks > 0)
		is.True(res.Meetings > 0) // some interested leads booked a meeting
		// The runner's wall time is split by part, within the run's.
		sp := res.Phases.Runner
		is.True(sp.Runs > 0 && sp.Checks > 0 && sp.Claims > 0 && sp.Ingest > 0)
		is.True(sp.Runs+sp.Checks+sp.Claims+sp.Ingest+sp.NextDue <= res.Phases.Run)
		is.True(strings.Contains(out.String(), "Inbox: "))

		// The export, counted by simple code, agrees with what the sandbox received.
		w, err := workspace.NewService(d, apikit.SystemClock{}).ByName(ctx, "agency")
		is.NoErr(err)
		var buf bytes.Buffer
		is.NoErr(events.NewLog(d, apikit.SystemClock{}).Export(ctx, w.ID, time.Time{}, &buf))
		sent, withNote, dnc := 0, 0, 0
		exported, err := events.ReadExport(&buf)
		is.NoErr(err)
		for _, e := range exported {
			is.True(e.ID != "" && !e.At.IsZero() && e.Kind != "")
			switch e.Kind {
			case "action.sent":
				sent++
				is.True(e.SenderID != nil && e.LeadID != nil && e.SequenceID != nil && e.EnrollmentID != nil && e.StepID != nil)
				if e.Data["with_note"] == true {
					withNote++
				}
			case "lead.suppressed":
				dnc++
			}
		}
		is.Equal(sent, res.Actions)
		notes := 0
		for _, p := range res.Performed {
			if p.WithNote {
				notes++
			}
		}
		is.Equal(withNote, notes)
		is.True(dnc > 0) // the run marked leads do-not-contact as it went
	})
}
