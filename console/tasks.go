package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
)

// The tasks: the open tasks (what is left to do, the earliest due first,
// overdue ones marked) and all tasks with GET /v1/tasks's filters, each
// completed as done or skipped with a click, through the tasks service as
// POST /v1/tasks/{id}/complete does. Tasks belong to the workspace (or a
// client), not to a member: "open" is everyone's to-do list.
func (c *Console) routesTasks() {
	c.handle("GET /tasks", apikit.RoleClientViewer, c.tasksPage)
	c.handle("POST /tasks/{id}/complete", apikit.RoleMember, c.completeTask)
}

type tasksFilter struct {
	Status, SequenceID, ClientID string
	Overdue                      bool
}

type taskRow struct {
	tasks.Task
	Lead, Sequence, Client string
	Overdue                bool
}

type tasksData struct {
	Filter    tasksFilter
	Clients   []namedID
	Sequences []sequences.SequenceView
	Tasks     []taskRow
	Pager     Pager
	Statuses  []string
	// Back is the list's query (its filters), where a completion returns
	// to.
	Back string
	// Note is the note typed with a refused completion, and NoteFor its task.
	Note, NoteFor string
}

// namedID is an id and its name.
type namedID struct{ ID, Name string }

func (c *Console) tasksData(rq *Request, q url.Values) (*tasksData, error) {
	f := tasksFilter{Status: q.Get("status"), SequenceID: q.Get("sequence_id"), ClientID: q.Get("client_id"), Overdue: q.Get("overdue") == "true"}
	if _, ok := q["status"]; !ok {
		f.Status = string(tasks.Open)
	}
	switch tasks.Status(f.Status) {
	case tasks.Open, tasks.Done, tasks.Skipped:
	default:
		f.Status = ""
	}
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = max(offset, 0)
	const limit = apikit.DefaultLimit
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	qs, err := c.pl.Sequences.List(rq.Ctx, rq.P, sequences.Filter{Limit: apikit.MaxLimit})
	if err != nil {
		return nil, err
	}
	filter := tasks.Filter{Status: tasks.Status(f.Status), SequenceID: listID(f.SequenceID), ClientID: listID(f.ClientID), Limit: limit, Offset: offset}
	now := c.pl.Clock.Now()
	if f.Overdue {
		filter.Status, f.Status, filter.DueBefore = tasks.Open, string(tasks.Open), &now
	}
	list, err := c.pl.Tasks.List(rq.Ctx, rq.P, filter)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(list.Data))
	for _, t := range list.Data {
		ids = append(ids, t.LeadID)
	}
	leadNames, err := c.pl.Leads.Names(rq.Ctx, rq.P.WorkspaceID, ids)
	if err != nil {
		return nil, err
	}
	seqNames, clients := map[string]string{}, names(cat.Clients)
	for _, s := range qs.Data {
		seqNames[s.ID] = s.Name
	}
	d := &tasksData{Filter: f, Sequences: qs.Data, Statuses: []string{string(tasks.Open), string(tasks.Done), string(tasks.Skipped)}, Back: q.Encode()}
	for _, cl := range cat.Clients {
		d.Clients = append(d.Clients, namedID{cl.ID, cl.Name})
	}
	for _, t := range list.Data {
		r := taskRow{Task: t, Lead: leadNames[t.LeadID], Sequence: seqNames[t.SequenceID], Client: clients[apikit.Deref(t.ClientID)], Overdue: t.Overdue(now)}
		if r.Lead == "" {
			r.Lead = "(no name)"
		}
		d.Tasks = append(d.Tasks, r)
	}
	d.Pager = newPager(rq.Path("/tasks"), q, list.Total, limit, offset, len(list.Data))
	return d, nil
}

func (c *Console) tasksPage(rq *Request) error {
	d, err := c.tasksData(rq, rq.R.URL.Query())
	if err != nil {
		return err
	}
	return rq.Render(http.StatusOK, "tasks", page{Title: "Tasks", Nav: "tasks", Data: d})
}

// completeTask completes a task as POST /v1/tasks/{id}/complete does, and
// goes back to the list it was clicked in.
func (c *Console) completeTask(rq *Request) error {
	id := rq.R.PathValue("id")
	if !apikit.ValidID(id) {
		return apikit.NotFound("Task " + strconv.Quote(id))
	}
	in := tasks.CompleteInput{Outcome: tasks.Status(rq.R.PostFormValue("outcome")), Note: strings.TrimSpace(rq.R.PostFormValue("note"))}
	back, _ := url.ParseQuery(rq.R.PostFormValue("back"))
	if _, err := c.pl.Tasks.Complete(rq.Ctx, rq.P, id, in); err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal || ae.Code == apikit.ENotFound {
			return err
		}
		d, derr := c.tasksData(rq, back)
		if derr != nil {
			return derr
		}
		d.Note, d.NoteFor = in.Note, id
		return rq.Render(StatusOf(ae.Code), "tasks", page{Title: "Tasks", Nav: "tasks", Data: d, Error: ae})
	}
	rq.Flash("Task marked " + string(in.Outcome) + ".")
	target := "/tasks"
	if enc := back.Encode(); enc != "" {
		target += "?" + enc
	}
	rq.Redirect(target)
	return nil
}
