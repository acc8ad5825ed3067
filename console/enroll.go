package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// enrollData is the enrolment form: which leads (a list, a tag, a stage,
// and ids), and, once previewed, each lead's outcome.
type enrollData struct {
	Sequence *sequences.Sequence
	Catalog  workspace.Catalog
	Form     enrollFilter
	Preview  *enrollments.Preview
	Rows     []previewRow
	Eligible []string
}

type enrollFilter struct {
	ListID, TagID, StageID, IDs string
}

// previewRow is one lead of a preview: enrolled or not, and why.
type previewRow struct {
	LeadID, Name, Sender, Reason, Detail string
	Eligible                             bool
}

func (c *Console) enrollPage(rq *Request, status int, d *enrollData, e *apikit.Error) error {
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return err
	}
	d.Catalog = cat
	return rq.Render(status, "sequence_enroll", page{Title: "Enrol leads in " + d.Sequence.Name, Nav: "sequences", Data: d, Error: e})
}

func (c *Console) enrollForm(rq *Request) error {
	q, err := c.visibleSequence(rq)
	if err != nil {
		return err
	}
	return c.enrollPage(rq, http.StatusOK, &enrollData{Sequence: q}, nil)
}

// maxPreviewLeads is how many leads one preview takes, as the API's.
const maxPreviewLeads = enrollments.MaxLeadIDs

// chosenLeads are the leads the enrolment form names: those of the
// list, tag and stage chosen (all of them together), and the ids typed.
func (c *Console) chosenLeads(rq *Request, f enrollFilter) ([]leads.Lead, []string, error) {
	var out []leads.Lead
	var ids []string
	if f.ListID != "" || f.TagID != "" || f.StageID != "" {
		for offset := 0; offset < maxPreviewLeads; offset += apikit.MaxLimit {
			page, err := c.pl.Leads.List(rq.Ctx, rq.P, leads.Filter{ListID: listID(f.ListID), TagID: listID(f.TagID), StageID: listID(f.StageID),
				Limit: apikit.MaxLimit, Offset: offset})
			if err != nil {
				return nil, nil, err
			}
			out = append(out, page.Data...)
			if offset+len(page.Data) >= page.Total || len(page.Data) == 0 {
				break
			}
		}
	}
	for _, l := range out {
		ids = append(ids, l.ID)
	}
	for _, id := range strings.Fields(strings.ReplaceAll(f.IDs, ",", " ")) {
		if !apikit.ValidID(id) {
			return nil, nil, apikit.Invalid(fmt.Sprintf("%q is not a lead id.", id), "Type lead ids (as the lead's address shows them), one per line.")
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, nil, apikit.Invalid("No lead is chosen.", "Choose a list, a tag or a stage with leads, or type lead ids.")
	}
	return out, ids, nil
}

// previewEnrollment previews, as POST /v1/enrollments/preview does, the
// chosen leads' enrolment: each lead eligible or excluded with the
// reason, and the sender it gets.
func (c *Console) previewEnrollment(rq *Request) error {
	q, err := c.visibleSequence(rq)
	if err != nil {
		return err
	}
	f := rq.R.PostForm
	d := &enrollData{Sequence: q, Form: enrollFilter{ListID: f.Get("list_id"), TagID: f.Get("tag_id"), StageID: f.Get("stage_id"), IDs: f.Get("ids")}}
	fail := func(err error) error {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal {
			return err
		}
		return c.enrollPage(rq, StatusOf(ae.Code), d, ae)
	}
	found, ids, err := c.chosenLeads(rq, d.Form)
	if err != nil {
		return fail(err)
	}
	pv, err := c.pl.Enrollments.Preview(rq.Ctx, rq.P, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: ids})
	if err != nil {
		return fail(err)
	}
	d.Preview, d.Eligible = pv, pv.EligibleIDs
	d.Rows, err = c.previewRows(rq, pv, found)
	if err != nil {
		return err
	}
	return c.enrollPage(rq, http.StatusOK, d, nil)
}

// previewRows are the preview's leads with their names and senders'.
func (c *Console) previewRows(rq *Request, pv *enrollments.Preview, found []leads.Lead) ([]previewRow, error) {
	leadName := map[string]string{}
	for _, l := range found {
		leadName[l.ID] = leadLabel(l)
	}
	senderOf := map[string]string{}
	for _, a := range pv.Assignments {
		senderOf[a.LeadID] = a.SenderID
	}
	senderName := map[string]string{}
	ss, err := c.pl.Senders.List(rq.Ctx, rq.P, senders.Filter{Limit: apikit.MaxLimit})
	if err != nil {
		return nil, err
	}
	for _, s := range ss.Data {
		senderName[s.ID] = s.Name
	}
	// The typed ids' leads in one read. A lead the principal may not see
	// (Get would refuse it) is left out and shows its id alone.
	var typed []string
	for _, id := range append(slices.Clone(pv.EligibleIDs), excludedIDs(pv)...) {
		if _, ok := leadName[id]; !ok {
			typed = append(typed, id)
		}
	}
	if len(typed) > 0 {
		ls, err := c.pl.Leads.VisibleByIDs(rq.Ctx, rq.P, typed)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			leadName[l.ID] = leadLabel(l)
		}
	}
	name := func(id string) string {
		if n, ok := leadName[id]; ok {
			return n
		}
		return id
	}
	var rows []previewRow
	for _, id := range pv.EligibleIDs {
		rows = append(rows, previewRow{LeadID: id, Name: name(id), Eligible: true, Sender: senderName[senderOf[id]]})
	}
	for _, x := range pv.Excluded {
		rows = append(rows, previewRow{LeadID: x.LeadID, Name: name(x.LeadID), Reason: strings.ReplaceAll(x.Reason, "_", " "), Detail: x.Detail})
	}
	return rows, nil
}

// excludedIDs are the ids of the leads a preview leaves out.
func excludedIDs(pv *enrollments.Preview) []string {
	ids := make([]string, len(pv.Excluded))
	for i, x := range pv.Excluded {
		ids[i] = x.LeadID
	}
	return ids
}

// leadLabel is a lead's name, or its company or id when it has none.
func leadLabel(l leads.Lead) string {
	for _, s := range []*string{l.Name, l.Company} {
		if apikit.Deref(s) != "" {
			return *s
		}
	}
	return l.ID
}

// commitEnrollment enrols the previewed eligible leads as POST
// /v1/enrollments with confirm does: every rule is checked again, so
// possibly fewer are enrolled than previewed.
func (c *Console) commitEnrollment(rq *Request) error {
	q, err := c.visibleSequence(rq)
	if err != nil {
		return err
	}
	ids := rq.R.PostForm["lead_id"]
	for _, id := range ids {
		if !apikit.ValidID(id) {
			return apikit.Invalid("The form names a lead that is not one.", "Preview again.")
		}
	}
	res, err := c.pl.Enrollments.Commit(rq.Ctx, rq.P, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: ids, Confirm: true})
	if err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal {
			return err
		}
		return c.enrollPage(rq, StatusOf(ae.Code), &enrollData{Sequence: q}, ae)
	}
	msg := fmt.Sprintf("%d lead%s enrolled.", res.Enrolled, map[bool]string{true: "", false: "s"}[res.Enrolled == 1])
	if n := len(res.Excluded); n > 0 {
		msg += fmt.Sprintf(" %d not enrolled: something changed since the preview.", n)
	}
	for _, w := range res.Warnings {
		msg += " " + w.Message
	}
	rq.Flash(msg)
	rq.Redirect("/sequences/" + q.ID)
	return nil
}

// percent is a rate as a whole percentage, "–" for none yet.
func percent(r *float64) string {
	if r == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", *r*100)
}

// Acceptance and Replies are the sequence's rates, for the templates.
func (r sequenceRow) Acceptance() string { return percent(r.Stats.AcceptanceRate) }

// Replies is the sequence's reply rate.
func (r sequenceRow) Replies() string { return percent(r.Stats.ReplyRate) }

// ownerClients are the clients a setup spec may name, as the Owner of
// an Apply takes them: those the member sees (by name, to their ids); and
// the name of clientID, the client chosen in a form. A member limited to
// some clients must choose one of them (unscoped says so).
func (c *Console) ownerClients(rq *Request, clientID, unscoped string) (map[string]string, string, error) {
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return nil, "", err
	}
	clients, chosen := map[string]string{}, ""
	for _, cl := range cat.Clients {
		clients[cl.Name] = cl.ID
		if cl.ID == clientID {
			chosen = cl.Name
		}
	}
	if clientID != "" && chosen == "" {
		return nil, "", apikit.Invalid("The chosen client is not one of the workspace's.", "Reload the page and choose again.")
	}
	if chosen == "" && rq.P.Scoped() {
		return nil, "", apikit.Invalid(unscoped, "Choose a client.")
	}
	return clients, chosen, nil
}
