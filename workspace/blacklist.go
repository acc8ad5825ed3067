package workspace

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// Managing the blacklist: list, add and remove entries, for managers of
// the whole workspace. The console's settings page and `leadline
// blacklist` call these; a setup file's `blacklist:` adds through the
// same normalisation (BlacklistValue). There is no /v1 route: every GET
// of the API is open to client viewers, and the workspace's blacklist
// names other clients' prospects (docs/DECISIONS.md).

// BlacklistKinds are the kinds of entry, in the order pages list them.
var BlacklistKinds = []string{BlacklistCompany, BlacklistDomain, BlacklistLinkedIn}

// MaxBlacklistValues is how many values one add or remove takes.
const MaxBlacklistValues = 1000

// maxBlacklistValue is the longest value kept, in bytes.
const maxBlacklistValue = 500

// Activity-log kinds of blacklist changes, one event per entry, naming
// the member (none for the setup file and the command line). Webhooks do
// not deliver them.
const (
	EventBlacklistAdded   = "blacklist.added"
	EventBlacklistRemoved = "blacklist.removed"
)

// checkBlacklistKind refuses a kind that is not one of BlacklistKinds.
func checkBlacklistKind(kind string) error {
	if !slices.Contains(BlacklistKinds, kind) {
		return apikit.Invalid(fmt.Sprintf("Unknown blacklist kind %q.", kind), "Use company, domain or linkedin.")
	}
	return nil
}

// BlacklistValue returns v as an entry of kind is kept and matched:
// trimmed and lower-case; a domain without a leading @, a LinkedIn
// profile URL as its public identifier. Returns E_PAYLOAD_INVALID for an
// empty value, one of more than one line, a domain that is not a domain
// name and a LinkedIn identifier with spaces or slashes.
func BlacklistValue(kind, v string) (string, error) {
	if err := checkBlacklistKind(kind); err != nil {
		return "", err
	}
	if err := apikit.CheckText(kind, v); err != nil {
		return "", err
	}
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return "", apikit.Invalid(fmt.Sprintf("An empty %s.", kind), "Remove the empty entry.")
	}
	if len(v) > maxBlacklistValue {
		return "", apikit.Invalid(fmt.Sprintf("%s %.40q… is longer than %d characters.", kind, v, maxBlacklistValue), "Shorten the entry.")
	}
	switch kind {
	case BlacklistDomain:
		v = strings.TrimPrefix(v, "@")
		if !isDomain(v) {
			return "", apikit.Invalid(fmt.Sprintf("%q is not a domain.", v),
				"Give the domain of the email addresses alone, such as example.com: no @ before it, no scheme, path or spaces.")
		}
	case BlacklistLinkedIn:
		if _, rest, ok := strings.Cut(v, "linkedin.com/in/"); ok {
			v, _, _ = strings.Cut(rest, "/")
			v, _, _ = strings.Cut(v, "?")
		}
		if v == "" || strings.ContainsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || r == '/' || r == '?' || r == '#' }) {
			return "", apikit.Invalid(fmt.Sprintf("%q is not a LinkedIn identifier.", v),
				"Give the public identifier (linkedin.com/in/IDENTIFIER, or the whole profile URL) or the member id.")
		}
	}
	return v, nil
}

// isDomain reports whether v is a domain name of two labels or more:
// letters, digits and hyphens, no label empty or starting or ending with
// a hyphen.
func isDomain(v string) bool {
	labels := strings.Split(v, ".")
	if len(v) > 253 || len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		if strings.ContainsFunc(l, func(r rune) bool { return r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			return false
		}
	}
	return true
}

// blacklistValues normalises values of kind with BlacklistValue, in order
// and without repeats. Returns E_PAYLOAD_INVALID for none, too many or an
// invalid value, naming it.
func blacklistValues(kind string, values []string) ([]string, error) {
	if err := checkBlacklistKind(kind); err != nil {
		return nil, err
	}
	if len(values) == 0 {
		return nil, apikit.Invalid("No value was given.", "Give one value or more, one a line.")
	}
	if len(values) > MaxBlacklistValues {
		return nil, apikit.TooMany(fmt.Sprintf("%d values were given; one change takes at most %d.", len(values), MaxBlacklistValues),
			"Split the values over several changes.")
	}
	out := make([]string, 0, len(values))
	for _, v := range values {
		n, err := BlacklistValue(kind, v)
		if err != nil {
			return nil, apikit.Prefixed("Nothing was changed: ", err)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// manageBlacklist refuses a principal below manager or limited to some
// clients: the blacklist holds every client's exclusions.
func manageBlacklist(p apikit.Principal) error {
	if !p.Role.AtLeast(apikit.RoleManager) {
		return apikit.Forbidden(fmt.Sprintf("A %s cannot manage the blacklist.", p.Role), "Ask an owner or a manager of the workspace.")
	}
	if p.Scoped() {
		return apikit.Forbidden("The blacklist applies to every client of the workspace; you are limited to some clients.",
			"Ask a manager of the whole workspace.")
	}
	return nil
}

// BlacklistFilter selects entries: of one kind (all when empty), whose
// value contains Q (compared lower-case), a page at a time.
type BlacklistFilter struct {
	Kind          string
	Q             string
	Limit, Offset int
}

// ListBlacklist returns a page of the workspace's blacklist, by kind and
// value, each entry with the email of the member who added it (empty for
// the setup file and the command line).
//
// Returns E_FORBIDDEN below manager or for a principal limited to some
// clients, E_PAYLOAD_INVALID for an unknown kind or a bad page.
func (s *Service) ListBlacklist(ctx context.Context, p apikit.Principal, f BlacklistFilter) (apikit.Page[BlacklistEntry], error) {
	var page apikit.Page[BlacklistEntry]
	if err := manageBlacklist(p); err != nil {
		return page, err
	}
	if f.Kind != "" {
		if err := checkBlacklistKind(f.Kind); err != nil {
			return page, err
		}
	}
	if err := apikit.CheckText("q", f.Q); err != nil {
		return page, err
	}
	if err := apikit.CheckPage(&f.Limit, f.Offset); err != nil {
		return page, err
	}
	f.Q = strings.ToLower(strings.TrimSpace(f.Q))
	rows, total, err := s.store.Blacklist(ctx, p.WorkspaceID, f)
	if err != nil {
		return page, err
	}
	if err := s.addedBy(ctx, p.WorkspaceID, rows); err != nil {
		return page, err
	}
	return apikit.NewPage(rows, total, f.Limit, f.Offset), nil
}

// addedBy fills the entries' MemberEmail.
func (s *Service) addedBy(ctx context.Context, workspaceID string, rows []BlacklistEntry) error {
	if !slices.ContainsFunc(rows, func(r BlacklistEntry) bool { return r.MemberID != "" }) {
		return nil
	}
	ms, err := s.store.Members(ctx, workspaceID)
	if err != nil {
		return err
	}
	for i := range rows {
		for _, m := range ms {
			if m.ID == rows[i].MemberID {
				rows[i].MemberEmail = m.Email
			}
		}
	}
	return nil
}

// BlacklistAdded is what an add did: the entries it added, and the values
// that were listed already (left as they were).
type BlacklistAdded struct {
	Added         []BlacklistEntry `json:"added"`
	AlreadyListed []string         `json:"already_listed"`
}

// AddBlacklist lists values under kind, each normalised as BlacklistValue
// says; a value listed already is left as it is and reported. It checks
// future sends and enrollments only: what the blacklist already stopped
// stays stopped, and leads it now matches are stopped by the runner's
// next check of them.
//
// Returns E_FORBIDDEN below manager or for a principal limited to some
// clients, E_PAYLOAD_INVALID (nothing added) for an unknown kind, no
// value or an invalid one, E_TOO_MANY for more than MaxBlacklistValues.
func (s *Service) AddBlacklist(ctx context.Context, p apikit.Principal, kind string, values []string) (*BlacklistAdded, error) {
	if err := manageBlacklist(p); err != nil {
		return nil, err
	}
	vals, err := blacklistValues(kind, values)
	if err != nil {
		return nil, err
	}
	var res *BlacklistAdded
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		res = &BlacklistAdded{Added: []BlacklistEntry{}, AlreadyListed: []string{}}
		now := db.Now(ctx, s.clock)
		var evs []events.Event
		for _, v := range vals {
			e := BlacklistEntry{ID: apikit.NewID(), WorkspaceID: p.WorkspaceID, Kind: kind, Value: v, MemberID: p.MemberID, CreatedAt: now}
			added, err := s.store.InsertBlacklist(ctx, &e)
			if err != nil {
				return err
			}
			if !added {
				res.AlreadyListed = append(res.AlreadyListed, v)
				continue
			}
			e.MemberEmail = p.MemberEmail
			res.Added = append(res.Added, e)
			evs = append(evs, blacklistEvent(p, EventBlacklistAdded, e))
		}
		return s.events.EmitMany(ctx, evs)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// BlacklistRemoval names the entries to remove: by id, or by kind and
// value (normalised as BlacklistValue says).
type BlacklistRemoval struct {
	IDs    []string
	Kind   string
	Values []string
}

// RemoveBlacklist removes entries and returns them. Only future checks
// change: enrollments and sends the entries stopped stay stopped (a
// member resumes what should go on).
//
// Returns E_FORBIDDEN below manager or for a principal limited to some
// clients, E_PAYLOAD_INVALID for nothing named, ids and values both
// named, or an invalid value, and E_NOT_FOUND (nothing removed) when an
// id or a value is not on the workspace's blacklist.
func (s *Service) RemoveBlacklist(ctx context.Context, p apikit.Principal, r BlacklistRemoval) ([]BlacklistEntry, error) {
	if err := manageBlacklist(p); err != nil {
		return nil, err
	}
	if len(r.IDs) > 0 && len(r.Values) > 0 {
		return nil, apikit.Invalid("Both ids and values were given.", "Name the entries by id, or by kind and value, not both.")
	}
	var vals []string
	if len(r.IDs) == 0 {
		var err error
		if vals, err = blacklistValues(r.Kind, r.Values); err != nil {
			return nil, err
		}
	} else if len(r.IDs) > MaxBlacklistValues {
		return nil, apikit.TooMany(fmt.Sprintf("%d ids were given; one change takes at most %d.", len(r.IDs), MaxBlacklistValues),
			"Split the ids over several changes.")
	}
	var gone []BlacklistEntry
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		var missing []string
		if vals != nil {
			if gone, err = s.store.BlacklistByValues(ctx, p.WorkspaceID, r.Kind, vals); err != nil {
				return err
			}
			for _, v := range vals {
				if !slices.ContainsFunc(gone, func(e BlacklistEntry) bool { return e.Value == v }) {
					missing = append(missing, r.Kind+" "+v)
				}
			}
		} else {
			ids := slices.DeleteFunc(slices.Clone(r.IDs), func(id string) bool {
				if !apikit.ValidID(id) {
					missing = append(missing, id)
					return true
				}
				return false
			})
			if gone, err = s.store.BlacklistByIDs(ctx, p.WorkspaceID, ids); err != nil {
				return err
			}
			for _, id := range ids {
				if !slices.ContainsFunc(gone, func(e BlacklistEntry) bool { return e.ID == id }) {
					missing = append(missing, id)
				}
			}
		}
		if len(missing) > 0 {
			return &apikit.Error{Code: apikit.ENotFound, Message: fmt.Sprintf("Not on the blacklist: %s. Nothing was removed.", strings.Join(missing, ", ")),
				Remedy: "List the entries (`leadline blacklist list --workspace NAME` or Settings › Blacklist) for their ids and values."}
		}
		ids := make([]string, len(gone))
		evs := make([]events.Event, len(gone))
		for i, e := range gone {
			ids[i] = e.ID
			evs[i] = blacklistEvent(p, EventBlacklistRemoved, e)
		}
		if err := s.store.DeleteBlacklist(ctx, p.WorkspaceID, ids); err != nil {
			return err
		}
		return s.events.EmitMany(ctx, evs)
	})
	if err != nil {
		return nil, err
	}
	return gone, nil
}

func blacklistEvent(p apikit.Principal, kind string, e BlacklistEntry) events.Event {
	return events.Event{WorkspaceID: p.WorkspaceID, Kind: kind, MemberID: p.MemberID, KeyID: p.KeyID,
		Data: map[string]any{"entry_id": e.ID, "kind": e.Kind, "value": e.Value}}
}
