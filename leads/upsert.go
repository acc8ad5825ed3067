package leads

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/workspace"
)

// field describes one text field of the lead input and how an update
// treats it.
type field struct {
	name     string
	in       func(*LeadInput) **string
	lead     func(*Lead) **string
	fillOnly bool     // filled only when empty, never overwritten
	unique   matchKey // a unique identity: another lead may already hold it
	fold     bool     // compared case-insensitively
}

// fields lists the input's text fields in the order responses name them.
var fields = []field{
	{name: "client_id", in: func(i *LeadInput) **string { return &i.ClientID }, lead: func(l *Lead) **string { return &l.ClientID }, fillOnly: true},
	{name: "list_id", in: func(i *LeadInput) **string { return &i.ListID }, lead: func(l *Lead) **string { return &l.ListID }},
	{name: "stage_id", in: func(i *LeadInput) **string { return &i.StageID }, lead: func(l *Lead) **string { return &l.StageID }},
	{name: "email_work", in: func(i *LeadInput) **string { return &i.EmailWork }, lead: func(l *Lead) **string { return &l.EmailWork }, fillOnly: true, unique: keyEmailWork, fold: true},
	{name: "email_personal", in: func(i *LeadInput) **string { return &i.EmailPersonal }, lead: func(l *Lead) **string { return &l.EmailPersonal }, fillOnly: true, unique: keyEmailPersonal, fold: true},
	{name: "public_identifier", in: func(i *LeadInput) **string { return &i.PublicIdentifier }, lead: func(l *Lead) **string { return &l.PublicIdentifier }, fillOnly: true},
	{name: "linkedin_id", in: func(i *LeadInput) **string { return &i.LinkedInID }, lead: func(l *Lead) **string { return &l.LinkedInID }, unique: keyLinkedInID},
	{name: "provider_id", in: func(i *LeadInput) **string { return &i.ProviderID }, lead: func(l *Lead) **string { return &l.ProviderID }, unique: keyProviderID},
	{name: "name", in: func(i *LeadInput) **string { return &i.Name }, lead: func(l *Lead) **string { return &l.Name }},
	{name: "company", in: func(i *LeadInput) **string { return &i.Company }, lead: func(l *Lead) **string { return &l.Company }},
	{name: "headline", in: func(i *LeadInput) **string { return &i.Headline }, lead: func(l *Lead) **string { return &l.Headline }},
	{name: "location", in: func(i *LeadInput) **string { return &i.Location }, lead: func(l *Lead) **string { return &l.Location }},
	{name: "source", in: func(i *LeadInput) **string { return &i.Source }, lead: func(l *Lead) **string { return &l.Source }},
}

// matchOrder is the spec's matching order. The public identifier is a last
// resort, used only when none of the four is sent, so that re-sending a
// lead known only by its LinkedIn URL does not create it twice.
var matchOrder = []matchKey{keyLinkedInID, keyProviderID, keyEmailWork, keyEmailPersonal}

func (in *LeadInput) value(k matchKey) *string {
	switch k {
	case keyLinkedInID:
		return in.LinkedInID
	case keyProviderID:
		return in.ProviderID
	case keyEmailWork:
		return in.EmailWork
	case keyEmailPersonal:
		return in.EmailPersonal
	default:
		return in.PublicIdentifier
	}
}

// normalize trims every text field, drops empty ones (an empty string or
// null counts as left out), derives the public identifier from a LinkedIn
// URL and checks the bounds (checkLimits) and formats.
func normalize(in LeadInput) (LeadInput, error) {
	if err := checkLimits(&in); err != nil {
		return in, err
	}
	if err := apikit.CheckText("", in); err != nil {
		return in, err
	}
	for _, f := range fields {
		p := f.in(&in)
		if *p != nil {
			if v := strings.TrimSpace(**p); v != "" {
				*p = &v
			} else {
				*p = nil
			}
		}
	}
	if in.LinkedInURL != nil {
		if v := strings.TrimSpace(*in.LinkedInURL); v != "" {
			id, err := publicIdentifierOf(v)
			if err != nil {
				return in, err
			}
			if in.PublicIdentifier != nil && !strings.EqualFold(*in.PublicIdentifier, id) {
				return in, apikit.Invalid(fmt.Sprintf("linkedin_url names %q but public_identifier is %q.", id, *in.PublicIdentifier),
					"Send only one of them, or make them agree.")
			}
			in.PublicIdentifier = &id
		}
		in.LinkedInURL = nil
	}
	if in.PublicIdentifier != nil {
		v := strings.ToLower(strings.Trim(*in.PublicIdentifier, "/"))
		in.PublicIdentifier = &v
	}
	for _, e := range []struct {
		name string
		v    *string
	}{{"email_work", in.EmailWork}, {"email_personal", in.EmailPersonal}} {
		if e.v != nil && !validEmail(*e.v) {
			return in, apikit.Invalid(fmt.Sprintf("%s %q is not an email address.", e.name, *e.v), "Send an address like ann@example.com, or leave the field out.")
		}
	}
	for _, r := range []struct {
		name string
		v    *string
	}{{"client_id", in.ClientID}, {"list_id", in.ListID}, {"stage_id", in.StageID}} {
		if r.v != nil && !apikit.ValidID(*r.v) {
			return in, apikit.Invalid(fmt.Sprintf("%s %q is not an id (a lower-case uuid).", r.name, *r.v), "Use an id from GET /v1/me.")
		}
	}
	if err := checkCustomKeys(in.Custom); err != nil {
		return in, err
	}
	return in, nil
}

func validEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && domain != "" && !strings.ContainsAny(s, " \t\r\n<>,;") && !strings.Contains(domain, "@")
}

// publicIdentifierOf takes the vanity name out of a linkedin.com/in/ URL.
func publicIdentifierOf(raw string) (string, error) {
	bad := apikit.Invalid(fmt.Sprintf("linkedin_url %q is not a LinkedIn profile URL.", raw),
		"Send a URL like https://www.linkedin.com/in/jane-doe, or public_identifier instead.")
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", bad
	}
	host := strings.ToLower(u.Hostname())
	if host != "linkedin.com" && !strings.HasSuffix(host, ".linkedin.com") {
		return "", bad
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || parts[0] != "in" || parts[1] == "" {
		return "", bad
	}
	return strings.ToLower(parts[1]), nil
}

// identityOf lists what to match an input on, in order.
func identityOf(in *LeadInput) []matchKey {
	var keys []matchKey
	for _, k := range matchOrder {
		if in.value(k) != nil {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 && in.PublicIdentifier != nil {
		keys = append(keys, keyPublicIdentifier)
	}
	return keys
}

// Upsert creates a lead or updates the one it matches: by LinkedIn id, then
// provider id, then work email, then personal email. Only sent fields
// change; client_id, the emails and public_identifier are filled only when
// empty, and a different value sent for them is named in UnchangedFields.
//
// Returns E_PAYLOAD_INVALID for bad input or an unknown client, list or
// stage, E_FORBIDDEN for a client outside a scoped key's clients, and
// E_CONFLICT when the input matches a lead the key may not see.
func (s *Service) Upsert(ctx context.Context, p apikit.Principal, in LeadInput) (*Result, error) {
	in, err := prepare(in)
	if err != nil {
		return nil, err
	}
	if err := s.checkRefs(ctx, p, &in); err != nil {
		return nil, err
	}
	// A concurrent create of the same person on another connection can win
	// the race to the unique index; the second attempt then finds its lead.
	var res *Result
	for attempt := 0; ; attempt++ {
		err = s.db.InTx(ctx, func(ctx context.Context) error {
			u, err := s.upsertLead(ctx, p, in)
			if err != nil {
				return err
			}
			d, err := s.detail(ctx, u.lead)
			res = &Result{Lead: d, Created: u.created, UnchangedFields: u.unchanged}
			return err
		})
		if attempt == 0 && db.IsUniqueViolation(err) {
			continue
		}
		break
	}
	if err != nil {
		return nil, db.Conflict(err, "Another lead already holds one of these identifiers.", "Look the lead up with GET /v1/leads?email=… or public_identifier=…, and update that one.")
	}
	return res, nil
}

// prepare normalizes an input to create or update a lead by, and checks
// that it names someone to match.
func prepare(in LeadInput) (LeadInput, error) {
	in, err := normalize(in)
	if err != nil {
		return in, err
	}
	if len(identityOf(&in)) == 0 {
		return in, apikit.Invalid("The lead has no identity to match it by.",
			"Send at least one of linkedin_id, provider_id, email_work, email_personal, public_identifier or linkedin_url.")
	}
	return in, nil
}

// upserted is what upsertLead did: the lead, whether it was created, and
// for an update whether anything changed and which sent fields were kept.
type upserted struct {
	lead      *Lead
	created   bool
	changed   bool
	unchanged []string
}

// upsertLead is the create-or-update rule for one prepared input whose
// references were checked: Upsert runs it once per call, a Batch once per
// row, on the same store interface.
func (s *Service) upsertLead(ctx context.Context, p apikit.Principal, in LeadInput) (upserted, error) {
	var match *Lead
	for _, k := range identityOf(&in) {
		l, err := s.store.FindBy(ctx, p.WorkspaceID, k, *in.value(k))
		if db.IsNoRows(err) {
			continue
		} else if err != nil {
			return upserted{}, err
		}
		match = l
		break
	}
	if match == nil {
		l, err := s.create(ctx, p, in)
		return upserted{lead: l, created: true, unchanged: []string{}}, err
	}
	if !p.SeesClient(deref(match.ClientID)) {
		return upserted{}, apikit.Conflict("This lead already exists in the workspace, outside this key's clients.",
			"Ask a workspace-wide key to assign the lead to your client; nothing was created or changed.")
	}
	changed, unchanged, err := s.update(ctx, match, in)
	return upserted{lead: match, changed: len(changed) > 0, unchanged: unchanged}, err
}

// Patch updates a lead by id with the same partial-update rules as Upsert.
// Returns E_NOT_FOUND if the lead is not visible to the principal.
func (s *Service) Patch(ctx context.Context, p apikit.Principal, id string, in LeadInput) (*Result, error) {
	in, err := normalize(in)
	if err != nil {
		return nil, err
	}
	var res *Result
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		l, err := s.visible(ctx, p, id)
		if err != nil {
			return err
		}
		if err := s.checkRefs(ctx, p, &in); err != nil {
			return err
		}
		_, unchanged, err := s.update(ctx, l, in)
		if err != nil {
			return err
		}
		d, err := s.detail(ctx, l)
		res = &Result{Lead: d, UnchangedFields: unchanged}
		return err
	})
	if err != nil {
		return nil, db.Conflict(err, "Another lead already holds one of these identifiers.", "Look the lead up with GET /v1/leads and update that one.")
	}
	return res, nil
}

// checkRefs checks that the client, list and stage exist in the workspace,
// and that the client is in a scoped key's scope.
func (s *Service) checkRefs(ctx context.Context, p apikit.Principal, in *LeadInput) error {
	for _, r := range []struct {
		kind workspace.Kind
		name string
		id   *string
	}{{workspace.Clients, "client_id", in.ClientID}, {workspace.Lists, "list_id", in.ListID}, {workspace.Stages, "stage_id", in.StageID}} {
		if r.id == nil {
			continue
		}
		if err := s.checkRef(ctx, p, r.kind, r.name, *r.id); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) checkRef(ctx context.Context, p apikit.Principal, kind workspace.Kind, name, id string) error {
	found, err := s.catalog.Lookup(ctx, p.WorkspaceID, kind, []string{id})
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return apikit.Invalid(fmt.Sprintf("%s %s is not one of this workspace's %s.", name, id, kind),
			fmt.Sprintf("Use one of the %s ids listed by GET /v1/me.", kind))
	}
	if kind == workspace.Clients && !p.SeesClient(id) {
		return apikit.Forbidden(fmt.Sprintf("Client %s is outside this key's client scope.", id),
			"Use one of the clients listed by GET /v1/me.")
	}
	return nil
}

func (s *Service) create(ctx context.Context, p apikit.Principal, in LeadInput) (*Lead, error) {
	if in.ClientID == nil && p.Scoped() {
		if len(p.ClientIDs) > 1 {
			return nil, apikit.Invalid("client_id is required: this key is scoped to several clients.",
				"Send client_id with one of the clients listed by GET /v1/me.")
		}
		in.ClientID = &p.ClientIDs[0]
	}
	now := db.Now(ctx, s.clock)
	l := &Lead{ID: apikit.NewID(), WorkspaceID: p.WorkspaceID, Custom: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	var sent []string
	for _, f := range fields {
		if v := *f.in(&in); v != nil {
			*f.lead(l) = v
			sent = append(sent, f.name)
		}
	}
	for k, v := range in.Custom {
		if v != nil {
			l.Custom[k] = v
		}
	}
	if len(l.Custom) > 0 {
		if err := checkCustom(l.Custom); err != nil {
			return nil, err
		}
		sent = append(sent, "custom")
	}
	reason, err := s.doNotContactReason(ctx, l)
	if err != nil {
		return nil, err
	}
	if reason != "" {
		l.DoNotContact, l.DoNotContactAt, l.DoNotContactReason = true, &now, &reason
	}
	if err := s.store.Insert(ctx, l); err != nil {
		return nil, err
	}
	evs := []events.Event{leadEvent(l.ID, EventCreated, map[string]any{"fields": sent})}
	evs[0].ClientID = deref(l.ClientID)
	if reason != "" {
		evs = append(evs, leadEvent(l.ID, EventSuppressed, map[string]any{"reason": reason}))
	}
	if err := s.emit(ctx, p.WorkspaceID, evs...); err != nil {
		return nil, err
	}
	return l, nil
}

// doNotContactReason says which do-not-contact entry or blacklist entry a
// new lead matches, or "".
func (s *Service) doNotContactReason(ctx context.Context, l *Lead) (string, error) {
	var emails []string
	for _, e := range []*string{l.EmailWork, l.EmailPersonal} {
		if e != nil {
			emails = append(emails, strings.ToLower(*e))
		}
	}
	for _, c := range []struct {
		kind   string
		values []string
	}{
		{SuppressEmail, emails},
		{SuppressLinkedInID, nonNil(l.LinkedInID)},
		{SuppressPublicIdentifier, nonNil(l.PublicIdentifier)},
	} {
		hit, err := s.store.SuppressionHit(ctx, l.WorkspaceID, c.kind, c.values)
		if err != nil || hit != "" {
			return "do-not-contact " + c.kind + " " + hit, err
		}
	}
	linkedin := append(nonNil(l.LinkedInID), nonNil(l.PublicIdentifier)...)
	hit, err := s.catalog.BlacklistHit(ctx, l.WorkspaceID, deref(l.Company), emails, linkedin)
	if err != nil || hit == "" {
		return "", err
	}
	return "blacklist " + hit, nil
}

func nonNil(vals ...*string) []string {
	var out []string
	for _, v := range vals {
		if v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// update applies in to l under the partial-update rules, saves l when
// anything changed, writes the events and returns the changed and the
// unchanged fields.
func (s *Service) update(ctx context.Context, l *Lead, in LeadInput) (changed, unchanged []string, err error) {
	before := *l
	before.Custom = maps.Clone(l.Custom)
	unchanged = []string{}
	for _, f := range fields {
		v := *f.in(&in)
		if v == nil {
			continue
		}
		cur := f.lead(l)
		same := *cur != nil && (**cur == *v || (f.fold && strings.EqualFold(**cur, *v)))
		switch {
		case same:
		case f.fillOnly && *cur != nil:
			unchanged = append(unchanged, f.name)
		default:
			if f.unique != "" {
				other, err := s.store.FindBy(ctx, l.WorkspaceID, f.unique, *v)
				if err != nil && !db.IsNoRows(err) {
					return nil, nil, err
				}
				if other != nil && other.ID != l.ID {
					if f.fillOnly {
						// Filling would make two leads share one identity: keep
						// the field empty and say so.
						unchanged = append(unchanged, f.name)
						continue
					}
					return nil, nil, apikit.Conflict(fmt.Sprintf("Another lead already has this %s.", f.name),
						"Update that lead instead, or send a different value.")
				}
			}
			*cur = v
			changed = append(changed, f.name)
		}
	}
	if l.Custom == nil {
		l.Custom = map[string]any{}
	}
	customChanged := false
	for k, v := range in.Custom {
		old, had := l.Custom[k]
		switch {
		case v == nil && had:
			delete(l.Custom, k)
			customChanged = true
		case v != nil && (!had || !reflect.DeepEqual(old, v)):
			l.Custom[k] = v
			customChanged = true
		}
	}
	if customChanged {
		if err := checkCustom(l.Custom); err != nil {
			return nil, nil, err
		}
		changed = append(changed, "custom")
	}
	if len(changed) == 0 {
		return nil, unchanged, nil
	}
	l.UpdatedAt = db.Now(ctx, s.clock)
	if err := s.store.Update(ctx, l); err != nil {
		return nil, nil, err
	}
	if slices.Contains(changed, "client_id") {
		if err := s.clientChanged(ctx, l); err != nil {
			return nil, nil, err
		}
	}
	var evs []events.Event
	if slices.Contains(changed, "stage_id") {
		evs = append(evs, leadEvent(l.ID, EventStageChanged, map[string]any{"from": before.StageID, "to": l.StageID}))
	}
	if slices.Contains(changed, "list_id") {
		evs = append(evs, leadEvent(l.ID, EventListChanged, map[string]any{"from": before.ListID, "to": l.ListID}))
	}
	other := slices.DeleteFunc(slices.Clone(changed), func(f string) bool { return f == "stage_id" || f == "list_id" })
	if len(other) > 0 {
		evs = append(evs, leadEvent(l.ID, EventUpdated, map[string]any{"fields": other}))
	}
	return changed, unchanged, s.emit(ctx, l.WorkspaceID, evs...)
}
