package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/setup"
)

func TestPreviewReasonsAndCommitRechecks(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, "", "Berlin CTOs", "Plain", "anna", "mail")
		ok1, ok2 := e.lead("Ann Lee", nil), e.lead("Bo Chen", nil)
		initech := e.lead("Ida Initech", map[string]any{"client_id": e.ids["Initech"]})
		dnc := e.lead("Dan Nope", nil)
		_, err := e.leads.Suppress(ctx, e.p, dnc)
		is.NoErr(err)
		umbrella := e.lead("Uma Brella", map[string]any{"company": "Umbrella"})
		busy := e.lead("Busy Bee", nil)
		e.enrol("Plain", busy)
		noLI := e.lead("No Linked", map[string]any{"no_linkedin": true})
		noMail := e.lead("No Mail", map[string]any{"no_email": true})
		noName := e.lead("", nil)
		ghost := "0193a000-0000-7000-8000-000000000000"

		pv := e.preview("Berlin CTOs", e.p, ok1, ok2, initech, dnc, umbrella, busy, noLI, noMail, noName, ghost, ok1)
		is.Equal(pv.EligibleIDs, []string{ok1, ok2}) // a repeated id counts once
		is.Equal(reasons(pv.Excluded), map[string]string{initech: "client_mismatch", dnc: "do_not_contact", umbrella: "blacklisted",
			busy: "already_enrolled", noLI: "missing_linkedin", noMail: "missing_email", noName: "missing_variable", ghost: "not_found"})
		for _, x := range pv.Excluded {
			is.True(x.Detail != "")
			if x.Reason == "already_enrolled" {
				is.True(strings.Contains(x.Detail, `"Plain"`))
			}
		}
		is.Equal(len(pv.Assignments), 2)
		is.Equal(pv.Assignments[0].SenderID, e.ids["anna"])
		is.Equal(*pv.Assignments[0].EmailSenderID, e.ids["mail"])
		is.Equal(pv.Warnings[0].Code, "sequence_not_active")
		// 08:00 Monday in Berlin: the first visit when the window opens at 09:00.
		is.True(pv.Estimate.FirstActionAt.Equal(monday.Add(time.Hour)))
		is.Equal(pv.Estimate.Days, 1)

		// A scoped key does not see another client's lead.
		scoped := e.p
		scoped.ClientIDs = []string{e.ids["Globex"]}
		is.Equal(reasons(e.preview("Berlin CTOs", scoped, initech).Excluded)[initech], "not_found")

		// Preview changed nothing; commit re-checks: a lead suppressed since
		// the preview is not enrolled.
		_, err = e.leads.Suppress(ctx, e.p, ok2)
		is.NoErr(err)
		_, err = e.svc.Commit(ctx, e.p, enrollments.EnrollInput{SequenceID: e.ids["Berlin CTOs"], LeadIDs: []string{ok1, ok2}})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid) // no confirm
		res := e.enrol("Berlin CTOs", ok1, ok2)
		is.Equal(res.Enrolled, 1)
		is.Equal(reasons(res.Excluded), map[string]string{ok2: "do_not_contact"})
		is.Equal(reasons(e.preview("Berlin CTOs", e.p, ok1).Excluded)[ok1], "already_in_sequence")

		// Limits.
		many := make([]string, enrollments.MaxLeadIDs+1)
		_, err = e.svc.Preview(ctx, e.p, enrollments.EnrollInput{SequenceID: e.ids["Berlin CTOs"], LeadIDs: many})
		is.Equal(apikit.ErrorCode(err), apikit.ETooMany)
	})
}

func TestAssignmentsSpreadByCapacityAndKeepTheSender(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "", "Plain", "Spread", "anna", "ben")
		var ids []string
		for i := range 12 {
			ids = append(ids, e.lead("Lead "+string(rune('A'+i)), nil))
		}
		pv := e.preview("Spread", e.p, ids...)
		per := map[string]int{}
		for _, a := range pv.Assignments {
			per[a.SenderID]++
		}
		// anna views 10 a day, ben 50: ben takes about five times as many.
		is.Equal(per[e.ids["anna"]]+per[e.ids["ben"]], 12)
		is.True(per[e.ids["anna"]] >= 1 && per[e.ids["ben"]] >= 8)

		// A lead that anna already contacted keeps anna.
		e.activate("Plain")
		e.enrol("Plain", ids[11])
		e.runUntil(monday.Add(3 * time.Hour))
		is.Equal(e.enrollment(ids[11]).Status, enrollments.Finished)
		pv = e.preview("Spread", e.p, ids[11])
		is.Equal(pv.Assignments[0].SenderID, e.ids["anna"])
	})
}

func TestEnrollmentTransitions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, "", "Berlin CTOs")
		ann := e.lead("Ann Lee", nil)
		id := e.enrol("Berlin CTOs", ann).EnrollmentIDs[0]
		conflict := func(_ *enrollments.Enrollment, err error) {
			t.Helper()
			is.Equal(apikit.ErrorCode(err), apikit.EConflict)
		}
		conflict(e.svc.Resume(ctx, e.p, id))
		en, err := e.svc.Pause(ctx, e.p, id)
		is.NoErr(err)
		is.Equal(en.Status, enrollments.Paused)
		conflict(e.svc.Pause(ctx, e.p, id))
		en, err = e.svc.Resume(ctx, e.p, id)
		is.NoErr(err)
		is.Equal(en.Status, enrollments.Active)
		en, err = e.svc.Exit(ctx, e.p, id)
		is.NoErr(err)
		is.Equal(en.Status, enrollments.Exited)
		conflict(e.svc.Exit(ctx, e.p, id))
		conflict(e.svc.Resume(ctx, e.p, id))
		_, err = e.svc.Pause(ctx, apikit.Principal{WorkspaceID: e.p.WorkspaceID, ClientIDs: []string{e.ids["Initech"]}}, id)
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
		is.Equal(e.kinds(ann)[1:], []string{"enrollment.created", "enrollment.paused", "enrollment.resumed", "enrollment.exited"})
	})
}

func TestChangedStepsKeepTheirPlaceOrFailAsRemoved(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, `      - name: Two
        client: Globex
        senders: [anna]
        steps:
          - {id: visit, type: profile_view}
          - {id: gap, type: wait, days: 2}
          - {id: again, type: profile_view}
`)
		q, err := e.seqs.ByName(ctx, e.p.WorkspaceID, "Two")
		is.NoErr(err)
		e.ids["Two"] = q.ID
		e.activate("Two")
		ann, bo := e.lead("Ann Lee", nil), e.lead("Bo Chen", nil)
		e.enrol("Two", ann, bo)
		e.runUntil(monday.Add(3 * time.Hour))
		is.Equal(e.enrollment(ann).StepID, "gap")
		// Paused, the sequence loses the step "again"; Bo is moved on by
		// hand first and keeps his place by id.
		_, err = e.seqs.Pause(ctx, e.p, q.ID)
		is.NoErr(err)
		_, err = d.NewUpdate().Table("enrollments").Set("step_id = 'visit'").Where("lead_id = ?", bo).Exec(ctx)
		is.NoErr(err)
		f, err := setup.Decode(strings.NewReader(engineSetup + `      - name: Two
        client: Globex
        senders: [anna]
        steps:
          - {id: visit, type: profile_view}
          - {id: gap, type: wait, days: 2, next: end}
`))
		is.NoErr(err)
		_, err = setup.Apply(ctx, d, e.clock, secret.TestKey(), f)
		is.NoErr(err)
		e.activate("Two")
		_, err = d.NewUpdate().Table("enrollments").Set("step_id = 'again'").Where("lead_id = ?", ann).Exec(ctx)
		is.NoErr(err)
		e.runUntil(monday.Add(120 * time.Hour))
		en := e.enrollment(ann)
		is.Equal(en.Status, enrollments.Failed)
		is.Equal(*en.LastErrorCode, "step_removed")
		is.Equal(e.enrollment(bo).Status, enrollments.Finished) // visit, gap, end
	})
}
