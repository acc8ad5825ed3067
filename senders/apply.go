package senders

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// Spec is a sender as a setup file declares it. The spec is the sender's
// whole configuration: applying it again changes nothing, and a field left
// out takes its default.
type Spec struct {
	Name        string              `yaml:"name"`
	Channel     Channel             `yaml:"channel"`
	Address     string              `yaml:"address"`
	Client      string              `yaml:"client"`
	Timezone    string              `yaml:"timezone"`
	Transport   string              `yaml:"transport"`
	Status      Status              `yaml:"status"`
	Premium     bool                `yaml:"premium"`
	MonthlyCost float64             `yaml:"monthly_cost"`
	Schedule    map[string][]string `yaml:"schedule"`
	Caps        map[string]int      `yaml:"caps"`
	Warmup      *Warmup             `yaml:"warmup"`
	// The sender's guards (guards.go): spacing, hourly_cap, holidays, …
	GuardSettings `yaml:",inline"`
	// Sections are the transport's settings, by section name (smtp and
	// imap for a mailbox, unipile for a LinkedIn account): whatever else
	// the sender's entry holds, checked by its transport kind.
	Sections map[string]any `yaml:",inline"`
}

// Owner is the workspace a setup file's senders belong to.
type Owner struct {
	WorkspaceID string
	Timezone    string
	// Clients maps the workspace's client names to their ids.
	Clients map[string]string
	// Holidays are the workspace's days off, every sender's too.
	Holidays *Holidays
}

// TransportSandbox is the built-in sandbox network, the default transport.
const TransportSandbox = "sandbox"

// build checks spec and returns the sender it describes (without ids and
// times). Errors name the sender and the field, with a remedy.
func (spec Spec) build(o Owner) (*Sender, error) {
	bad := func(format string, args ...any) error {
		return apikit.Invalid(fmt.Sprintf("Sender %q: ", spec.Name)+fmt.Sprintf(format, args...), "Fix the sender in the setup file and apply it again.")
	}
	if strings.TrimSpace(spec.Name) == "" {
		return nil, apikit.Invalid("A sender has no name.", "Give every sender a name; sequences name their senders by it.")
	}
	if err := apikit.CheckText("", spec); err != nil {
		return nil, apikit.Prefixed(fmt.Sprintf("Sender %q: ", spec.Name), err)
	}
	s := &Sender{Name: strings.TrimSpace(spec.Name), Channel: spec.Channel, Timezone: o.Timezone, Transport: TransportSandbox,
		Status: Active, Premium: spec.Premium, Health: Healthy, HealthReasons: []HealthReason{}}
	switch spec.Channel {
	case LinkedIn:
		if spec.Address != "" {
			return nil, bad("a LinkedIn sender has no address; address is for email senders.")
		}
	case Email:
		addr := strings.ToLower(strings.TrimSpace(spec.Address))
		if at := strings.LastIndex(addr, "@"); at < 1 || at == len(addr)-1 || strings.ContainsAny(addr, " <>,") {
			return nil, bad("address %q is not an email address.", spec.Address)
		}
		s.Address = &addr
		if spec.Premium {
			return nil, bad("premium is a LinkedIn setting.")
		}
	default:
		return nil, bad("channel %q is not linkedin or email.", spec.Channel)
	}
	if spec.Client != "" {
		id, ok := o.Clients[spec.Client]
		if !ok {
			return nil, bad("client %q is not a client of the workspace; add it under clients.", spec.Client)
		}
		s.ClientID = &id
	}
	if spec.Timezone != "" {
		if _, err := apikit.LoadTimezone(spec.Timezone); err != nil {
			return nil, bad("timezone: %s.", err)
		}
		s.Timezone = spec.Timezone
	}
	transport := spec.Transport
	if transport == "" {
		transport = TransportSandbox
	}
	kind, ok := KindOf(transport)
	if !ok {
		return nil, bad("transport %q is not one of %s.", spec.Transport, Listing(KindNames()))
	}
	if kind.Channel != "" && kind.Channel != s.Channel {
		return nil, bad("transport %s is for %s senders, and this one is %s.", transport, kind.Channel, s.Channel)
	}
	set, err := settingsOf(spec.Sections)
	if err != nil {
		return nil, bad("%v.", err)
	}
	if err := kind.CheckSections(set); err != nil {
		return nil, bad("%v.", err)
	}
	if err := kind.Check(set); err != nil {
		return nil, bad("%v.", err)
	}
	s.Transport, s.Settings = transport, set
	switch spec.Status {
	case "":
	case Active, Paused:
		s.Status = spec.Status
	default:
		return nil, bad("status %q is not active or paused.", spec.Status)
	}
	if spec.MonthlyCost < 0 || math.IsNaN(spec.MonthlyCost) || math.IsInf(spec.MonthlyCost, 0) {
		return nil, bad("monthly_cost must be 0 or more.")
	}
	s.MonthlyCost = math.Round(spec.MonthlyCost*100) / 100
	s.Schedule = DefaultSchedule()
	if spec.Schedule != nil {
		sch, err := ParseSchedule(spec.Schedule)
		if err != nil {
			return nil, bad("%v.", err)
		}
		s.Schedule = sch
	}
	s.Caps = Caps{}
	for _, k := range slices.Sorted(maps.Keys(spec.Caps)) {
		v := spec.Caps[k]
		if k == InviteWeek {
			if s.Channel != LinkedIn {
				return nil, bad("invite_week is a LinkedIn cap.")
			}
			if v < 0 || v > CeilingInviteWeek {
				return nil, bad("invite_week %d is above the platform ceiling of %d invitations in 7 days.", v, CeilingInviteWeek)
			}
			s.Caps[k] = v
			continue
		}
		a := Action(k)
		if !a.Valid() {
			return nil, bad("caps has unknown action %q; the actions are %s.", k, Listing(append(ActionNames(), InviteWeek)))
		}
		if a.Channel() != s.Channel {
			return nil, bad("cap %s is not an action of a %s sender.", k, s.Channel)
		}
		if v < 0 || v > Ceilings[a] {
			return nil, bad("cap %s: %d is above the platform ceiling of %d a day; no configuration can exceed it.", k, v, Ceilings[a])
		}
		s.Caps[k] = v
	}
	// Every cap of the channel is stored, defaults filled in, so that the
	// sender view shows what applies.
	for _, a := range ActionsOf(s.Channel) {
		s.Caps[string(a)] = s.Caps.Daily(a)
	}
	if s.Channel == LinkedIn {
		s.Caps[InviteWeek] = s.Caps.Week()
	}
	if w := spec.Warmup; w != nil {
		if _, err := time.Parse(time.DateOnly, w.Start); err != nil {
			return nil, bad("warmup start %q is not a date (YYYY-MM-DD).", w.Start)
		}
		if w.From < 0 || w.Step < 0 {
			return nil, bad("warmup from and step must be 0 or more.")
		}
		if w.From == 0 && w.Step == 0 {
			return nil, bad("a warm-up with from 0 and step 0 would never send; leave warmup out or give from or step.")
		}
		s.Warmup = &Warmup{Start: w.Start, From: w.From, Step: w.Step}
	}
	g, err := buildGuards(spec.GuardSettings, s.Channel, o.Holidays)
	if err != nil {
		return nil, bad("%v.", err)
	}
	s.Guards = g
	return s, nil
}

// Apply creates or updates the owner's senders by name, inside the
// transaction ctx carries, and returns one line per change. A sender the
// specs do not name is kept as it is.
// Returns E_PAYLOAD_INVALID for an invalid spec; nothing is changed then.
func (svc *Service) Apply(ctx context.Context, o Owner, specs []Spec) ([]string, error) {
	built := make([]*Sender, len(specs))
	seen := map[string]bool{}
	for i, spec := range specs {
		s, err := spec.build(o)
		if err != nil {
			return nil, err
		}
		if seen[s.Name] {
			return nil, apikit.Invalid(fmt.Sprintf("Sender %q is listed twice.", s.Name), "List each sender once.")
		}
		seen[s.Name] = true
		built[i] = s
	}
	var changes []string
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		now := db.Now(ctx, svc.clock)
		for _, s := range built {
			old, err := svc.store.ByName(ctx, o.WorkspaceID, s.Name)
			if db.IsNoRows(err) {
				s.ID, s.WorkspaceID, s.CreatedAt, s.UpdatedAt = apikit.NewID(), o.WorkspaceID, now, now
				if err := svc.store.Save(ctx, s, true); err != nil {
					return err
				}
				changes = append(changes, fmt.Sprintf("sender %s added (%s)", s.Name, s.Channel))
				continue
			} else if err != nil {
				return err
			}
			if old.Channel != s.Channel {
				return apikit.Invalid(fmt.Sprintf("Sender %q is a %s sender; its channel cannot change to %s.", s.Name, old.Channel, s.Channel),
					"Add a new sender with another name for the other channel.")
			}
			fields := changedFields(old, s)
			if len(fields) == 0 {
				continue
			}
			// Configuration changes; identity, health and history stay.
			old.ClientID, old.Address, old.Timezone, old.Transport, old.Status = s.ClientID, s.Address, s.Timezone, s.Transport, s.Status
			old.Premium, old.MonthlyCost, old.Schedule, old.Caps, old.Warmup = s.Premium, s.MonthlyCost, s.Schedule, s.Caps, s.Warmup
			old.Settings, old.Guards = s.Settings, s.Guards
			old.UpdatedAt = now
			if err := svc.store.Save(ctx, old, false); err != nil {
				return err
			}
			changes = append(changes, fmt.Sprintf("sender %s updated (%s)", s.Name, strings.Join(fields, ", ")))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, s := range built {
		for _, name := range s.SecretNames() {
			if _, ok := os.LookupEnv(name); !ok {
				changes = append(changes, fmt.Sprintf("warning: sender %s needs the environment variable %s, which is not set here; "+
					"set it where leadline serve and leadline work run (until then the sender's health shows credentials_missing)", s.Name, name))
			}
		}
	}
	return changes, nil
}

func changedFields(a, b *Sender) []string {
	var out []string
	add := func(name string, changed bool) {
		if changed {
			out = append(out, name)
		}
	}
	add("client", deref(a.ClientID) != deref(b.ClientID))
	add("address", deref(a.Address) != deref(b.Address))
	add("timezone", a.Timezone != b.Timezone)
	add("transport", a.Transport != b.Transport)
	add("settings", !a.Settings.Equal(b.Settings))
	add("status", a.Status != b.Status)
	add("premium", a.Premium != b.Premium)
	add("monthly_cost", a.MonthlyCost != b.MonthlyCost)
	add("schedule", !maps.EqualFunc(a.Schedule, b.Schedule, slices.Equal))
	add("caps", !maps.Equal(a.Caps, b.Caps))
	add("guards", !reflect.DeepEqual(a.Guards, b.Guards))
	add("warmup", (a.Warmup == nil) != (b.Warmup == nil) || (a.Warmup != nil && *a.Warmup != *b.Warmup))
	return out
}

// settingsOf turns a spec's sections, as a setup file or a program gives
// them, into settings.
func settingsOf(sections map[string]any) (Settings, error) {
	set := Settings{}
	for name, v := range sections {
		if v == nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if string(b) != "null" {
			set[name] = b
		}
	}
	return set, nil
}
