package enrollments_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/sandbox"
)

func TestRunnerSendsASequence(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "")
		ann := e.lead("Ann Lee", nil)
		e.net.Script(ann, sandbox.Outcome{Accept: true, AcceptAfter: 3 * time.Hour})
		e.activate("Berlin CTOs")
		res := e.enrol("Berlin CTOs", ann)
		is.Equal(res.Enrolled, 1)

		// 08:00 in Berlin: outside the schedule until 09:00.
		e.runUntil(monday.Add(30 * time.Minute))
		en := e.enrollment(ann)
		is.Equal(*en.WaitingFor, "outside_schedule")
		is.True(en.NextRunAt.Equal(time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)))

		e.runUntil(monday.Add(24 * time.Hour))
		en = e.enrollment(ann)
		is.Equal(en.Status, enrollments.Finished)
		perf := e.net.Performed()
		is.Equal(len(perf), 3) // visit, invite, message
		is.Equal(string(perf[0].Action), "profile_view")
		is.Equal(string(perf[1].Action), "invite")
		is.True(perf[1].WithNote)
		is.Equal(string(perf[2].Action), "message")
		is.True(perf[2].At.Equal(time.Date(2026, 11, 2, 11, 0, 0, 0, time.UTC))) // as the acceptance came in
		is.Equal(e.kinds(ann), []string{"lead.created", "enrollment.created", "action.sent", "action.sent", "invite.accepted", "action.sent", "enrollment.finished"})
		e.noViolations()
	})
}
