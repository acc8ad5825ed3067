package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// The inbox: the threads with GET /v1/threads's filters, a thread with
// its messages (GET /v1/threads/{id}), and the thread's actions — reply,
// set intent, assign, mark read — each calling the inbox service as its
// API route does, with the route's role. The list and the messages are
// asked for again every few seconds (htmx polling of one block), so new
// replies appear without a reload.
func (c *Console) routesInbox() {
	c.handle("GET /inbox", apikit.RoleClientViewer, c.inboxPage)
	c.handle("GET /inbox/{id}", apikit.RoleClientViewer, c.threadPage)
	c.handle("GET /inbox/{id}/messages", apikit.RoleClientViewer, c.threadMessages)
	c.handle("POST /inbox/{id}/reply", apikit.RoleMember, c.replyThread)
	c.handle("POST /inbox/{id}/intent", apikit.RoleMember, c.setThreadIntent)
	c.handle("POST /inbox/{id}/assignee", apikit.RoleMember, c.assignThread)
	c.handle("POST /inbox/{id}/read", apikit.RoleMember, c.markThreadRead)
}

// inboxFilter is the inbox's filter form, as typed.
type inboxFilter struct {
	Intent, AssigneeID, SenderID, SequenceID, ClientID, Unread, NeedsReview string
}

// threadRow is a thread with the names of what its ids point at.
type threadRow struct {
	inbox.Thread
	Lead, Sender, Sequence, Assignee, Client string
	// IntentKey and AssigneeKey are the intent and the assignee's id, ""
	// for none: the forms' current choices.
	IntentKey, AssigneeKey string
}

// inboxNames are the names the inbox shows for ids, and the filter
// form's choices.
type inboxNames struct {
	Clients   []workspace.Named
	Senders   []senders.Sender
	Sequences []sequences.SequenceView
	Members   []workspace.MemberView
	client    map[string]string
	sender    map[string]string
	sequence  map[string]string
	member    map[string]string
}

type inboxData struct {
	Filter  inboxFilter
	Names   *inboxNames
	Intents []inbox.Intent
	Threads []threadRow
	Pager   Pager
	// Poll is the address the list block is asked for again at.
	Poll string
}

// inboxNames reads the names of the principal's clients, senders,
// sequences and (for members, who may assign) the workspace's members.
func (c *Console) inboxNames(rq *Request) (*inboxNames, error) {
	n := &inboxNames{client: map[string]string{}, sender: map[string]string{}, sequence: map[string]string{}, member: map[string]string{}}
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	n.Clients, n.client = cat.Clients, names(cat.Clients)
	ss, err := c.pl.Senders.List(rq.Ctx, rq.P, senders.Filter{Limit: apikit.MaxLimit})
	if err != nil {
		return nil, err
	}
	n.Senders = ss.Data
	for _, s := range ss.Data {
		n.sender[s.ID] = s.Name
	}
	qs, err := c.pl.Sequences.List(rq.Ctx, rq.P, sequences.Filter{Limit: apikit.MaxLimit})
	if err != nil {
		return nil, err
	}
	n.Sequences = qs.Data
	for _, q := range qs.Data {
		n.sequence[q.ID] = q.Name
	}
	ms, err := c.pl.Workspaces.MemberList(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.Active {
			n.Members = append(n.Members, m)
			n.member[m.ID] = m.Email
		}
	}
	return n, nil
}

// rows names the threads' leads, senders, sequences and assignees.
func (c *Console) threadRows(rq *Request, n *inboxNames, ts []inbox.Thread) ([]threadRow, error) {
	ids := make([]string, 0, len(ts))
	for _, t := range ts {
		ids = append(ids, t.LeadID)
	}
	leadNames, err := c.pl.Leads.Names(rq.Ctx, rq.P.WorkspaceID, ids)
	if err != nil {
		return nil, err
	}
	rows := make([]threadRow, 0, len(ts))
	for _, t := range ts {
		r := threadRow{Thread: t, Lead: leadNames[t.LeadID], Sender: n.sender[t.SenderID], Sequence: n.sequence[apikit.Deref(t.SequenceID)],
			Assignee: n.member[apikit.Deref(t.AssigneeID)], Client: n.client[apikit.Deref(t.ClientID)], AssigneeKey: apikit.Deref(t.AssigneeID)}
		if t.Intent != nil {
			r.IntentKey = string(*t.Intent)
		}
		if r.Lead == "" {
			r.Lead = "(no name)"
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// assigneeFilter reads the assignee filter: a member id, "none"
// (unassigned) or "me" (the signed-in member).
func assigneeFilter(s string, p apikit.Principal) string {
	switch s {
	case "":
		return ""
	case "none":
		return "none"
	case "me":
		return listID(p.MemberID)
	}
	return listID(s)
}

func (c *Console) inboxPage(rq *Request) error {
	q := rq.R.URL.Query()
	f := inboxFilter{Intent: q.Get("intent"), AssigneeID: q.Get("assignee_id"), SenderID: q.Get("sender_id"), SequenceID: q.Get("sequence_id"),
		ClientID: q.Get("client_id"), Unread: q.Get("unread"), NeedsReview: q.Get("needs_review")}
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = max(offset, 0)
	const limit = apikit.DefaultLimit
	n, err := c.inboxNames(rq)
	if err != nil {
		return err
	}
	filter := inbox.Filter{AssigneeID: assigneeFilter(f.AssigneeID, rq.P), SenderID: listID(f.SenderID), SequenceID: listID(f.SequenceID),
		ClientID: listID(f.ClientID), Unread: boolFilter(f.Unread), NeedsReview: boolFilter(f.NeedsReview), Limit: limit, Offset: offset}
	if i := inbox.Intent(f.Intent); i.Valid() {
		filter.Intent = i
	} else {
		f.Intent = ""
	}
	list, err := c.pl.Inbox.List(rq.Ctx, rq.P, filter)
	if err != nil {
		return err
	}
	d := inboxData{Filter: f, Names: n, Intents: inbox.Intents, Poll: rq.Path("/inbox")}
	if d.Threads, err = c.threadRows(rq, n, list.Data); err != nil {
		return err
	}
	if enc := q.Encode(); enc != "" {
		d.Poll += "?" + enc
	}
	d.Pager = newPager(rq.Path("/inbox"), q, list.Total, limit, offset, len(list.Data))
	pg := page{Title: "Inbox", Nav: "inbox", Data: d}
	if rq.R.Header.Get("HX-Request") != "" {
		return rq.RenderBlock(http.StatusOK, "inbox", "threads", pg)
	}
	return rq.Render(http.StatusOK, "inbox", pg)
}

// threadData is a thread's page.
type threadData struct {
	Row      threadRow
	Messages []inbox.Message
	// Rules are what the sequences' rules did on the thread.
	Rules   []ruleRun
	Names   *inboxNames
	Intents []inbox.Intent
	Email   bool
	// Reply is what was typed in the reply form, kept when it is refused.
	Reply inbox.ReplyInput
	// ReplyError is the reply's refusal, shown above its form.
	ReplyError *apikit.Error
}

func (c *Console) thread(rq *Request) (*threadData, error) {
	id := rq.R.PathValue("id")
	if !apikit.ValidID(id) {
		return nil, apikit.NotFound("Thread " + strconv.Quote(id))
	}
	v, err := c.pl.Inbox.Get(rq.Ctx, rq.P, id)
	if err != nil {
		return nil, err
	}
	n, err := c.inboxNames(rq)
	if err != nil {
		return nil, err
	}
	rows, err := c.threadRows(rq, n, []inbox.Thread{v.Thread})
	if err != nil {
		return nil, err
	}
	return &threadData{Row: rows[0], Messages: v.Messages, Rules: ruleRuns(v.Rules, n.sequence), Names: n, Intents: inbox.Intents,
		Email: v.Channel == senders.Email}, nil
}

func (c *Console) threadPage(rq *Request) error {
	d, err := c.thread(rq)
	if err != nil {
		return err
	}
	return rq.Render(http.StatusOK, "thread", page{Title: d.Row.Lead, Nav: "inbox", Data: d})
}

// threadMessages is the thread's messages block, which the thread page
// asks for every few seconds.
func (c *Console) threadMessages(rq *Request) error {
	d, err := c.thread(rq)
	if err != nil {
		return err
	}
	return rq.RenderBlock(http.StatusOK, "thread", "messages", page{Title: d.Row.Lead, Nav: "inbox", Data: d})
}

// threadAction runs act on the thread of the path (the service refuses a
// thread the member may not see) and goes back to the thread's page with
// flash; a refusal is shown on the thread's page, with what was typed.
func (c *Console) threadAction(rq *Request, flash string, act func(id string) error, keep func(d *threadData, ae *apikit.Error)) error {
	id := rq.R.PathValue("id")
	if !apikit.ValidID(id) {
		return apikit.NotFound("Thread " + strconv.Quote(id))
	}
	if err := act(id); err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal || ae.Code == apikit.ENotFound {
			return err
		}
		d, derr := c.thread(rq)
		if derr != nil {
			return derr
		}
		pg := page{Title: d.Row.Lead, Nav: "inbox", Data: d}
		if keep != nil {
			keep(d, ae)
		} else {
			pg.Error = ae
		}
		return rq.Render(StatusOf(ae.Code), "thread", pg)
	}
	rq.Flash(flash)
	rq.Redirect("/inbox/" + id)
	return nil
}

// replyThread sends a reply as POST /v1/threads/{id}/reply does: through
// the thread's sender, inside its caps.
func (c *Console) replyThread(rq *Request) error {
	in := inbox.ReplyInput{Body: rq.R.PostFormValue("body"), Subject: strings.TrimSpace(rq.R.PostFormValue("subject"))}
	return c.threadAction(rq, "Reply sent.", func(id string) error {
		_, err := c.pl.Inbox.Reply(rq.Ctx, rq.P, id, in)
		return err
	}, func(d *threadData, ae *apikit.Error) { d.Reply, d.ReplyError = in, ae })
}

// setThreadIntent sets the intent by hand, as PUT /v1/threads/{id}/intent.
func (c *Console) setThreadIntent(rq *Request) error {
	intent := inbox.Intent(rq.R.PostFormValue("intent"))
	return c.threadAction(rq, "Intent set to "+string(intent)+".", func(id string) error {
		_, err := c.pl.Inbox.SetIntent(rq.Ctx, rq.P, id, intent)
		return err
	}, nil)
}

// assignThread gives the thread to a member, or to nobody, as PUT
// /v1/threads/{id}/assignee.
func (c *Console) assignThread(rq *Request) error {
	var to *string
	if a := rq.R.PostFormValue("assignee_id"); a != "" {
		to = &a
	}
	flash := "Thread unassigned."
	if to != nil {
		flash = "Thread assigned."
	}
	return c.threadAction(rq, flash, func(id string) error {
		_, err := c.pl.Inbox.SetAssignee(rq.Ctx, rq.P, id, to)
		return err
	}, nil)
}

// markThreadRead marks the thread read, as POST /v1/threads/{id}/read.
func (c *Console) markThreadRead(rq *Request) error {
	return c.threadAction(rq, "Marked read.", func(id string) error {
		_, err := c.pl.Inbox.MarkRead(rq.Ctx, rq.P, id)
		return err
	}, nil)
}
