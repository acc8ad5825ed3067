package workspace

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// Setup is the declarative form of workspaces that 'leadline apply' reads.
// Applying it creates or updates workspaces by name; applying it again
// changes nothing.
type Setup struct {
	Workspaces []WorkspaceSpec `yaml:"workspaces" json:"workspaces"`
}

// WorkspaceSpec describes one workspace. Members, clients, stages, tags,
// lists and blacklist entries not named are kept as they are: a setup file
// adds and updates, it never deletes (a member leaves with active: false).
type WorkspaceSpec struct {
	Name      string        `yaml:"name"`
	Timezone  string        `yaml:"timezone"`
	Plan      string        `yaml:"plan"`
	Suspended *bool         `yaml:"suspended"`
	Members   []MemberSpec  `yaml:"members"`
	Clients   []string      `yaml:"clients"`
	Stages    []string      `yaml:"stages"`
	Tags      []string      `yaml:"tags"`
	Lists     []string      `yaml:"lists"`
	Blacklist BlacklistSpec `yaml:"blacklist"`
}

// MemberSpec is a member by email. Active defaults to true.
type MemberSpec struct {
	Email  string      `yaml:"email"`
	Role   apikit.Role `yaml:"role"`
	Active *bool       `yaml:"active"`
}

// BlacklistSpec lists companies, email domains and LinkedIn identifiers
// that are never contacted.
type BlacklistSpec struct {
	Companies []string `yaml:"companies"`
	Domains   []string `yaml:"domains"`
	LinkedIn  []string `yaml:"linkedin"`
}

func (ws *WorkspaceSpec) validate() error {
	if strings.TrimSpace(ws.Name) == "" {
		return apikit.Invalid("A workspace has no name.", "Give every workspace a name.")
	}
	// Every value of a workspace is one line: names, emails, blacklist
	// entries and the booking secrets alike.
	if err := apikit.CheckText("", *ws); err != nil {
		return apikit.Prefixed(fmt.Sprintf("Workspace %q: ", ws.Name), err)
	}
	if ws.Timezone != "" {
		if _, err := apikit.LoadTimezone(ws.Timezone); err != nil {
			return apikit.Invalid(fmt.Sprintf("Workspace %q: timezone: %s.", ws.Name, err),
				"Use an IANA timezone name such as Europe/Berlin or America/New_York.")
		}
	}
	if ws.Plan != "" && ws.Plan != apikit.PlanStarter && ws.Plan != apikit.PlanPro {
		return apikit.Invalid(fmt.Sprintf("Workspace %q: unknown plan %q.", ws.Name, ws.Plan), "Use starter or pro.")
	}
	seen := map[string]bool{}
	for _, m := range ws.Members {
		email := strings.ToLower(strings.TrimSpace(m.Email))
		if email == "" || !strings.Contains(email, "@") {
			return apikit.Invalid(fmt.Sprintf("Workspace %q: member email %q is not an email address.", ws.Name, m.Email), "Give each member an email address.")
		}
		if seen[email] {
			return apikit.Invalid(fmt.Sprintf("Workspace %q: member %s is listed twice.", ws.Name, m.Email), "List each member once.")
		}
		seen[email] = true
		if !m.Role.Valid() {
			return apikit.Invalid(fmt.Sprintf("Workspace %q: member %s has unknown role %q.", ws.Name, m.Email, m.Role),
				"Use owner, manager, member or client_viewer.")
		}
	}
	for _, names := range [][]string{ws.Clients, ws.Stages, ws.Tags, ws.Lists} {
		for _, n := range names {
			if strings.TrimSpace(n) == "" {
				return apikit.Invalid(fmt.Sprintf("Workspace %q: an empty name in clients, stages, tags or lists.", ws.Name), "Remove the empty entry.")
			}
		}
	}
	for _, bl := range ws.Blacklist.byKind() {
		for _, v := range bl.values {
			if _, err := BlacklistValue(bl.kind, v); err != nil {
				return apikit.Prefixed(fmt.Sprintf("Workspace %q: blacklist: ", ws.Name), err)
			}
		}
	}
	return nil
}

// byKind pairs each kind of entry with the values the spec lists.
func (b BlacklistSpec) byKind() []struct {
	kind   string
	values []string
} {
	return []struct {
		kind   string
		values []string
	}{{BlacklistCompany, b.Companies}, {BlacklistDomain, b.Domains}, {BlacklistLinkedIn, b.LinkedIn}}
}

// Apply creates or updates the workspaces in setup, in one transaction, and
// returns one line per change. Nothing is changed when any part is invalid.
func (s *Service) Apply(ctx context.Context, setup Setup) ([]string, error) {
	for i := range setup.Workspaces {
		if err := setup.Workspaces[i].validate(); err != nil {
			return nil, err
		}
	}
	var changes []string
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		changes = nil
		for _, ws := range setup.Workspaces {
			_, c, err := s.applyOne(ctx, ws)
			if err != nil {
				return err
			}
			changes = append(changes, c...)
		}
		return nil
	})
	return changes, err
}

// ApplyWorkspace creates or updates one workspace as ws describes, inside
// the transaction ctx carries, and returns it with its clients by name and
// one line per change. Areas that a setup file configures under a
// workspace (senders, sequences) apply theirs after it, in the same
// transaction.
// Returns E_PAYLOAD_INVALID for an invalid spec.
func (s *Service) ApplyWorkspace(ctx context.Context, ws WorkspaceSpec) (*Workspace, map[string]string, []string, error) {
	if err := ws.validate(); err != nil {
		return nil, nil, nil, err
	}
	var (
		w       *Workspace
		changes []string
		clients = map[string]string{}
	)
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if w, changes, err = s.applyOne(ctx, ws); err != nil {
			return err
		}
		named, err := s.store.Named(ctx, w.ID, Clients, nil)
		for _, n := range named {
			clients[n.Name] = n.ID
		}
		return err
	})
	return w, clients, changes, err
}

func (s *Service) applyOne(ctx context.Context, ws WorkspaceSpec) (*Workspace, []string, error) {
	now := db.Now(ctx, s.clock)
	var changes []string
	say := func(format string, args ...any) {
		changes = append(changes, fmt.Sprintf("workspace %s: ", ws.Name)+fmt.Sprintf(format, args...))
	}
	w, err := s.store.WorkspaceByName(ctx, ws.Name)
	insert := db.IsNoRows(err)
	if err != nil && !insert {
		return nil, nil, err
	}
	if insert {
		w = &Workspace{ID: apikit.NewID(), Name: ws.Name, Timezone: "UTC", Plan: apikit.PlanStarter, CreatedAt: now}
		say("created")
	}
	before := *w
	if ws.Timezone != "" {
		w.Timezone = ws.Timezone
	}
	if ws.Plan != "" {
		w.Plan = ws.Plan
	}
	if ws.Suspended != nil {
		w.Suspended = *ws.Suspended
	}
	if !insert {
		if w.Timezone != before.Timezone {
			say("timezone %s -> %s", before.Timezone, w.Timezone)
		}
		if w.Plan != before.Plan {
			say("plan %s -> %s", before.Plan, w.Plan)
		}
		if w.Suspended != before.Suspended {
			say("suspended %t -> %t", before.Suspended, w.Suspended)
		}
	}
	if insert || w.Timezone != before.Timezone || w.Plan != before.Plan || w.Suspended != before.Suspended {
		w.UpdatedAt = now
		if err := s.store.SaveWorkspace(ctx, w, insert); err != nil {
			return nil, nil, err
		}
	}

	hadOwner, err := s.hasActiveOwner(ctx, w.ID)
	if err != nil {
		return nil, nil, err
	}
	for _, ms := range ws.Members {
		active := ms.Active == nil || *ms.Active
		m, err := s.store.MemberByEmail(ctx, w.ID, strings.TrimSpace(ms.Email))
		if db.IsNoRows(err) {
			m = &Member{ID: apikit.NewID(), WorkspaceID: w.ID, Email: strings.ToLower(strings.TrimSpace(ms.Email)),
				Role: ms.Role, Active: active, CreatedAt: now, UpdatedAt: now}
			if err := s.store.SaveMember(ctx, m, true); err != nil {
				return nil, nil, err
			}
			say("member %s added as %s%s", m.Email, m.Role, map[bool]string{true: "", false: " (inactive)"}[active])
			continue
		} else if err != nil {
			return nil, nil, err
		}
		if m.Role == ms.Role && m.Active == active {
			continue
		}
		if m.Role != ms.Role {
			say("member %s role %s -> %s", m.Email, m.Role, ms.Role)
		}
		if m.Active != active {
			say("member %s %s", m.Email, map[bool]string{true: "rejoined", false: "left"}[active])
		}
		// Leaving revokes the member's keys. Rejoining revokes any still
		// unrevoked too (left by a version that did not revoke on leave):
		// every key a rejoining member holds was made before they left.
		revoke := m.Active != active
		m.Role, m.Active, m.UpdatedAt = ms.Role, active, now
		if err := s.store.SaveMember(ctx, m, false); err != nil {
			return nil, nil, err
		}
		if revoke {
			ids, err := s.store.RevokeMemberKeys(ctx, m.ID, now)
			if err != nil {
				return nil, nil, err
			}
			if err := s.revoked(ctx, w.ID, m.ID, RevokedMemberLeft, ids...); err != nil {
				return nil, nil, err
			}
			if len(ids) > 0 {
				say("member %s: %d key(s) revoked", m.Email, len(ids))
			}
		}
	}
	if hasOwner, err := s.hasActiveOwner(ctx, w.ID); err != nil {
		return nil, nil, err
	} else if hadOwner && !hasOwner {
		return nil, nil, apikit.Invalid(fmt.Sprintf("Workspace %q would have no active owner: the file demotes or deactivates the last one.", ws.Name),
			"Keep at least one member with role owner and active: true; promote another member to owner first, then change this one.")
	}

	for _, kn := range []struct {
		kind  Kind
		names []string
	}{{Clients, ws.Clients}, {Stages, ws.Stages}, {Tags, ws.Tags}, {Lists, ws.Lists}} {
		names := slices.Compact(slices.Sorted(slices.Values(kn.names)))
		have, err := s.store.NamedByName(ctx, w.ID, kn.kind, names)
		if err != nil {
			return nil, nil, err
		}
		for _, n := range names {
			if slices.ContainsFunc(have, func(h Named) bool { return h.Name == n }) {
				continue
			}
			if err := s.store.InsertNamed(ctx, w.ID, kn.kind, Named{ID: apikit.NewID(), Name: n}, now); err != nil {
				return nil, nil, err
			}
			say("%s %q added", strings.TrimSuffix(string(kn.kind), "s"), n)
		}
	}

	for _, bl := range ws.Blacklist.byKind() {
		for _, v := range bl.values {
			v, _ := BlacklistValue(bl.kind, v) // validate checked it
			added, err := s.store.InsertBlacklist(ctx, &BlacklistEntry{ID: apikit.NewID(), WorkspaceID: w.ID, Kind: bl.kind, Value: v, CreatedAt: now})
			if err != nil {
				return nil, nil, err
			}
			if added {
				say("blacklist %s %q added", bl.kind, v)
			}
		}
	}
	return w, changes, nil
}

// hasActiveOwner reports whether the workspace has an active owner.
func (s *Service) hasActiveOwner(ctx context.Context, workspaceID string) (bool, error) {
	ms, err := s.store.Members(ctx, workspaceID)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(ms, func(m Member) bool { return m.Active && m.Role == apikit.RoleOwner }), nil
}
