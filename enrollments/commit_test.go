package enrollments_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
)

func reasons(ex []enrollments.Exclusion) map[string]string {
	out := map[string]string{}
	for _, x := range ex {
		out[x.LeadID] = x.Reason
	}
	return out
}

// excludedWorld is a lead for each reason a preview or a commit of Visit
// leaves one out, and ann, who is eligible.
type excludedWorld struct {
	ann, elsewhere, dnc, black, noLinkedIn, again, unknown string
}

func (b *bundle) excluded() excludedWorld {
	b.t.Helper()
	x := excludedWorld{ann: b.lead("Ann Lee", ""), elsewhere: b.lead("Ben Ode", ""), dnc: b.lead("Cy Park", ""),
		black: b.lead("Dee Umbra", "Umbrella"), noLinkedIn: b.lead("Eve Mail", "", "linkedin"), again: b.lead("Fay Back", ""), unknown: apikit.NewID()}
	b.enrol("Other", x.elsewhere)
	if _, err := b.pl.Leads.Suppress(b.ctx, b.p, x.dnc); err != nil {
		b.t.Fatal(err)
	}
	if _, err := b.svc.Exit(b.ctx, b.p, b.enrol("Visit", x.again)[x.again].ID); err != nil {
		b.t.Fatal(err)
	}
	return x
}

func (x excludedWorld) ids() []string {
	return []string{x.ann, x.elsewhere, x.dnc, x.black, x.noLinkedIn, x.again, x.unknown, "not-a-uuid", x.ann}
}

func (x excludedWorld) want() map[string]string {
	return map[string]string{x.elsewhere: "already_enrolled", x.dnc: "do_not_contact", x.black: "blacklisted",
		x.noLinkedIn: "missing_linkedin", x.again: "already_in_sequence", x.unknown: "not_found", "not-a-uuid": "not_found"}
}

// TestPreview: a preview names each lead left out and why (live in
// another sequence, naming it; do-not-contact; blacklisted; no LinkedIn
// for a LinkedIn first step, no address for an email one; enrolled in the
// sequence before; unknown), counts a repeated id once, assigns a sender
// to each eligible lead, warns of a sequence that is not active, and
// changes nothing.
func TestPreview(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		x := b.excluded()
		pv, err := b.svc.Preview(b.ctx, b.p, enrollments.EnrollInput{SequenceID: b.ids["Visit"], LeadIDs: x.ids()})
		is.NoErr(err)
		is.Equal(pv.EligibleIDs, []string{x.ann})
		is.Equal(reasons(pv.Excluded), x.want())
		for _, ex := range pv.Excluded {
			if ex.Reason == "already_enrolled" {
				is.True(strings.Contains(ex.Detail, `"Other"`))
			}
		}
		is.Equal(len(pv.Assignments), 1)
		is.Equal(pv.Assignments[0], enrollments.Assignment{LeadID: x.ann, SenderID: b.ids["anna"]})
		is.Equal(len(pv.Warnings), 0)
		is.True(same(pv.Estimate.FirstActionAt, monday)) // anna is inside her working hours

		live, err := b.svc.Store().Live(b.ctx, b.p.WorkspaceID, []string{x.ann})
		is.NoErr(err)
		is.Equal(len(live), 0)
		is.Equal(len(b.kinds(x.ann)), 0)

		// An email first step needs an address; LinkedIn is not needed.
		noEmail := b.lead("Gus Link", "", "email")
		pv, err = b.svc.Preview(b.ctx, b.p, enrollments.EnrollInput{SequenceID: b.ids["Mail"], LeadIDs: []string{x.noLinkedIn, noEmail}})
		is.NoErr(err)
		is.Equal(pv.EligibleIDs, []string{x.noLinkedIn})
		is.Equal(reasons(pv.Excluded), map[string]string{noEmail: "missing_email"})
		is.Equal(pv.Assignments[0].SenderID, b.ids["mail"])

		pv, err = b.svc.Preview(b.ctx, b.p, enrollments.EnrollInput{SequenceID: b.ids["Draft"], LeadIDs: []string{x.ann}})
		is.NoErr(err)
		is.Equal(len(pv.Warnings), 1)
		is.Equal(pv.Warnings[0].Code, "sequence_not_active")
		is.Equal(pv.Warnings[0].Count, 1)

		_, err = b.svc.Preview(b.ctx, b.p, enrollments.EnrollInput{SequenceID: apikit.NewID(), LeadIDs: []string{x.ann}})
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
	})
}

// TestCommit: a commit refuses to enrol without confirm; with it, it
// enrols the eligible leads at the first step, due at once with their
// sender, and leaves out the others for the preview's reasons, with one
// enrollment.created event and the first step entered per enrollment. A
// lead enrolled in a draft waits for the sequence, held.
func TestCommit(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		x := b.excluded()
		in := enrollments.EnrollInput{SequenceID: b.ids["Visit"], LeadIDs: x.ids()}
		_, err := b.svc.Commit(b.ctx, b.p, in)
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		is.Equal(len(b.kinds(x.ann)), 0)
		is.Equal(b.step("Visit", "visit").Entered, 1) // the lead enrolled before it only

		in.Confirm = true
		res, err := b.svc.Commit(b.ctx, b.p, in)
		is.NoErr(err)
		is.Equal(res.Enrolled, 1)
		is.Equal(len(res.EnrollmentIDs), 1)
		is.Equal(reasons(res.Excluded), x.want())
		is.Equal(len(res.Warnings), 0)
		e := b.get(res.EnrollmentIDs[0])
		is.Equal([]any{e.LeadID, e.SequenceID, e.Status, e.StepID, *e.SenderID}, []any{x.ann, b.ids["Visit"], enrollments.Active, "visit", b.ids["anna"]})
		is.True(e.EmailSenderID == nil && e.WaitingFor == nil && !e.Held)
		is.True(e.StepStartedAt.Equal(monday) && same(e.NextRunAt, monday) && e.CreatedAt.Equal(monday))
		ev := b.last(x.ann, enrollments.EventCreated)
		is.Equal([]any{ev.EnrollmentID, ev.StepID, ev.SenderID, ev.Data["sequence_name"]}, []any{e.ID, "visit", b.ids["anna"], "Visit"})
		is.Equal(b.step("Visit", "visit").Entered, 2)

		res, err = b.svc.Commit(b.ctx, b.p, in) // again: every lead is left out now
		is.NoErr(err)
		is.Equal(res.Enrolled, 0)
		is.Equal(reasons(res.Excluded)[x.ann], "already_in_sequence")

		gus := b.lead("Gus Link", "")
		res, err = b.svc.Commit(b.ctx, b.p, enrollments.EnrollInput{SequenceID: b.ids["Draft"], LeadIDs: []string{gus}, Confirm: true})
		is.NoErr(err)
		is.Equal(res.Warnings[0].Code, "sequence_not_active")
		is.True(b.get(res.EnrollmentIDs[0]).Held)
	})
}

// TestEnrollLimits: one call takes 1 to 10,000 lead ids, on preview and
// on commit alike.
func TestEnrollLimits(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		is := is.New(t)
		ann := b.lead("Ann Lee", "")
		ids := make([]string, enrollments.MaxLeadIDs)
		ids[0] = ann
		for i := 1; i < len(ids); i++ {
			ids[i] = apikit.NewID()
		}
		pv, err := b.svc.Preview(b.ctx, b.p, enrollments.EnrollInput{SequenceID: b.ids["Visit"], LeadIDs: ids})
		is.NoErr(err)
		is.Equal(pv.EligibleIDs, []string{ann})
		is.Equal(len(pv.Excluded), enrollments.MaxLeadIDs-1)

		over := append(ids, apikit.NewID())
		_, err = b.svc.Preview(b.ctx, b.p, enrollments.EnrollInput{SequenceID: b.ids["Visit"], LeadIDs: over})
		is.Equal(apikit.ErrorCode(err), apikit.ETooMany)
		_, err = b.svc.Commit(b.ctx, b.p, enrollments.EnrollInput{SequenceID: b.ids["Visit"], LeadIDs: over, Confirm: true})
		is.Equal(apikit.ErrorCode(err), apikit.ETooMany)
		_, err = b.svc.Preview(b.ctx, b.p, enrollments.EnrollInput{SequenceID: b.ids["Visit"]})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		_, err = b.svc.Commit(b.ctx, b.p, enrollments.EnrollInput{SequenceID: b.ids["Visit"], LeadIDs: []string{}, Confirm: true})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		is.Equal(len(b.kinds(ann)), 0)
	})
}
