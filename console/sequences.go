package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// The sequences pages: the list (GET /v1/sequences), a sequence with its
// builder, and the preview and enrolment of leads. The builder saves
// through sequences.Service.Apply with one Spec, as `leadline apply` does
// with a setup file's sequence, so it shows the same errors and the same
// problems that block activation. Activate and pause call the services the
// API's routes call, with their roles; preview and enrol too (POST
// /v1/enrollments/preview, POST /v1/enrollments).
func (c *Console) routesSequences() {
	c.handle("GET /sequences", apikit.RoleClientViewer, c.sequencesPage)
	c.handle("POST /sequences", apikit.RoleManager, c.createSequence)
	c.handle("GET /sequences/{id}", apikit.RoleClientViewer, c.sequencePage)
	c.handle("POST /sequences/{id}", apikit.RoleManager, c.saveSequence)
	c.handle("POST /sequences/{id}/activate", apikit.RoleManager, c.activateSequence)
	c.handle("POST /sequences/{id}/pause", apikit.RoleManager, c.pauseSequence)
	c.handle("GET /sequences/{id}/enroll", apikit.RoleMember, c.enrollForm)
	c.handle("POST /sequences/{id}/preview", apikit.RoleMember, c.previewEnrollment)
	c.handle("POST /sequences/{id}/enroll", apikit.RoleMember, c.commitEnrollment)
	c.handle("POST /sequences/{id}/steps/{step}/winner", apikit.RoleManager, c.pickVariant)
	c.handle("POST /sequences/{id}/steps/{step}/winner/undo", apikit.RoleManager, c.undoVariant)
	c.handle("GET /sequences/{id}/variants.csv", apikit.RoleClientViewer, c.variantsExport)
}

type sequencesData struct {
	Sequences []sequenceRow
	Clients   []workspace.Named
	Pager     Pager
	// Form is the new-sequence form, as typed.
	Form struct{ Name, ClientID string }
}

type sequenceRow struct {
	sequences.SequenceView
	Client string
	Stats  *enrollments.SequenceStats
}

func (c *Console) sequencesData(rq *Request) (*sequencesData, error) {
	q := rq.R.URL.Query()
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = max(offset, 0)
	const limit = apikit.DefaultLimit
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	list, err := c.pl.Sequences.List(rq.Ctx, rq.P, sequences.Filter{Limit: limit, Offset: offset})
	if err != nil {
		return nil, err
	}
	clients := names(cat.Clients)
	d := &sequencesData{Clients: cat.Clients}
	qs := make([]sequences.Sequence, 0, len(list.Data))
	for _, v := range list.Data {
		qs = append(qs, v.Sequence)
	}
	stats, err := c.pl.Enrollments.StatsOf(rq.Ctx, rq.P, qs)
	if err != nil {
		return nil, err
	}
	for _, v := range list.Data {
		d.Sequences = append(d.Sequences, sequenceRow{SequenceView: v, Client: clients[apikit.Deref(v.ClientID)], Stats: stats[v.ID]})
	}
	d.Pager = newPager(rq.Path("/sequences"), q, list.Total, limit, offset, len(list.Data))
	return d, nil
}

func (c *Console) sequencesPage(rq *Request) error {
	d, err := c.sequencesData(rq)
	if err != nil {
		return err
	}
	return rq.Render(http.StatusOK, "sequences", page{Title: "Sequences", Nav: "sequences", Data: d})
}

// createSequence adds a draft sequence with no steps, as a setup file's
// new sequence, and goes to its builder.
func (c *Console) createSequence(rq *Request) error {
	f := rq.R.PostForm
	name, clientID := strings.TrimSpace(f.Get("name")), f.Get("client_id")
	var id string
	err := c.applySequence(rq, "", sequences.Spec{Name: name}, clientID, func(ctx context.Context) error {
		q, err := c.pl.Sequences.ByName(ctx, rq.P.WorkspaceID, name)
		if err != nil {
			return err
		}
		id = q.ID
		return nil
	})
	if err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal {
			return err
		}
		d, err := c.sequencesData(rq)
		if err != nil {
			return err
		}
		d.Form.Name, d.Form.ClientID = name, clientID
		return rq.Render(StatusOf(ae.Code), "sequences", page{Title: "Sequences", Nav: "sequences", Data: d, Error: ae})
	}
	rq.Flash("Sequence " + name + " added as a draft: add its steps, then activate it.")
	rq.Redirect("/sequences/" + id)
	return nil
}

// applySequence saves spec through sequences.Service.Apply in one
// transaction, as `leadline apply` does, then lets the enrolments catch up
// with the change (enrollments.Service.SetupChanged) and runs then, if
// given, inside the same transaction. id is the sequence being edited ("":
// a new one, whose name must be free); clientID the client chosen by id,
// which must be one the member sees.
func (c *Console) applySequence(rq *Request, id string, spec sequences.Spec, clientID string, then func(context.Context) error) error {
	clients, name, err := c.ownerClients(rq, clientID, "A sequence of yours must belong to one of your clients.")
	if err != nil {
		return err
	}
	spec.Client = name
	return c.pl.DB.InTx(rq.Ctx, func(ctx context.Context) error {
		old, err := c.pl.Sequences.ByName(ctx, rq.P.WorkspaceID, strings.TrimSpace(spec.Name))
		switch {
		case db.IsNoRows(err):
		case err != nil:
			return err
		case old.ID != id:
			return apikit.Conflict(fmt.Sprintf("A sequence named %q exists already.", strings.TrimSpace(spec.Name)), "Choose another name.")
		}
		if _, err := c.pl.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: rq.P.WorkspaceID, Clients: clients}, []sequences.Spec{spec}); err != nil {
			return err
		}
		if err := c.pl.Enrollments.SetupChanged(ctx, rq.P.WorkspaceID); err != nil {
			return err
		}
		if then != nil {
			return then(ctx)
		}
		return nil
	})
}

// sequenceData is a sequence's page: the sequence, its numbers and its
// builder form.
type sequenceData struct {
	View     *sequences.SequenceView
	Client   string
	Stats    *enrollments.SequenceStats
	Form     builderForm
	Clients  []workspace.Named
	Senders  []senderChoice
	Types    []stepTypeChoice
	Problems map[string][]sequences.Problem
	// Choices are what the rules' selects offer (managers only).
	Choices *ruleChoices
	// Preview is the lead picker's rendering, when a lead was typed.
	Preview *leadPreview
	// Tests are the A/B tests of its steps (variants.go).
	Tests []variantSection
	// Metrics are what a step's test may pick its winner on.
	Metrics []string
}

// leadPreview is the sequence's texts rendered for the lead typed in the
// picker (its id or work email), or why they are not shown.
type leadPreview struct {
	Lead      string
	Name      string
	Rendering *sequences.Rendering
	Error     *apikit.Error
}

type senderChoice struct {
	Name    string
	Channel senders.Channel
	Chosen  bool
}

type stepTypeChoice struct {
	Type, Label string
}

// builderForm is the builder's form as typed: the client, the senders,
// the steps, each with its type's fields, and the rules (rules.go).
type builderForm struct {
	ClientID string
	Senders  []string
	Steps    []stepForm
	AddType  string
	Rules    []ruleForm
}

// stepForm is one step of the builder: its id, type and next step, and
// one input per field its type declares (sequences.Steps).
type stepForm struct {
	Index              int
	ID, Type, Next     string
	Fields             []stepField
	First, Last        bool
	Problems           []sequences.Problem
	StepIDs            []string
	valueOf            map[string]string
	requiredFieldNames []string
	// TakesVariants: the step's type may test variants
	// (builder_variants.go); Variants hold its texts then, instead of
	// Fields' texts, and Pick its pick_winner.
	TakesVariants bool
	Variants      []variantForm
	Pick          pickForm
}

// stepField is one input of a step's form.
type stepField struct {
	Name, Label, Kind, Value string
	Required                 bool
	Options                  []string
}

// fieldKinds say how each step field is typed in: text (one line), area
// (several lines, or JSON for payload), number, check (yes/no), choice (a
// select of Options), step (a select of the sequence's step ids).
var fieldKinds = map[string]string{
	"note": "area", "body": "area", "payload": "area", "subject": "text", "title": "text",
	"note_fallback": "choice", "if": "choice", "days": "number", "hours": "number",
	"within_days": "number", "due_in_days": "number", "working_days": "check", "then": "step", "else": "step",
}

var fieldOptions = map[string][]string{
	"note_fallback": {"", "wait", "without_note"},
	"if":            {sequences.IfConnected, sequences.IfInviteAccepted, sequences.IfHasEmail, sequences.IfHasLinkedIn},
}

// stepValues are a step's fields as the form shows them.
func stepValues(s sequences.Step) map[string]string {
	num := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	v := map[string]string{"note": s.Note, "note_fallback": s.NoteFallback, "subject": s.Subject, "body": s.Body,
		"days": num(s.Days), "hours": num(s.Hours), "if": s.If, "within_days": num(s.WithinDays), "then": s.Then, "else": s.Else,
		"title": s.Title, "due_in_days": num(s.DueInDays)}
	if s.WorkingDays {
		v["working_days"] = "true"
	}
	if s.Payload != nil {
		b, _ := json.MarshalIndent(s.Payload, "", "  ")
		v["payload"] = string(b)
	}
	return v
}

// newStepForm is the form of a step of type typ with values.
func newStepForm(id, typ, next string, values map[string]string) stepForm {
	sf := stepForm{ID: id, Type: typ, Next: next, valueOf: values}
	spec, _ := sequences.SpecOf(typ)
	sf.requiredFieldNames = spec.Required
	sf.TakesVariants = slices.Contains(spec.Fields, "variants")
	for _, name := range spec.Fields {
		if name == "variants" || name == "pick_winner" {
			continue
		}
		sf.Fields = append(sf.Fields, stepField{Name: name, Label: strings.ReplaceAll(name, "_", " "), Kind: fieldKinds[name],
			Value: values[name], Required: slices.Contains(spec.Required, name), Options: fieldOptions[name]})
	}
	return sf
}

// step is the form's step, or an error naming the field that is not a
// number or not JSON.
func (sf stepForm) step() (sequences.Step, error) {
	v := sf.valueOf
	s := sequences.Step{ID: strings.TrimSpace(sf.ID), Type: sf.Type, Next: sf.Next, Note: v["note"], NoteFallback: v["note_fallback"],
		Subject: v["subject"], Body: v["body"], If: v["if"], Then: v["then"], Else: v["else"], Title: v["title"], WorkingDays: v["working_days"] == "true"}
	for name, dst := range map[string]*int{"days": &s.Days, "hours": &s.Hours, "within_days": &s.WithinDays, "due_in_days": &s.DueInDays} {
		txt := strings.TrimSpace(v[name])
		if txt == "" {
			continue
		}
		n, err := strconv.Atoi(txt)
		if err != nil {
			return s, apikit.Invalid(fmt.Sprintf("Step %q: %s %q is not a whole number.", s.ID, strings.ReplaceAll(name, "_", " "), txt), "Type a whole number, or leave it empty.")
		}
		*dst = n
	}
	if err := sf.variants(&s); err != nil {
		return s, err
	}
	if p := strings.TrimSpace(v["payload"]); p != "" {
		if err := json.Unmarshal([]byte(p), &s.Payload); err != nil {
			return s, apikit.Invalid(fmt.Sprintf("Step %q: the payload is not a JSON object.", s.ID), `Type a JSON object, like {"stage": "contacted"}, or leave it empty.`)
		}
	}
	return s, nil
}

// readBuilder reads the builder's form as posted.
func readBuilder(r *http.Request) builderForm {
	f := r.PostForm
	bf := builderForm{ClientID: f.Get("client_id"), Senders: f["sender"], AddType: f.Get("add_type"), Rules: readRules(f)}
	n, _ := strconv.Atoi(f.Get("steps"))
	n = min(max(n, 0), 500)
	for i := range n {
		p := "s" + strconv.Itoa(i) + "."
		typ := f.Get(p + "type")
		spec, ok := sequences.SpecOf(typ)
		if !ok {
			continue
		}
		values := map[string]string{}
		for _, name := range spec.Fields {
			values[name] = f.Get(p + name)
		}
		sf := newStepForm(f.Get(p+"id"), typ, f.Get(p+"next"), values)
		if sf.TakesVariants {
			sf = sf.with(readVariants(f, p, typ))
		}
		bf.Steps = append(bf.Steps, sf)
	}
	return bf
}

// builderOf is the builder form of a stored sequence.
func builderOf(v *sequences.SequenceView) builderForm {
	bf := builderForm{ClientID: apikit.Deref(v.ClientID), Rules: rulesOf(&v.Sequence)}
	for _, s := range v.Senders {
		bf.Senders = append(bf.Senders, s.Name)
	}
	for _, s := range v.Steps {
		bf.Steps = append(bf.Steps, newStepForm(s.ID, s.Type, s.Next, stepValues(s)).with(variantsOf(s)))
	}
	return bf
}

// freeStepID is an id no step of bf has: the type and a number.
func (bf builderForm) freeStepID(typ string) string {
	for n := len(bf.Steps) + 1; ; n++ {
		id := typ + "-" + strconv.Itoa(n)
		if !slices.ContainsFunc(bf.Steps, func(s stepForm) bool { return s.ID == id }) {
			return id
		}
	}
}

// edit applies the builder's button op: add a step, move one up or down,
// delete one, or "" (save as typed).
func (bf *builderForm) edit(op string) error {
	verb, arg, _ := strings.Cut(op, ":")
	if handled, err := bf.editVariants(verb, arg); handled {
		return err
	}
	i, err := strconv.Atoi(arg)
	if verb != "add" && verb != "" && verb != "save" && (err != nil || i < 0 || i >= len(bf.Steps)) {
		return apikit.Invalid("The step to change is not in the form.", "Reload the page and try again.")
	}
	switch verb {
	case "", "save":
	case "add":
		if _, ok := sequences.SpecOf(bf.AddType); !ok {
			return apikit.Invalid("Choose the type of the step to add.", "Pick a type in the list beside Add step.")
		}
		bf.Steps = append(bf.Steps, newStepForm(bf.freeStepID(bf.AddType), bf.AddType, "", map[string]string{}))
	case "up":
		if i > 0 {
			bf.Steps[i-1], bf.Steps[i] = bf.Steps[i], bf.Steps[i-1]
		}
	case "down":
		if i < len(bf.Steps)-1 {
			bf.Steps[i+1], bf.Steps[i] = bf.Steps[i], bf.Steps[i+1]
		}
	case "delete":
		bf.Steps = slices.Delete(bf.Steps, i, i+1)
	default:
		return apikit.Invalid(fmt.Sprintf("%q is not something the builder does.", op), "Use the builder's buttons.")
	}
	return nil
}

func (c *Console) sequenceData(rq *Request, q *sequences.Sequence) (*sequenceData, error) {
	v, err := c.pl.Sequences.View(rq.Ctx, q)
	if err != nil {
		return nil, err
	}
	st, err := c.pl.Enrollments.Stats(rq.Ctx, rq.P, q.ID)
	if err != nil {
		return nil, err
	}
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	d := &sequenceData{View: v, Client: names(cat.Clients)[apikit.Deref(v.ClientID)], Stats: st, Clients: cat.Clients,
		Form: builderOf(v), Problems: map[string][]sequences.Problem{}, Tests: rq.variantSections(v, st), Metrics: sequences.Metrics}
	for _, p := range v.Problems {
		d.Problems[p.StepID] = append(d.Problems[p.StepID], p)
	}
	if rq.Can(apikit.RoleManager) {
		ss, err := c.pl.Senders.List(rq.Ctx, rq.P, senders.Filter{Limit: apikit.MaxLimit})
		if err != nil {
			return nil, err
		}
		for _, s := range ss.Data {
			d.Senders = append(d.Senders, senderChoice{Name: s.Name, Channel: s.Channel})
		}
		for _, s := range sequences.Steps {
			d.Types = append(d.Types, stepTypeChoice{Type: s.Type, Label: strings.ReplaceAll(s.Type, "_", " ")})
		}
		if d.Choices, err = c.ruleChoices(rq); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// withForm shows bf in d's builder, with the steps' problems.
func (d *sequenceData) withForm(bf builderForm) {
	d.Form = bf
	ids := make([]string, 0, len(bf.Steps))
	for _, s := range bf.Steps {
		ids = append(ids, s.ID)
	}
	for i := range d.Form.Steps {
		s := &d.Form.Steps[i]
		s.Index, s.First, s.Last, s.StepIDs = i, i == 0, i == len(bf.Steps)-1, ids
		s.Problems = d.Problems[s.ID]
		for j := range s.Variants {
			s.Variants[j].Index = j
		}
	}
	for i := range d.Senders {
		d.Senders[i].Chosen = slices.Contains(bf.Senders, d.Senders[i].Name)
	}
}

func (c *Console) visibleSequence(rq *Request) (*sequences.Sequence, error) {
	id := rq.R.PathValue("id")
	if !apikit.ValidID(id) {
		return nil, apikit.NotFound("Sequence " + strconv.Quote(id))
	}
	return c.pl.Sequences.Visible(rq.Ctx, rq.P, id)
}

func (c *Console) renderSequence(rq *Request, status int, q *sequences.Sequence, bf *builderForm, e *apikit.Error) error {
	return c.renderSequenceWith(rq, status, q, bf, e, nil)
}

// renderSequenceWith is renderSequence with the lead picker's preview.
func (c *Console) renderSequenceWith(rq *Request, status int, q *sequences.Sequence, bf *builderForm, e *apikit.Error, pv *leadPreview) error {
	d, err := c.sequenceData(rq, q)
	if err != nil {
		return err
	}
	if bf == nil {
		bf = &d.Form
	}
	d.withForm(*bf)
	d.Preview = pv
	return rq.Render(status, "sequence", page{Title: q.Name, Nav: "sequences", Data: d, Error: e})
}

// sequencePage shows the sequence; with ?lead= (a member's lead id or
// work email, typed in the picker) its texts rendered for that lead, as
// POST /v1/sequences/{id}/render answers them.
func (c *Console) sequencePage(rq *Request) error {
	q, err := c.visibleSequence(rq)
	if err != nil {
		return err
	}
	typed := strings.TrimSpace(rq.R.URL.Query().Get("lead"))
	if typed == "" || !rq.Can(apikit.RoleMember) {
		return c.renderSequence(rq, http.StatusOK, q, nil, nil)
	}
	pv := &leadPreview{Lead: typed}
	l, err := c.pickedLead(rq, typed)
	if err == nil {
		pv.Name = leadLabel(*l)
		pv.Rendering, err = c.pl.Sequences.Render(rq.Ctx, rq.P, q.ID, l.ID, enrollments.VarsOf(l))
	}
	if err != nil {
		if pv.Error = apikit.AsError(err); pv.Error.Code == apikit.EInternal {
			return err
		}
	}
	return c.renderSequenceWith(rq, http.StatusOK, q, nil, nil, pv)
}

// pickedLead is the lead typed in the picker: by id, or by work email.
// Returns E_NOT_FOUND when the member sees no such lead.
func (c *Console) pickedLead(rq *Request, typed string) (*leads.Lead, error) {
	var found []leads.Lead
	if apikit.ValidID(typed) {
		ls, err := c.pl.Leads.VisibleByIDs(rq.Ctx, rq.P, []string{typed})
		if err != nil {
			return nil, err
		}
		found = ls
	} else {
		page, err := c.pl.Leads.List(rq.Ctx, rq.P, leads.Filter{Email: typed, Limit: 1})
		if err != nil {
			return nil, err
		}
		found = page.Data
	}
	if len(found) == 0 {
		return nil, &apikit.Error{Code: apikit.ENotFound, Message: fmt.Sprintf("No lead of yours has the id or work email %q.", typed),
			Remedy: "Type a lead's id (as its page's address shows it) or its work email."}
	}
	return &found[0], nil
}

// saveSequence applies the builder's button (add, move, delete a step, or
// save) to the form as typed and saves the result through Apply. A
// refused save shows the form again as typed, with the error.
func (c *Console) saveSequence(rq *Request) error {
	q, err := c.visibleSequence(rq)
	if err != nil {
		return err
	}
	bf := readBuilder(rq.R)
	err = bf.edit(rq.R.PostFormValue("op"))
	spec := sequences.Spec{Name: q.Name, Senders: bf.Senders, Steps: []sequences.Step{}}
	if err == nil {
		spec.OnReply, spec.OnMeetingBooked, err = specRules(bf.Rules)
	}
	for _, sf := range bf.Steps {
		if err != nil {
			break
		}
		var s sequences.Step
		s, err = sf.step()
		spec.Steps = append(spec.Steps, s)
	}
	if err == nil {
		err = c.applySequence(rq, q.ID, spec, bf.ClientID, nil)
	}
	if err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal {
			return err
		}
		return c.renderSequence(rq, StatusOf(ae.Code), q, &bf, ae)
	}
	rq.Flash("Sequence saved.")
	rq.Redirect("/sequences/" + q.ID)
	return nil
}

func (c *Console) activateSequence(rq *Request) error {
	return c.sequenceStatus(rq, c.pl.Sequences.Activate, "Sequence activated: its enrolments are sent as their steps come due.")
}

func (c *Console) pauseSequence(rq *Request) error {
	return c.sequenceStatus(rq, c.pl.Sequences.Pause, "Sequence paused: nothing is sent until it is activated again.")
}

// sequenceStatus activates or pauses through the service the API's route
// calls; a refusal (E_GRAPH_INVALID naming every problem) shows on the
// sequence's page.
func (c *Console) sequenceStatus(rq *Request, fn func(context.Context, apikit.Principal, string) (*sequences.SequenceView, error), done string) error {
	q, err := c.visibleSequence(rq)
	if err != nil {
		return err
	}
	if _, err := fn(rq.Ctx, rq.P, q.ID); err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal {
			return err
		}
		return c.renderSequence(rq, StatusOf(ae.Code), q, nil, ae)
	}
	rq.Flash(done)
	rq.Redirect("/sequences/" + q.ID)
	return nil
}
