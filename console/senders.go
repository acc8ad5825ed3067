package console

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/oauth"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
	"github.com/leadline/leadline/workspace"
)

// The senders pages: the list with each sender's health and today's
// budgets (GET /v1/senders, /health, /budgets), a sender with its 7-day
// capacity (/capacity), and the form that connects or changes one. The
// form saves through senders.Service.Apply with one Spec, as `leadline
// apply` does with a setup file's sender, so the ceilings and every other
// rule give the same errors. A secret is typed in (stored sealed under the
// server's key by senders.Secrets, as `leadline senders secret set` does,
// and never shown again) or named as an environment variable. "Check
// connection" runs platform.CheckSender, what `leadline senders check`
// prints.
func (c *Console) routesSenders() {
	c.handle("GET /senders", apikit.RoleClientViewer, c.sendersPage)
	c.handle("GET /senders/new", apikit.RoleManager, c.newSenderForm)
	c.handle("POST /senders", apikit.RoleManager, c.createSender)
	c.handle("GET /senders/{id}", apikit.RoleClientViewer, c.senderPage)
	c.handle("POST /senders/{id}", apikit.RoleManager, c.saveSender)
	c.handle("POST /senders/{id}/check", apikit.RoleManager, c.checkSender)
	c.handle("POST /senders/{id}/resume", apikit.RoleManager, c.resumeSender)
}

type senderRow struct {
	senders.Sender
	Client  string
	Health  *senders.HealthView
	Budgets *senders.Budgets
}

type sendersData struct {
	Senders []senderRow
	Pager   Pager
}

func (c *Console) sendersPage(rq *Request) error {
	q := rq.R.URL.Query()
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = max(offset, 0)
	const limit = apikit.DefaultLimit
	list, err := c.pl.Senders.List(rq.Ctx, rq.P, senders.Filter{Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return err
	}
	clients := names(cat.Clients)
	d := sendersData{}
	for _, s := range list.Data {
		h, err := c.pl.Senders.Health(rq.Ctx, rq.P, s.ID)
		if err != nil {
			return err
		}
		b, err := c.pl.Senders.Budgets(rq.Ctx, rq.P, s.ID)
		if err != nil {
			return err
		}
		d.Senders = append(d.Senders, senderRow{Sender: s, Client: clients[apikit.Deref(s.ClientID)], Health: h, Budgets: b})
	}
	d.Pager = newPager(rq.Path("/senders"), q, list.Total, limit, offset, len(list.Data))
	return rq.Render(http.StatusOK, "senders", page{Title: "Senders", Nav: "senders", Data: d})
}

// senderForm is the connect/change form as typed. Typed secrets are read
// from the form but never shown again, not even when the form is refused.
type senderForm struct {
	New                                      bool
	Name, Channel, Address, ClientID         string
	Timezone, Transport, Status, MonthlyCost string
	Premium                                  bool
	// Days are the working windows per weekday ("09:00-12:00, 13:00-17:00").
	Days []dayWindows
	// Caps are the daily caps per action of the channel, and invite_week.
	Caps                          []capField
	WarmStart, WarmFrom, WarmStep string
	// Guards are the sender's guards (sender_guards.go).
	Guards guardForm
	// Settings are the chosen transport's settings as typed (or stored),
	// and settingsErr what was wrong in reading them.
	Settings    senders.Settings
	settingsErr error
	secrets     map[string]string
	Transports  []string
	// TransportForms are the forms of the channel's transports that take
	// settings.
	TransportForms []transportForm
	Clients        []workspace.Named
	ID             string
	Statuses       []string
}

// transportForm is one transport's part of the form.
type transportForm struct {
	Name      string
	Fieldsets []senders.Fieldset
}

type dayWindows struct{ Day, Windows string }

type capField struct {
	Action, Label, Value string
	Ceiling              int
}

var weekdays = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// capsOf are the cap fields of a channel's sender, valued from caps.
func capsOf(ch senders.Channel, caps senders.Caps) []capField {
	var out []capField
	for _, a := range senders.ActionsOf(ch) {
		spec, _ := a.Spec()
		v := ""
		if n, ok := caps[string(a)]; ok {
			v = strconv.Itoa(n)
		}
		out = append(out, capField{Action: string(a), Label: spec.Label, Value: v, Ceiling: spec.Ceiling})
	}
	if ch == senders.LinkedIn {
		v := ""
		if n, ok := caps[senders.InviteWeek]; ok {
			v = strconv.Itoa(n)
		}
		out = append(out, capField{Action: senders.InviteWeek, Label: "Invitations in 7 days", Value: v, Ceiling: senders.CeilingInviteWeek})
	}
	return out
}

// formOf is the form of a stored sender.
func formOf(s *senders.Sender) senderForm {
	f := senderForm{Name: s.Name, Channel: string(s.Channel), Address: apikit.Deref(s.Address), ClientID: apikit.Deref(s.ClientID),
		Timezone: s.Timezone, Transport: s.Transport, Status: string(s.Status), Premium: s.Premium, Caps: capsOf(s.Channel, s.Caps),
		Settings: s.Settings, ID: s.ID, Guards: guardsOf(s.Channel, s.Guards)}
	if s.MonthlyCost != 0 {
		f.MonthlyCost = strconv.FormatFloat(s.MonthlyCost, 'f', -1, 64)
	}
	for _, d := range weekdays {
		f.Days = append(f.Days, dayWindows{d, strings.Join(s.Schedule[d], ", ")})
	}
	if w := s.Warmup; w != nil {
		f.WarmStart, f.WarmFrom, f.WarmStep = w.Start, strconv.Itoa(w.From), strconv.Itoa(w.Step)
	}
	return f
}

// readSenderForm reads the posted form; old is the stored sender, whose
// name and channel stay (nil for a new one: the form's).
func readSenderForm(r *http.Request, old *senders.Sender) senderForm {
	v := r.PostForm
	f := senderForm{Name: strings.TrimSpace(v.Get("name")), Channel: v.Get("channel"), Address: strings.TrimSpace(v.Get("address")),
		ClientID: v.Get("client_id"), Timezone: strings.TrimSpace(v.Get("timezone")), Transport: v.Get("transport"), Status: v.Get("status"),
		MonthlyCost: strings.TrimSpace(v.Get("monthly_cost")), Premium: v.Get("premium") == "true",
		WarmStart: strings.TrimSpace(v.Get("warmup_start")), WarmFrom: strings.TrimSpace(v.Get("warmup_from")), WarmStep: strings.TrimSpace(v.Get("warmup_step")),
		secrets: map[string]string{}}
	if old != nil {
		f.Name, f.Channel = old.Name, string(old.Channel)
	}
	for _, d := range weekdays {
		f.Days = append(f.Days, dayWindows{d, strings.TrimSpace(v.Get("schedule." + d))})
	}
	f.Guards = readGuards(senders.Channel(f.Channel), v)
	f.Caps = capsOf(senders.Channel(f.Channel), nil)
	for i := range f.Caps {
		f.Caps[i].Value = strings.TrimSpace(v.Get("cap." + f.Caps[i].Action))
	}
	// The chosen transport's plug-in reads its settings; a secret typed
	// in without a name gets one made from the sender's.
	if pl, ok := senders.PluginOf(f.Transport); ok && pl.Form != nil {
		f.Settings, f.secrets, f.settingsErr = pl.Form.Read(v, func(what string) string { return secretName(f.Name, what) })
	}
	return f
}

var notEnvChar = regexp.MustCompile(`[^A-Z0-9]+`)

// secretName is the name a typed secret gets when the form names none:
// LEADLINE_SENDER_<NAME>_<WHAT>.
func secretName(sender, what string) string {
	n := strings.Trim(notEnvChar.ReplaceAllString(strings.ToUpper(sender), "_"), "_")
	return "LEADLINE_SENDER_" + n + "_" + what
}

// spec is the form as a setup file's sender, or an error naming the field
// that is not a number.
func (f senderForm) spec() (senders.Spec, error) {
	bad := func(field, v string) error {
		return apikit.Invalid(fmt.Sprintf("Sender %q: %s %q is not a number.", f.Name, field, v), "Type a number, or leave it empty for the default.")
	}
	num := func(field, v string, dst *int) error {
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return bad(field, v)
		}
		*dst = n
		return nil
	}
	s := senders.Spec{Name: f.Name, Channel: senders.Channel(f.Channel), Address: f.Address, Timezone: f.Timezone, Transport: f.Transport,
		Status: senders.Status(f.Status), Premium: f.Premium, Schedule: map[string][]string{}, Caps: map[string]int{}}
	if f.MonthlyCost != "" {
		v, err := strconv.ParseFloat(f.MonthlyCost, 64)
		if err != nil || math.IsNaN(v) {
			return s, bad("monthly cost", f.MonthlyCost)
		}
		s.MonthlyCost = v
	}
	for _, d := range f.Days {
		for _, w := range strings.Split(d.Windows, ",") {
			if w = strings.TrimSpace(w); w != "" {
				s.Schedule[d.Day] = append(s.Schedule[d.Day], w)
			}
		}
	}
	for _, cf := range f.Caps {
		if cf.Value == "" {
			continue
		}
		var n int
		if err := num("cap "+cf.Action, cf.Value, &n); err != nil {
			return s, err
		}
		s.Caps[cf.Action] = n
	}
	if f.WarmStart != "" || f.WarmFrom != "" || f.WarmStep != "" {
		s.Warmup = &senders.Warmup{Start: f.WarmStart}
		if err := num("warm-up from", f.WarmFrom, &s.Warmup.From); err != nil {
			return s, err
		}
		if err := num("warm-up step", f.WarmStep, &s.Warmup.Step); err != nil {
			return s, err
		}
	}
	gs, err := f.Guards.settings(f.Name)
	if err != nil {
		return s, err
	}
	s.GuardSettings = gs
	if f.settingsErr != nil {
		return s, apikit.Invalid(fmt.Sprintf("Sender %q: %v.", f.Name, f.settingsErr), "Fix the field and save again.")
	}
	if len(f.Settings) > 0 {
		s.Sections = map[string]any{}
		for name, raw := range f.Settings {
			s.Sections[name] = raw
		}
	}
	return s, nil
}

// senderData is a sender's page.
type senderData struct {
	Sender   *senders.Sender
	Client   string
	Health   *senders.HealthView
	Budgets  *senders.Budgets
	Capacity []enrollments.DayCapacity
	// Secrets are the names the settings give, each stored, from the
	// environment, or missing (managers only).
	Secrets []secretState
	Form    *senderForm
	Check   *platform.SenderCheck
	// Domain is the check of an email sender's domain (MX, SPF, DKIM,
	// DMARC); nil for other senders.
	Domain *email.DomainReport
	// Connection is the mailbox's account connected with OAuth (nil:
	// none), ConnectWith the providers it can be connected at and
	// Provider the one its settings sign in with (managers only).
	Connection  *oauth.Connection
	ConnectWith []oauth.Provider
	Provider    string
}

type secretState struct{ Name, State string }

func (c *Console) withChoices(rq *Request, f *senderForm) error {
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return err
	}
	f.Clients = cat.Clients
	f.Transports = slices.Sorted(func(yield func(string) bool) {
		for _, t := range senders.Plugins() {
			if (t.Channel == "" || f.Channel == "" || string(t.Channel) == f.Channel) && !yield(t.Name) {
				return
			}
		}
	})
	f.TransportForms = nil
	for _, name := range f.Transports {
		pl, _ := senders.PluginOf(name)
		if pl.Form == nil {
			continue
		}
		set := senders.Settings{}
		if name == f.Transport {
			set = f.Settings
		}
		f.TransportForms = append(f.TransportForms, transportForm{Name: name, Fieldsets: pl.Form.Fieldsets(set)})
	}
	f.Statuses = []string{string(senders.Active), string(senders.Paused)}
	return nil
}

func (c *Console) newSenderForm(rq *Request) error {
	ch := rq.R.URL.Query().Get("channel")
	if ch != string(senders.Email) {
		ch = string(senders.LinkedIn)
	}
	f := senderForm{New: true, Channel: ch, Transport: senders.TransportSandbox, Status: string(senders.Active), Timezone: rq.P.Timezone,
		Caps: capsOf(senders.Channel(ch), nil), Guards: guardsOf(senders.Channel(ch), senders.GuardSettings{})}
	for _, d := range weekdays {
		f.Days = append(f.Days, dayWindows{d, strings.Join(senders.DefaultSchedule()[d], ", ")})
	}
	return c.renderSenderForm(rq, http.StatusOK, &f, nil)
}

func (c *Console) renderSenderForm(rq *Request, status int, f *senderForm, e *apikit.Error) error {
	if err := c.withChoices(rq, f); err != nil {
		return err
	}
	return rq.Render(status, "sender", page{Title: "Connect a sender", Nav: "senders", Data: senderData{Form: f}, Error: e})
}

// applySender saves f through senders.Service.Apply in one transaction,
// as `leadline apply` does, stores the secrets typed in sealed, and
// returns the sender. id is the sender being changed ("" for a new one,
// whose name must be free).
func (c *Console) applySender(rq *Request, id string, f senderForm) (*senders.Sender, error) {
	spec, err := f.spec()
	if err != nil {
		return nil, err
	}
	clients, name, err := c.ownerClients(rq, f.ClientID, "A sender of yours must work for one of your clients.")
	if err != nil {
		return nil, err
	}
	spec.Client = name
	var out *senders.Sender
	err = c.pl.DB.InTx(rq.Ctx, func(ctx context.Context) error {
		old, err := c.pl.Senders.ByName(ctx, rq.P.WorkspaceID, spec.Name)
		switch {
		case db.IsNoRows(err):
		case err != nil:
			return err
		case old.ID != id:
			return apikit.Conflict(fmt.Sprintf("A sender named %q exists already.", spec.Name), "Choose another name.")
		}
		if _, err := c.pl.Senders.Apply(ctx, senders.Owner{WorkspaceID: rq.P.WorkspaceID, Timezone: rq.P.Timezone, Clients: clients},
			[]senders.Spec{spec}); err != nil {
			return err
		}
		if out, err = c.pl.Senders.ByName(ctx, rq.P.WorkspaceID, spec.Name); err != nil {
			return err
		}
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range f.secrets {
				if !yield(k) {
					return
				}
			}
		}) {
			if err := c.pl.SenderSecrets.Set(ctx, out, name, f.secrets[name]); err != nil {
				return err
			}
		}
		return c.pl.Enrollments.SetupChanged(ctx, rq.P.WorkspaceID)
	})
	return out, err
}

// refused is an error a form shows, or the error itself when it is no
// *apikit.Error of the user's (E_INTERNAL).
func refused(err error) (*apikit.Error, error) {
	ae := apikit.AsError(err)
	if ae.Code == apikit.EInternal {
		return nil, err
	}
	return ae, nil
}

func (c *Console) createSender(rq *Request) error {
	f := readSenderForm(rq.R, nil)
	f.New = true
	s, err := c.applySender(rq, "", f)
	if err != nil {
		ae, err := refused(err)
		if err != nil {
			return err
		}
		return c.renderSenderForm(rq, StatusOf(ae.Code), &f, ae)
	}
	rq.Flash("Sender " + s.Name + " connected.")
	rq.Redirect("/senders/" + s.ID)
	return nil
}

func (c *Console) visibleSender(rq *Request) (*senders.Sender, error) {
	id := rq.R.PathValue("id")
	if !apikit.ValidID(id) {
		return nil, apikit.NotFound("Sender " + strconv.Quote(id))
	}
	return c.pl.Senders.Visible(rq.Ctx, rq.P, id)
}

func (c *Console) renderSender(rq *Request, status int, s *senders.Sender, f *senderForm, check *platform.SenderCheck, e *apikit.Error) error {
	domain := c.senderDomain(rq, s, check != nil)
	h, err := c.pl.Senders.Health(rq.Ctx, rq.P, s.ID)
	if err != nil {
		return err
	}
	b, err := c.pl.Senders.Budgets(rq.Ctx, rq.P, s.ID)
	if err != nil {
		return err
	}
	capa, err := c.pl.Enrollments.Capacity(rq.Ctx, rq.P, s)
	if err != nil {
		return err
	}
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return err
	}
	d := senderData{Sender: s, Client: names(cat.Clients)[apikit.Deref(s.ClientID)], Health: h, Budgets: b, Capacity: capa, Check: check, Domain: domain}
	if rq.Can(apikit.RoleManager) {
		stored, err := c.pl.SenderSecrets.Stored(rq.Ctx, s)
		if err != nil {
			return err
		}
		missing, err := c.pl.SenderSecrets.Missing(rq.Ctx, s)
		if err != nil {
			return err
		}
		for _, n := range s.SecretNames() {
			st := "from the environment"
			switch {
			case slices.Contains(stored, n):
				st = "stored sealed"
			case slices.Contains(missing, n):
				st = "missing: type it in, or set the environment variable"
			}
			d.Secrets = append(d.Secrets, secretState{n, st})
		}
		if s.Channel == senders.Email && s.Transport == email.Name {
			if d.Connection, err = c.pl.OAuth.Connection(rq.Ctx, s.ID); err != nil {
				return err
			}
			d.Provider = email.Provider(s.Settings)
			for _, n := range oauth.Names {
				if d.Provider == "" || d.Provider == n {
					d.ConnectWith = append(d.ConnectWith, oauth.Providers[n])
				}
			}
		}
		if f == nil {
			sf := formOf(s)
			f = &sf
		}
		f.ID = s.ID
		if err := c.withChoices(rq, f); err != nil {
			return err
		}
		d.Form = f
	}
	return rq.Render(status, "sender", page{Title: s.Name, Nav: "senders", Data: d, Error: e})
}

func (c *Console) senderPage(rq *Request) error {
	s, err := c.visibleSender(rq)
	if err != nil {
		return err
	}
	return c.renderSender(rq, http.StatusOK, s, nil, nil, nil)
}

// saveSender changes a sender: its whole form goes through Apply, so a
// cap above the platform ceiling is refused with the setup file's error.
func (c *Console) saveSender(rq *Request) error {
	s, err := c.visibleSender(rq)
	if err != nil {
		return err
	}
	f := readSenderForm(rq.R, s)
	if _, err := c.applySender(rq, s.ID, f); err != nil {
		ae, err := refused(err)
		if err != nil {
			return err
		}
		return c.renderSender(rq, StatusOf(ae.Code), s, &f, nil, ae)
	}
	rq.Flash("Sender " + s.Name + " saved.")
	rq.Redirect("/senders/" + s.ID)
	return nil
}

// checkSender connects the sender through its transport and shows what
// works, step by step, as `leadline senders check` prints it.
func (c *Console) checkSender(rq *Request) error {
	s, err := c.visibleSender(rq)
	if err != nil {
		return err
	}
	chk := c.pl.CheckSender(rq.Ctx, nil, s)
	return c.renderSender(rq, http.StatusOK, s, nil, &chk, nil)
}

// senderDomain is the domain check of an email sender's page, before its
// health is read: a failure is the sender's warning domain_check_failed,
// a pass clears it. A page reuses the report of the last hour (each DNS
// query is bounded, the whole check too); "Check connection" (fresh)
// checks again. A report that cannot be recorded is still shown.
func (c *Console) senderDomain(rq *Request, s *senders.Sender, fresh bool) *email.DomainReport {
	var r *email.DomainReport
	if fresh {
		r, _ = c.domains.Check(rq.Ctx, s)
	} else {
		r, _, _ = c.domains.Report(rq.Ctx, s)
	}
	if r != nil {
		if err := email.RecordDomain(rq.Ctx, c.pl.Senders, s, r); err != nil {
			c.log.Warn("console: the domain check could not be recorded in the sender's health", "sender", s.ID, "error", err)
		}
	}
	return r
}

// Acceptance is the sender's acceptance rate.
func (d senderData) Acceptance() string {
	if d.Health == nil {
		return "–"
	}
	return percent(d.Health.AcceptanceRate)
}
