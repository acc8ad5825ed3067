package console

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

var keySecret = regexp.MustCompile(`<output class="secret" id="key-secret">([^<]+)</output>`)

func TestSettingsKeys(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEnv(t, d)
		boss := e.member("boss@acme.test", apikit.RoleManager)
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		scoped := e.member("gm@acme.test", apikit.RoleManager, "Globex")
		other := e.member("other:owner@other.test", apikit.RoleOwner)

		// Members, and managers limited to some clients, are refused.
		is.Equal(sdr.get("/app/settings/keys").code, http.StatusForbidden)
		is.Equal(scoped.get("/app/settings/keys").code, http.StatusForbidden)
		r := boss.get("/app/settings/keys")
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, "0 of 25 active keys"))
		is.Equal(boss.get("/app/settings").code, http.StatusSeeOther)

		// Create: the secret is shown once, and works as an API key.
		r = boss.post("/app/settings/keys", "/app/settings/keys", url.Values{"name": {"CRM sync"}, "role": {"client_viewer"}, "client": {"Globex"}})
		is.Equal(r.code, http.StatusOK)
		m := keySecret.FindStringSubmatch(r.body)
		is.True(m != nil)
		p, err := e.pl.Workspaces.Authenticate(ctx, m[1])
		is.NoErr(err)
		is.Equal(p.Role, apikit.RoleClientViewer)
		is.Equal(len(p.ClientIDs), 1)
		r = boss.get("/app/settings/keys")
		is.True(!strings.Contains(r.body, m[1])) // never again
		is.True(strings.Contains(r.body, "CRM sync") && strings.Contains(r.body, "1 of 25 active keys"))
		// The same list as `leadline keys list`.
		ks, err := e.pl.Workspaces.Keys(ctx, "acme")
		is.NoErr(err)
		is.Equal(len(ks), 1)
		is.Equal(ks[0].MemberEmail, "boss@acme.test")
		is.Equal(ks[0].ClientNames, []string{"Globex"})

		// Refusals keep what was typed: a role above the manager's, a past
		// expiry, a bad date.
		r = boss.post("/app/settings/keys", "/app/settings/keys", url.Values{"name": {"Too high"}, "role": {"owner"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "Use manager, member or client_viewer.") && strings.Contains(r.body, `value="Too high"`))
		r = boss.post("/app/settings/keys", "/app/settings/keys", url.Values{"role": {"member"}, "expires": {"2020-01-01"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "The expiry is in the past."))
		is.Equal(boss.post("/app/settings/keys", "/app/settings/keys", url.Values{"role": {"member"}, "expires": {"soon"}}).code, http.StatusUnprocessableEntity)
		// Writes need the role, the CSRF token, and no client scope.
		is.Equal(sdr.post("/app/leads", "/app/settings/keys", url.Values{"role": {"member"}}).code, http.StatusForbidden)
		is.Equal(scoped.post("/app/leads", "/app/settings/keys", url.Values{"role": {"member"}}).code, http.StatusForbidden)
		is.Equal(boss.postForm("/app/settings/keys", url.Values{"role": {"member"}}, "").code, http.StatusForbidden)

		// The 25-key limit: the 26th is refused with the remedy.
		for i := 1; i < workspace.MaxActiveKeys; i++ {
			_, _, err := e.pl.Workspaces.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "owner@acme.test", Role: apikit.RoleMember, Name: fmt.Sprint("k", i)})
			is.NoErr(err)
		}
		r = boss.post("/app/settings/keys", "/app/settings/keys", url.Values{"role": {"member"}})
		is.Equal(r.code, StatusOf(apikit.ETooMany))
		is.True(strings.Contains(r.body, "Revoke a key you no longer use"))

		// Revoke: the key stops working; another workspace's member
		// cannot revoke it.
		is.Equal(other.post("/app/settings/keys", "/app/settings/keys/"+ks[0].ID+"/revoke", nil).code, http.StatusNotFound)
		is.Equal(scoped.post("/app/leads", "/app/settings/keys/"+ks[0].ID+"/revoke", nil).code, http.StatusForbidden)
		r = boss.post("/app/settings/keys", "/app/settings/keys/"+ks[0].ID+"/revoke", nil)
		is.Equal(r.code, http.StatusSeeOther)
		_, err = e.pl.Workspaces.Authenticate(ctx, m[1])
		is.Equal(apikit.ErrorCode(err), apikit.EUnauthorized)
		r = boss.get("/app/settings/keys")
		is.True(strings.Contains(r.body, "revoked") && strings.Contains(r.body, "24 of 25 active keys"))
		is.Equal(boss.post("/app/settings/keys", "/app/settings/keys/nope/revoke", nil).code, http.StatusNotFound)
	})
}

// loopbackWebhooks lets the platform's webhooks reach endpoints on
// loopback only, as in the server's tests. The platform's own service
// stays hooked on its log: the outbox is written once per event.
func (e *env) loopbackWebhooks(d *db.DB) {
	e.pl.Webhooks = webhooks.NewService(d, e.clock, webhooks.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, secret.TestKey())
}

func TestSettingsWebhooksAndSuppressions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEnv(t, d)
		e.loopbackWebhooks(d)
		w := e.work()
		boss := e.member("boss@acme.test", apikit.RoleManager)
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		scoped := e.member("gm@acme.test", apikit.RoleManager, "Globex")

		is.Equal(sdr.get("/app/settings/webhooks").code, http.StatusForbidden)
		is.Equal(scoped.get("/app/settings/webhooks").code, http.StatusForbidden) // the API's refusal
		r := boss.get("/app/settings/webhooks")
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, "No webhook yet."))

		// A refused endpoint: the API's message and remedy, kept as typed.
		r = boss.post("/app/settings/webhooks", "/app/settings/webhooks", url.Values{"url": {"http://127.0.0.1:9/hook"}, "description": {"CRM"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "Use an https URL of a public endpoint.") && strings.Contains(r.body, `value="CRM"`))
		// Created: the signing secret shown once.
		r = boss.post("/app/settings/webhooks", "/app/settings/webhooks", url.Values{"url": {"https://127.0.0.1:9/hook"}, "event": {"message.classified"}})
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, `id="webhook-secret">whsec_`))
		hooks, err := e.pl.Webhooks.List(ctx, w.owner, 10, 0)
		is.NoErr(err)
		is.Equal(hooks.Total, 1)
		is.True(!strings.Contains(boss.get("/app/settings/webhooks").body, "whsec_"))

		// An event makes a delivery; the log shows it; replay makes another.
		_, err = e.pl.Inbox.SetIntent(ctx, w.owner, w.annThread, inbox.NotNow)
		is.NoErr(err)
		ds, err := e.pl.Webhooks.Deliveries(ctx, w.owner, webhooks.DeliveryFilter{})
		is.NoErr(err)
		is.True(len(ds) > 0)
		before := len(ds)
		r = boss.get("/app/settings/webhooks?webhook_id=" + hooks.Data[0].ID)
		is.True(strings.Contains(r.body, "<td>message.classified</td>"))
		is.Equal(boss.post("/app/settings/webhooks", "/app/settings/deliveries/"+ds[0].ID+"/replay", nil).code, http.StatusSeeOther)
		ds, err = e.pl.Webhooks.Deliveries(ctx, w.owner, webhooks.DeliveryFilter{})
		is.NoErr(err)
		is.Equal(len(ds), before+1)
		is.Equal(boss.post("/app/settings/webhooks", "/app/settings/deliveries/"+apikit.NewID()+"/replay", nil).code, http.StatusNotFound)
		// Delete.
		is.Equal(boss.postForm("/app/settings/webhooks/"+hooks.Data[0].ID+"/delete", nil, "").code, http.StatusForbidden)
		is.Equal(boss.post("/app/settings/webhooks", "/app/settings/webhooks/"+hooks.Data[0].ID+"/delete", nil).code, http.StatusSeeOther)
		is.True(strings.Contains(boss.get("/app/settings/webhooks").body, "Webhook deleted."))

		// Do not contact: POST /v1/suppressions's service; Cy becomes
		// do-not-contact.
		r = boss.post("/app/settings/suppressions", "/app/settings/suppressions", url.Values{"emails": {"cy@example.test\nnew@example.test"}, "reason": {"asked"}})
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, "2 added, 0 already on the list, 1 existing lead marked do-not-contact."))
		r = boss.post("/app/settings/suppressions", "/app/settings/suppressions", url.Values{"emails": {" "}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "Send emails, linkedin_ids, public_identifiers or lead_ids."))
		// A member limited to a client is refused, as by the API.
		gm := e.member("gmember@acme.test", apikit.RoleMember, "Globex")
		r = gm.post("/app/settings/suppressions", "/app/settings/suppressions", url.Values{"emails": {"x@example.test"}})
		is.Equal(r.code, http.StatusForbidden)
		is.Equal(e.member("v@acme.test", apikit.RoleClientViewer).get("/app/settings/suppressions").code, http.StatusForbidden)
	})
}

// TestSettingsTabsByRole: the settings show each member the tabs their
// role opens. A member finds Settings in the menu and lands on
// do-not-contact, the one tab a member may use, with no link to a
// manager's page; a manager lands on the API keys and sees every tab.
func TestSettingsTabsByRole(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, dbtest.Open(t, db.SQLite))
	tab := regexp.MustCompile(`<ul class="tabs">.*?</ul>`)
	for _, c := range []struct {
		email   string
		role    apikit.Role
		landing string
		tabs    []string
		hidden  []string
	}{
		{"sdr@acme.test", apikit.RoleMember, "/app/settings/suppressions", []string{"Do not contact"},
			[]string{"/settings/keys", "/settings/webhooks", "/settings/blacklist", "/members"}},
		{"boss@acme.test", apikit.RoleManager, "/app/settings/keys", []string{"API keys", "Webhooks", "Do not contact", "Blacklist", "Members"}, nil},
	} {
		b := e.member(c.email, c.role)
		is.True(strings.Contains(b.get("/app/leads").body, `href="/app/settings"`)) // in the menu
		r := b.get("/app/settings")
		is.Equal(r.code, http.StatusSeeOther)
		is.Equal(r.header.Get("Location"), c.landing)
		page := b.get(c.landing)
		is.Equal(page.code, http.StatusOK)
		tabs := tab.FindString(page.body)
		for _, want := range c.tabs {
			is.True(strings.Contains(tabs, ">"+want+"<")) // a tab the role opens
		}
		main := page.body[strings.Index(page.body, `<main`):]
		for _, not := range c.hidden {
			is.True(!strings.Contains(main, `href="/app`+not+`"`)) // no link to a page the role cannot open
			is.Equal(b.get("/app"+not).code, http.StatusForbidden)
		}
	}
}
