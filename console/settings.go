package console

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

// Settings: for owners and managers, API keys (workspace.Service's
// CreateKey, Keys and RevokeKey, as `leadline keys create|list|revoke`),
// webhooks with their delivery log and replay (the webhooks service, as
// the /v1/webhooks routes) and the blacklist (blacklist.go); for members
// too, do-not-contact entries (POST /v1/suppressions), the one tab they
// see. Members are on their own page (members.go).
func (c *Console) routesSettings() {
	c.handle("GET /settings", apikit.RoleMember, func(rq *Request) error { rq.Redirect("/settings/" + rq.settingsTabs()[0].Key); return nil })
	c.handle("GET /settings/keys", apikit.RoleManager, c.keysPage)
	c.handle("POST /settings/keys", apikit.RoleManager, c.createKey)
	c.handle("POST /settings/keys/{id}/revoke", apikit.RoleManager, c.revokeKey)
	c.handle("GET /settings/webhooks", apikit.RoleManager, c.webhooksPage)
	c.handle("POST /settings/webhooks", apikit.RoleManager, c.createWebhook)
	c.handle("POST /settings/webhooks/{id}/delete", apikit.RoleManager, c.deleteWebhook)
	c.handle("POST /settings/webhooks/{id}/enable", apikit.RoleManager, c.enableWebhook)
	c.handle("POST /settings/deliveries/{id}/replay", apikit.RoleManager, c.replayDelivery)
	c.handle("GET /settings/suppressions", apikit.RoleMember, c.suppressionsPage)
	c.handle("POST /settings/suppressions", apikit.RoleMember, c.addSuppressions)
	c.routesBlacklist()
}

// settingsTab is one page of the settings, with the role its GET route
// needs.
type settingsTab struct {
	Key, Label string
	Role       apikit.Role
}

// settingsTabs are the settings' pages. A member has do-not-contact
// alone; the others are a manager's.
var settingsTabs = []settingsTab{{"keys", "API keys", apikit.RoleManager}, {"webhooks", "Webhooks", apikit.RoleManager},
	{"suppressions", "Do not contact", apikit.RoleMember}, {"blacklist", "Blacklist", apikit.RoleManager}, {"mail", "Mail providers", apikit.RoleManager}}

// settingsTabs are the tabs the member may open, in order.
func (rq *Request) settingsTabs() []settingsTab {
	var out []settingsTab
	for _, t := range settingsTabs {
		if rq.Can(t.Role) {
			out = append(out, t)
		}
	}
	return out
}

// settingsPage is the dot of a settings page's data: its tab, the tabs
// the member may open and the page's own data.
type settingsPage struct {
	Tab  string
	Tabs []settingsTab
	Data any
}

func (rq *Request) renderSettings(status int, tab string, pg page) error {
	pg.Title, pg.Nav = "Settings", "settings"
	pg.Data = settingsPage{Tab: tab, Tabs: rq.settingsTabs(), Data: pg.Data}
	return rq.Render(status, "settings_"+tab, pg)
}

// unscoped refuses a member limited to some clients: keys and webhooks
// reach every client of the workspace.
func unscoped(p apikit.Principal) error {
	if p.Scoped() {
		return apikit.Forbidden("API keys and webhooks reach every client of the workspace; you are limited to some clients.",
			"Ask a manager of the whole workspace.")
	}
	return nil
}

type keysData struct {
	Keys    []keyRow
	Active  int
	Max     int
	Roles   []apikit.Role
	Clients []workspace.Named
	// Form is what was typed, kept when the key is refused.
	Form struct {
		Name, Role, Expires string
		Clients             []string
	}
	// Created and Secret are the key just made; the secret is shown
	// this once.
	Created *workspace.Key
	Secret  string
}

type keyRow struct {
	workspace.Key
	Status string
}

// Chose reports whether the client name was ticked.
func (d *keysData) Chose(name string) bool {
	for _, c := range d.Form.Clients {
		if c == name {
			return true
		}
	}
	return false
}

func (c *Console) keysData(rq *Request) (*keysData, error) {
	if err := unscoped(rq.P); err != nil {
		return nil, err
	}
	ks, err := c.pl.Workspaces.Keys(rq.Ctx, rq.P.WorkspaceName)
	if err != nil {
		return nil, err
	}
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	d := &keysData{Max: workspace.MaxActiveKeys, Clients: cat.Clients}
	now := c.pl.Clock.Now()
	for i := len(ks) - 1; i >= 0; i-- { // newest first
		k := ks[i]
		r := keyRow{Key: k, Status: "active"}
		switch {
		case k.RevokedAt != nil:
			r.Status = "revoked"
		case k.ExpiresAt != nil && !k.ExpiresAt.After(now):
			r.Status = "expired"
		default:
			d.Active++
		}
		d.Keys = append(d.Keys, r)
	}
	for _, r := range []apikit.Role{apikit.RoleClientViewer, apikit.RoleMember, apikit.RoleManager} {
		if rq.P.Role.AtLeast(r) {
			d.Roles = append(d.Roles, r)
		}
	}
	d.Form.Role = string(apikit.RoleMember)
	return d, nil
}

func (c *Console) keysPage(rq *Request) error {
	d, err := c.keysData(rq)
	if err != nil {
		return err
	}
	return rq.renderSettings(http.StatusOK, "keys", page{Data: d})
}

// createKey creates a key as `leadline keys create --member <you>` does
// and shows its secret once.
func (c *Console) createKey(rq *Request) error {
	d, err := c.keysData(rq)
	if err != nil {
		return err
	}
	f := rq.R.PostForm
	d.Form.Name, d.Form.Role, d.Form.Expires, d.Form.Clients = strings.TrimSpace(f.Get("name")), f.Get("role"), strings.TrimSpace(f.Get("expires")), f["client"]
	in := workspace.KeyInput{Workspace: rq.P.WorkspaceName, MemberEmail: rq.P.MemberEmail, Role: apikit.Role(d.Form.Role), Clients: d.Form.Clients, Name: d.Form.Name}
	key, secret, err := func() (*workspace.Key, string, error) {
		if d.Form.Expires != "" {
			t, err := time.Parse(time.DateOnly, d.Form.Expires)
			if err != nil {
				return nil, "", apikit.Invalid("The expiry is not a date.", "Give the last day as YYYY-MM-DD, or leave it empty for a key valid until revoked.")
			}
			in.ExpiresAt = &t
		}
		return c.pl.Workspaces.CreateKey(rq.Ctx, in)
	}()
	if err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal {
			return err
		}
		return rq.renderSettings(StatusOf(ae.Code), "keys", page{Data: d, Error: ae})
	}
	if d, err = c.keysData(rq); err != nil {
		return err
	}
	d.Created, d.Secret = key, secret
	return rq.renderSettings(http.StatusOK, "keys", page{Data: d})
}

// revokeKey revokes a key as `leadline keys revoke` does.
func (c *Console) revokeKey(rq *Request) error {
	if err := unscoped(rq.P); err != nil {
		return err
	}
	k, err := c.pl.Workspaces.RevokeKey(rq.Ctx, rq.P.WorkspaceName, rq.R.PathValue("id"))
	if err != nil {
		return err
	}
	rq.Flash("Key " + k.Name + " (" + k.Prefix + "…) revoked.")
	rq.Redirect("/settings/keys")
	return nil
}

type webhooksData struct {
	Webhooks   []webhooks.Webhook
	Deliveries []webhooks.Delivery
	Kinds      []webhooks.Kind
	Filter     webhooks.DeliveryFilter
	Form       struct {
		URL, Description string
		Events           []string
	}
	Created *webhooks.Created
}

// Chose reports whether the event type was ticked.
func (d *webhooksData) Chose(t string) bool {
	for _, e := range d.Form.Events {
		if e == t {
			return true
		}
	}
	return false
}

func (c *Console) webhooksData(rq *Request) (*webhooksData, error) {
	q := rq.R.URL.Query()
	d := &webhooksData{Kinds: webhooks.Kinds, Filter: webhooks.DeliveryFilter{WebhookID: q.Get("webhook_id"), Status: q.Get("status")}}
	if d.Filter.WebhookID != "" && !apikit.ValidID(d.Filter.WebhookID) {
		d.Filter.WebhookID = noID
	}
	switch d.Filter.Status {
	case "", "pending", "succeeded", "failed":
	default:
		d.Filter.Status = ""
	}
	ws, err := c.pl.Webhooks.List(rq.Ctx, rq.P, apikit.MaxLimit, 0)
	if err != nil {
		return nil, err
	}
	d.Webhooks = ws.Data
	if d.Deliveries, err = c.pl.Webhooks.Deliveries(rq.Ctx, rq.P, d.Filter); err != nil {
		return nil, err
	}
	return d, nil
}

func (c *Console) webhooksPage(rq *Request) error {
	d, err := c.webhooksData(rq)
	if err != nil {
		return err
	}
	return rq.renderSettings(http.StatusOK, "webhooks", page{Data: d})
}

// createWebhook subscribes an endpoint as POST /v1/webhooks does and
// shows its signing secret once.
func (c *Console) createWebhook(rq *Request) error {
	d, err := c.webhooksData(rq)
	if err != nil {
		return err
	}
	f := rq.R.PostForm
	d.Form.URL, d.Form.Description, d.Form.Events = strings.TrimSpace(f.Get("url")), strings.TrimSpace(f.Get("description")), f["event"]
	events := d.Form.Events
	if len(events) == 0 {
		events = []string{"*"}
	}
	created, err := c.pl.Webhooks.Create(rq.Ctx, rq.P, webhooks.CreateInput{URL: d.Form.URL, Events: events, Description: d.Form.Description})
	if err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal {
			return err
		}
		return rq.renderSettings(StatusOf(ae.Code), "webhooks", page{Data: d, Error: ae})
	}
	if d, err = c.webhooksData(rq); err != nil {
		return err
	}
	d.Created = created
	return rq.renderSettings(http.StatusOK, "webhooks", page{Data: d})
}

// webhookAction runs act on the path's id and goes back to the webhooks.
func (c *Console) webhookAction(rq *Request, what, flash string, act func(id string) error) error {
	id := rq.R.PathValue("id")
	if !apikit.ValidID(id) {
		return apikit.NotFound(what + " " + strconv.Quote(id))
	}
	if err := act(id); err != nil {
		return err
	}
	rq.Flash(flash)
	rq.Redirect("/settings/webhooks")
	return nil
}

func (c *Console) deleteWebhook(rq *Request) error {
	return c.webhookAction(rq, "Webhook", "Webhook deleted.", func(id string) error {
		_, err := c.pl.Webhooks.Delete(rq.Ctx, rq.P, id)
		return err
	})
}

func (c *Console) enableWebhook(rq *Request) error {
	return c.webhookAction(rq, "Webhook", "Webhook turned back on.", func(id string) error {
		_, err := c.pl.Webhooks.Enable(rq.Ctx, rq.P, id)
		return err
	})
}

func (c *Console) replayDelivery(rq *Request) error {
	return c.webhookAction(rq, "Delivery", "Delivery replayed: it is sent within about 30 seconds.", func(id string) error {
		_, err := c.pl.Webhooks.Replay(rq.Ctx, rq.P, id)
		return err
	})
}

type suppressionsData struct {
	Form struct {
		Emails, PublicIdentifiers, LinkedInIDs, Reason string
	}
	Result *leads.SuppressionsResult
}

func (c *Console) suppressionsPage(rq *Request) error {
	return rq.renderSettings(http.StatusOK, "suppressions", page{Data: &suppressionsData{}})
}

// lines are the non-empty lines (or comma-separated entries) of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' }) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// addSuppressions adds do-not-contact entries as POST /v1/suppressions.
func (c *Console) addSuppressions(rq *Request) error {
	d := &suppressionsData{}
	f := rq.R.PostForm
	d.Form.Emails, d.Form.PublicIdentifiers, d.Form.LinkedInIDs, d.Form.Reason = f.Get("emails"), f.Get("public_identifiers"), f.Get("linkedin_ids"), strings.TrimSpace(f.Get("reason"))
	res, err := c.pl.Leads.AddSuppressions(rq.Ctx, rq.P, leads.SuppressionsInput{Emails: lines(d.Form.Emails),
		PublicIdentifiers: lines(d.Form.PublicIdentifiers), LinkedInIDs: lines(d.Form.LinkedInIDs), Reason: d.Form.Reason})
	if err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal {
			return err
		}
		return rq.renderSettings(StatusOf(ae.Code), "suppressions", page{Data: d, Error: ae})
	}
	out := &suppressionsData{Result: res}
	return rq.renderSettings(http.StatusOK, "suppressions", page{Data: out})
}
