package leads

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// MaxSuppressionEntries is how many entries one suppressions call takes.
const MaxSuppressionEntries = 5000

// SuppressionsInput adds workspace-wide do-not-contact entries.
type SuppressionsInput struct {
	Emails            []string `json:"emails,omitempty" doc:"Email addresses, matched case-insensitively against work and personal emails."`
	LinkedInIDs       []string `json:"linkedin_ids,omitempty" doc:"LinkedIn member ids."`
	PublicIdentifiers []string `json:"public_identifiers,omitempty" doc:"LinkedIn vanity names (linkedin.com/in/<name>)."`
	LeadIDs           []string `json:"lead_ids,omitempty" format:"uuid" doc:"Existing leads to mark do-not-contact."`
	Reason            string   `json:"reason,omitempty" maxLength:"500" doc:"Why, kept with each entry."`
}

// SuppressionsResult counts what a suppressions call did.
type SuppressionsResult struct {
	Added           int `json:"added" doc:"Entries that are new."`
	AlreadyPresent  int `json:"already_present" doc:"Entries that were already on the do-not-contact list."`
	LeadsSuppressed int `json:"leads_suppressed" doc:"Existing leads newly marked do-not-contact by this call."`
}

// AddSuppressions adds do-not-contact entries for people who may not be
// leads yet; leads created later that match one are stored as
// do-not-contact, and existing matching leads are marked now.
//
// Entries are workspace-wide, so a client-scoped key gets E_FORBIDDEN.
// Returns E_TOO_MANY for more than 5000 entries and E_PAYLOAD_INVALID for
// a malformed entry or an unknown lead id; nothing is changed then.
func (s *Service) AddSuppressions(ctx context.Context, p apikit.Principal, in SuppressionsInput) (*SuppressionsResult, error) {
	if p.Scoped() {
		return nil, apikit.Forbidden("Do-not-contact entries apply to the whole workspace; this key is limited to some clients.",
			"Suppress your own leads one by one with POST /v1/leads/{id}/suppress, or use a workspace-wide key.")
	}
	if err := apikit.CheckText("", in); err != nil {
		return nil, err
	}
	total := len(in.Emails) + len(in.LinkedInIDs) + len(in.PublicIdentifiers) + len(in.LeadIDs)
	if total == 0 {
		return nil, apikit.Invalid("No entry was sent.", "Send emails, linkedin_ids, public_identifiers or lead_ids.")
	}
	if total > MaxSuppressionEntries {
		return nil, apikit.TooMany(fmt.Sprintf("%d entries were sent; one call takes at most %d.", total, MaxSuppressionEntries), "Split the entries over several calls.")
	}
	groups := []struct {
		kind   string
		values []string
	}{
		{SuppressEmail, clean(in.Emails, true)},
		{SuppressLinkedInID, clean(in.LinkedInIDs, false)},
		{SuppressPublicIdentifier, clean(in.PublicIdentifiers, true)},
		{SuppressLead, clean(in.LeadIDs, true)},
	}
	for _, e := range groups[0].values {
		if !validEmail(e) {
			return nil, apikit.Invalid(fmt.Sprintf("emails: %q is not an email address.", e), "Fix or remove the entry; nothing was added.")
		}
	}
	var reason *string
	if r := strings.TrimSpace(in.Reason); r != "" {
		reason = &r
	}
	res := &SuppressionsResult{}
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.leadsByIDs(ctx, p, groups[3].values); err != nil {
			return err
		}
		now := db.Now(ctx, s.clock)
		var evs []events.Event
		for _, g := range groups {
			for _, v := range g.values {
				added, err := s.store.InsertSuppression(ctx, &suppression{ID: apikit.NewID(), WorkspaceID: p.WorkspaceID, Kind: g.kind, Value: v,
					Reason: reason, MemberID: &p.MemberID, CreatedAt: now})
				if err != nil {
					return err
				}
				if added {
					res.Added++
				} else {
					res.AlreadyPresent++
				}
			}
			why := "do-not-contact " + g.kind
			if reason != nil {
				why += ": " + *reason
			}
			ids, err := s.store.SuppressMatching(ctx, p.WorkspaceID, g.kind, g.values, why, now)
			if err != nil {
				return err
			}
			res.LeadsSuppressed += len(ids)
			if err := s.stopped(ctx, p.WorkspaceID, ids); err != nil {
				return err
			}
			for _, id := range ids {
				evs = append(evs, leadEvent(id, EventSuppressed, map[string]any{"reason": why}))
			}
		}
		return s.emit(ctx, p.WorkspaceID, evs...)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// clean trims, drops empty values, optionally lower-cases, and removes
// duplicates.
func clean(vals []string, lower bool) []string {
	var out []string
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if lower {
			v = strings.ToLower(v)
		}
		if v != "" {
			out = append(out, v)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}
