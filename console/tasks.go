package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/workspace"
)

// The tasks: "My tasks" (the signed-in member's, the default for those
// who may complete them) and "All tasks", each open (what is left to do,
// the earliest due first, overdue ones marked), overdue or in any status,
// with GET /v1/tasks's filters; each task completed as done or skipped
// with a click, as POST /v1/tasks/{id}/complete does, and assigned to a
// member, to oneself or to nobody, as PUT /v1/tasks/{id}/assignee does,
// through the tasks service.
func (c *Console) routesTasks() {
	c.handle("GET /tasks", apikit.RoleClientViewer, c.tasksPage)
	c.handle("POST /tasks/{id}/complete", apikit.RoleMember, c.completeTask)
	c.handle("POST /tasks/{id}/assignee", apikit.RoleMember, c.assignTask)
}

type tasksFilter struct {
	// AssigneeID is the assignee filter as the form sends it: "me",
	// "none", a member id, or "" for everyone's.
	Status, AssigneeID, SequenceID, ClientID string
	Overdue                                  bool
}

type taskRow struct {
	tasks.Task
	Lead, Sequence, Client, Assignee string
	// AssigneeKey is the assignee's id, "" for nobody.
	AssigneeKey string
	Overdue     bool
}

type tasksData struct {
	Filter    tasksFilter
	Clients   []namedID
	Sequences []sequences.SequenceView
	// Members are the workspace's active members, whom tasks go to.
	Members []workspace.MemberView
	// Me is the signed-in member's id.
	Me       string
	Tasks    []taskRow
	Pager    Pager
	Statuses []string
	// Back is the list's query (its filters), where a completion returns
	// to.
	Back string
	// Note is the note typed with a refused completion, and NoteFor its task.
	Note, NoteFor string
}

// namedID is an id and its name.
type namedID struct{ ID, Name string }

func (c *Console) tasksData(rq *Request, q url.Values) (*tasksData, error) {
	f := tasksFilter{Status: q.Get("status"), AssigneeID: q.Get("assignee_id"), SequenceID: q.Get("sequence_id"), ClientID: q.Get("client_id"),
		Overdue: q.Get("overdue") == "true"}
	if _, ok := q["status"]; !ok {
		f.Status = string(tasks.Open)
	}
	if _, ok := q["assignee_id"]; !ok && rq.Can(apikit.RoleMember) {
		f.AssigneeID = "me" // My tasks
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
	ms, err := c.pl.Workspaces.MemberList(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	filter := tasks.Filter{Status: tasks.Status(f.Status), AssigneeID: assigneeFilter(f.AssigneeID, rq.P), SequenceID: listID(f.SequenceID),
		ClientID: listID(f.ClientID), Limit: limit, Offset: offset}
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
	d := &tasksData{Filter: f, Sequences: qs.Data, Me: rq.P.MemberID, Statuses: []string{string(tasks.Open), string(tasks.Done), string(tasks.Skipped)},
		Back: q.Encode()}
	for _, cl := range cat.Clients {
		d.Clients = append(d.Clients, namedID{cl.ID, cl.Name})
	}
	members := map[string]string{}
	for _, m := range ms {
		if m.Active {
			d.Members = append(d.Members, m)
			members[m.ID] = m.Email
		}
	}
	for _, t := range list.Data {
		r := taskRow{Task: t, Lead: leadNames[t.LeadID], Sequence: seqNames[t.SequenceID], Client: clients[apikit.Deref(t.ClientID)],
			Assignee: members[apikit.Deref(t.AssigneeID)], AssigneeKey: apikit.Deref(t.AssigneeID), Overdue: t.Overdue(now)}
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
	in := tasks.CompleteInput{Outcome: tasks.Status(rq.R.PostFormValue("outcome")), Note: strings.TrimSpace(rq.R.PostFormValue("note"))}
	return c.taskAction(rq, "Task marked "+string(in.Outcome)+".", func(id string) error {
		_, err := c.pl.Tasks.Complete(rq.Ctx, rq.P, id, in)
		return err
	}, func(d *tasksData, id string) { d.Note, d.NoteFor = in.Note, id })
}

// assignTask gives the task to a member, to the signed-in member ("me")
// or to nobody (""), as PUT /v1/tasks/{id}/assignee does, and goes back to
// the list it was clicked in.
func (c *Console) assignTask(rq *Request) error {
	var to *string
	switch a := rq.R.PostFormValue("assignee_id"); a {
	case "":
	case "me":
		to = &rq.P.MemberID
	default:
		to = &a
	}
	flash := "Task unassigned."
	if to != nil {
		flash = "Task assigned."
	}
	return c.taskAction(rq, flash, func(id string) error {
		_, err := c.pl.Tasks.SetAssignee(rq.Ctx, rq.P, id, to)
		return err
	}, nil)
}

// taskAction runs act on the task of the path (the service refuses a task
// the member may not see) and goes back to the list the form was in (its
// "back" query) with flash; a refusal is shown on that list, keep putting
// back what was typed.
func (c *Console) taskAction(rq *Request, flash string, act func(id string) error, keep func(d *tasksData, id string)) error {
	id := rq.R.PathValue("id")
	if !apikit.ValidID(id) {
		return apikit.NotFound("Task " + strconv.Quote(id))
	}
	back, _ := url.ParseQuery(rq.R.PostFormValue("back"))
	if err := act(id); err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal || ae.Code == apikit.ENotFound {
			return err
		}
		d, derr := c.tasksData(rq, back)
		if derr != nil {
			return derr
		}
		if keep != nil {
			keep(d, id)
		}
		return rq.Render(StatusOf(ae.Code), "tasks", page{Title: "Tasks", Nav: "tasks", Data: d, Error: ae})
	}
	rq.Flash(flash)
	target := "/tasks"
	if enc := back.Encode(); enc != "" {
		target += "?" + enc
	}
	rq.Redirect(target)
	return nil
}
