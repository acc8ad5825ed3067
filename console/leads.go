package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/workspace"
)

// The leads pages: the list with the API's filters (GET /v1/leads), a
// lead (GET /v1/leads/{id} and its timeline), and CSV import (POST
// /v1/leads/import, GET /v1/imports/{id}) in leads_import.go. Each calls
// the leads service as its API route does, with the route's role.
func (c *Console) routesLeads() {
	c.handle("GET /leads", apikit.RoleClientViewer, c.leadsPage)
	c.handle("GET /leads/{id}", apikit.RoleClientViewer, c.leadPage)
	c.handle("GET /leads/import", apikit.RoleMember, c.importForm)
	c.handle("POST /leads/import", apikit.RoleMember, c.startImport)
	c.handle("GET /imports/{id}", apikit.RoleClientViewer, c.importPage)
	c.handle("GET /imports/{id}/rejected.csv", apikit.RoleClientViewer, c.importRejected)
	// The lead page's forms: PUT /v1/leads/{id}/stage, POST …/tags,
	// DELETE …/tags/{tag_id}, POST and DELETE …/suppress.
	c.handle("POST /leads/{id}/stage", apikit.RoleMember, c.leadAction(func(rq *Request, id string) (string, error) {
		var stage *string
		if v := rq.R.PostFormValue("stage_id"); v != "" {
			stage = &v
		}
		_, err := c.pl.Leads.SetStage(rq.Ctx, rq.P, id, stage)
		return "Stage saved.", err
	}))
	c.handle("POST /leads/{id}/tags", apikit.RoleMember, c.leadAction(func(rq *Request, id string) (string, error) {
		_, err := c.pl.Leads.AddTags(rq.Ctx, rq.P, id, []string{rq.R.PostFormValue("tag_id")})
		return "Tag added.", err
	}))
	c.handle("POST /leads/{id}/tags/{tag}/remove", apikit.RoleMember, c.leadAction(func(rq *Request, id string) (string, error) {
		_, err := c.pl.Leads.RemoveTag(rq.Ctx, rq.P, id, rq.R.PathValue("tag"))
		return "Tag removed.", err
	}))
	c.handle("POST /leads/{id}/suppress", apikit.RoleMember, c.leadAction(func(rq *Request, id string) (string, error) {
		_, err := c.pl.Leads.Suppress(rq.Ctx, rq.P, id)
		return "Marked do-not-contact: future sends to this lead stop.", err
	}))
	c.handle("POST /leads/{id}/unsuppress", apikit.RoleMember, c.leadAction(func(rq *Request, id string) (string, error) {
		_, err := c.pl.Leads.Unsuppress(rq.Ctx, rq.P, id)
		return "The do-not-contact mark is cleared.", err
	}))
}

// leadAction is a form of the lead page: it runs do on the lead's id and
// goes back to the lead with do's message, or shows do's error.
func (c *Console) leadAction(do func(rq *Request, id string) (string, error)) handler {
	return func(rq *Request) error {
		id := rq.R.PathValue("id")
		for _, v := range []string{id, rq.R.PathValue("tag"), rq.R.PostFormValue("stage_id"), rq.R.PostFormValue("tag_id")} {
			if v != "" && !apikit.ValidID(v) {
				return apikit.NotFound("Lead or tag " + strconv.Quote(v))
			}
		}
		msg, err := do(rq, id)
		if err != nil {
			return err
		}
		rq.Flash(msg)
		rq.Redirect("/leads/" + id)
		return nil
	}
}

// leadsFilter is the list's filter form, as typed.
type leadsFilter struct {
	Q, ClientID, ListID, StageID, TagID, Source, Email, Replied, Enriched string
}

type leadRow struct {
	leads.Lead
	Client, Stage string
}

type leadsData struct {
	Filter  leadsFilter
	Catalog workspace.Catalog
	Leads   []leadRow
	Pager   Pager
}

// names maps ids to names.
func names(ns []workspace.Named) map[string]string {
	m := make(map[string]string, len(ns))
	for _, n := range ns {
		m[n.ID] = n.Name
	}
	return m
}

// boolFilter reads a yes/no filter: "true", "false" or "" (either).
func boolFilter(s string) *bool {
	if s != "true" && s != "false" {
		return nil
	}
	v := s == "true"
	return &v
}

// listID is an id from a filter form: "" for anything that is no id, so
// that a mistyped address lists nothing rather than failing.
func listID(s string) string {
	if apikit.ValidID(s) {
		return s
	}
	if s == "" {
		return ""
	}
	return noID
}

// noID is an id nothing has: a filter on it lists nothing.
const noID = "00000000-0000-0000-0000-000000000000"

func (c *Console) leadsPage(rq *Request) error {
	q := rq.R.URL.Query()
	f := leadsFilter{Q: strings.TrimSpace(q.Get("q")), ClientID: q.Get("client_id"), ListID: q.Get("list_id"), StageID: q.Get("stage_id"),
		TagID: q.Get("tag_id"), Source: strings.TrimSpace(q.Get("source")), Email: strings.TrimSpace(q.Get("email")),
		Replied: q.Get("replied"), Enriched: q.Get("enriched")}
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = max(offset, 0)
	const limit = apikit.DefaultLimit
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return err
	}
	list, err := c.pl.Leads.List(rq.Ctx, rq.P, leads.Filter{Q: f.Q, ClientID: listID(f.ClientID), ListID: listID(f.ListID),
		StageID: listID(f.StageID), TagID: listID(f.TagID), Source: f.Source, Email: f.Email,
		Replied: boolFilter(f.Replied), Enriched: boolFilter(f.Enriched), Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	clients, stages := names(cat.Clients), names(cat.Stages)
	d := leadsData{Filter: f, Catalog: cat, Leads: make([]leadRow, 0, len(list.Data))}
	for _, l := range list.Data {
		d.Leads = append(d.Leads, leadRow{Lead: l, Client: clients[apikit.Deref(l.ClientID)], Stage: stages[apikit.Deref(l.StageID)]})
	}
	d.Pager = newPager(rq.Path("/leads"), q, list.Total, limit, offset, len(list.Data))
	return rq.Render(http.StatusOK, "leads", page{Title: "Leads", Nav: "leads", Data: d})
}

type leadData struct {
	Lead     *leads.LeadDetail
	Catalog  workspace.Catalog
	Client   string
	Stage    string
	List     string
	Custom   []field
	Timeline []timelineRow
}

type field struct{ Name, Value string }

type timelineRow struct {
	leads.TimelineEvent
	Summary string
}

func (c *Console) leadPage(rq *Request) error {
	id := rq.R.PathValue("id")
	if !apikit.ValidID(id) {
		return apikit.NotFound("Lead " + strconv.Quote(id))
	}
	l, err := c.pl.Leads.Get(rq.Ctx, rq.P, id)
	if err != nil {
		return err
	}
	evs, err := c.pl.Leads.Timeline(rq.Ctx, rq.P, id, 200)
	if err != nil {
		return err
	}
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return err
	}
	d := leadData{Lead: l, Catalog: cat, Client: names(cat.Clients)[apikit.Deref(l.ClientID)], Stage: names(cat.Stages)[apikit.Deref(l.StageID)],
		List: names(cat.Lists)[apikit.Deref(l.ListID)]}
	for _, k := range sortedKeys(l.Custom) {
		d.Custom = append(d.Custom, field{k, display(l.Custom[k])})
	}
	for _, e := range evs {
		d.Timeline = append(d.Timeline, timelineRow{TimelineEvent: e, Summary: summary(e.Data)})
	}
	title := apikit.Deref(l.Name)
	if title == "" {
		title = "Lead"
	}
	return rq.Render(http.StatusOK, "lead", page{Title: title, Nav: "leads", Data: d})
}

// importFormData is the upload form's choices and what was chosen.
type importFormData struct {
	Catalog  workspace.Catalog
	ClientID string
	TagIDs   []string
	DryRun   bool
}

// Has reports whether id was chosen among the tags.
func (d importFormData) Has(id string) bool {
	for _, t := range d.TagIDs {
		if t == id {
			return true
		}
	}
	return false
}

func (c *Console) importForm(rq *Request) error {
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return err
	}
	return rq.Render(http.StatusOK, "leads_import", page{Title: "Import leads", Nav: "leads", Data: importFormData{Catalog: cat}})
}

// startImport starts the same import as POST /v1/leads/import, with the
// member's rights, and goes to the job's page.
func (c *Console) startImport(rq *Request) error {
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return err
	}
	f := rq.R.MultipartForm
	d := importFormData{Catalog: cat, ClientID: rq.R.PostFormValue("client_id"), DryRun: rq.R.PostFormValue("dry_run") == "true"}
	if f != nil {
		d.TagIDs = f.Value["tag_id"]
	}
	again := func(err error) error {
		return rq.Refuse(err, "leads_import", page{Title: "Import leads", Nav: "leads", Data: d})
	}
	if f == nil || len(f.File["file"]) == 0 {
		return again(apikit.Invalid("No file was chosen.", "Choose a CSV file with the column names on its first line."))
	}
	file, err := f.File["file"][0].Open()
	if err != nil {
		return err
	}
	defer file.Close()
	body, err := io.ReadAll(io.LimitReader(file, maxForm))
	if err != nil {
		return err
	}
	var maps []string
	for _, m := range strings.Split(rq.R.PostFormValue("map"), "\n") {
		if m = strings.TrimSpace(m); m != "" {
			maps = append(maps, m)
		}
	}
	for _, id := range append([]string{d.ClientID}, d.TagIDs...) {
		if id != "" && !apikit.ValidID(id) {
			return again(apikit.Invalid("The form names a client or tag that is not one of this workspace's.", "Reload the page and choose again."))
		}
	}
	job, err := c.pl.Leads.StartImport(rq.Ctx, rq.P, io.NopCloser(bytes.NewReader(body)), leads.ImportOptions{ClientID: d.ClientID, TagIDs: d.TagIDs, Map: maps, DryRun: d.DryRun}, c.log)
	if err != nil {
		return again(err)
	}
	rq.Redirect("/imports/" + job.ID)
	return nil
}

// importPage shows an import job; while it runs, htmx asks for its
// progress block every second.
func (c *Console) importPage(rq *Request) error {
	id := rq.R.PathValue("id")
	if !apikit.ValidID(id) {
		return apikit.NotFound("Import " + strconv.Quote(id))
	}
	job, err := c.pl.Leads.ImportJob(rq.Ctx, rq.P, id)
	if err != nil {
		return err
	}
	pg := page{Title: "Import", Nav: "leads", Data: job}
	if rq.R.Header.Get("HX-Request") != "" {
		return rq.RenderBlock(http.StatusOK, "import", "progress", pg)
	}
	return rq.Render(http.StatusOK, "import", pg)
}

// importRejected downloads every rejected row of an import as CSV, as GET
// /v1/imports/{id}/rejected.csv does.
func (c *Console) importRejected(rq *Request) error {
	id := rq.R.PathValue("id")
	if !apikit.ValidID(id) {
		return apikit.NotFound("Import " + strconv.Quote(id))
	}
	// Looked up first, so that an import the member may not see is shown
	// as not found rather than as the start of a file.
	if _, err := c.pl.Leads.ImportJob(rq.Ctx, rq.P, id); err != nil {
		return err
	}
	rq.W.Header().Set("Content-Type", "text/csv; charset=utf-8")
	rq.W.Header().Set("Content-Disposition", `attachment; filename="import-`+id+`-rejected.csv"`)
	return c.pl.Leads.WriteRejectedCSV(rq.Ctx, rq.P, id, rq.W)
}

// sortedKeys are m's keys in order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// display is a custom field's or an event datum's value as text: strings
// as they are, anything else as JSON.
func display(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// summary is an event's data in one line: key=value pairs in key order.
func summary(data map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(data) {
		parts = append(parts, k+"="+display(data[k]))
	}
	return strings.Join(parts, " · ")
}
