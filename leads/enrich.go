package leads

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// Enrichment limits.
const (
	MaxEnrichIDs   = 5000
	EnrichFreshFor = 90 * 24 * time.Hour
)

// Enrichment request states.
const (
	EnrichQueued = "queued"
)

// EnrichInput is the body of an enrich call.
type EnrichInput struct {
	LeadIDs   []string `json:"lead_ids" minItems:"1" maxItems:"5000" format:"uuid" doc:"Leads to enrich, 1 to 5000 (more gives E_TOO_MANY)."`
	WantPosts bool     `json:"want_posts,omitempty" doc:"Also fetch the lead's recent posts."`
	Force     bool     `json:"force,omitempty" doc:"Enrich even leads enriched in the last 90 days."`
}

// EnrichResult says what an enrich call queued and skipped.
type EnrichResult struct {
	Queued              int    `json:"queued" doc:"Leads queued for enrichment (a lead already queued counts once)."`
	SkippedFresh        int    `json:"skipped_fresh" doc:"Leads enriched in the last 90 days, skipped because force was not set."`
	SkippedNoLinkedInID int    `json:"skipped_no_linkedin_id" doc:"Leads with neither a LinkedIn id nor a provider id, which cannot be looked up."`
	Note                string `json:"note" doc:"When to expect the results."`
}

// Enrich queues profile enrichment for the leads. The sender runner serves
// the queue with the profile views each sender has left after the day's
// sequence actions.
//
// Returns E_PAYLOAD_INVALID for a bad or unknown lead id (nothing is
// queued then) and E_TOO_MANY for more than 5000 ids.
func (s *Service) Enrich(ctx context.Context, p apikit.Principal, in EnrichInput) (*EnrichResult, error) {
	if len(in.LeadIDs) == 0 {
		return nil, apikit.Invalid("lead_ids is empty.", "Send 1 to 5000 lead ids.")
	}
	if len(in.LeadIDs) > MaxEnrichIDs {
		return nil, apikit.TooMany(fmt.Sprintf("%d lead ids were sent; one call takes at most %d.", len(in.LeadIDs), MaxEnrichIDs), "Split the ids over several calls.")
	}
	ids := slices.Compact(slices.Sorted(slices.Values(in.LeadIDs)))
	res := &EnrichResult{}
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		found, err := s.leadsByIDs(ctx, p, ids)
		if err != nil {
			return err
		}
		now := db.Now(ctx, s.clock)
		var evs []events.Event
		for _, l := range found {
			switch {
			case l.LinkedInID == nil && l.ProviderID == nil:
				res.SkippedNoLinkedInID++
				continue
			case !in.Force && l.EnrichedAt != nil && now.Sub(*l.EnrichedAt) < EnrichFreshFor:
				res.SkippedFresh++
				continue
			}
			r := &enrichmentRequest{ID: apikit.NewID(), WorkspaceID: p.WorkspaceID, LeadID: l.ID, WantPosts: in.WantPosts,
				Force: in.Force, Status: EnrichQueued, CreatedAt: now, UpdatedAt: now}
			if err := s.store.QueueEnrichment(ctx, r); err != nil {
				return err
			}
			res.Queued++
			evs = append(evs, leadEvent(l.ID, EventEnrichmentQueued, map[string]any{"want_posts": in.WantPosts, "force": in.Force}))
		}
		return s.emit(ctx, p.WorkspaceID, evs...)
	})
	if err != nil {
		return nil, err
	}
	res.Note = enrichNote(res.Queued)
	return res, nil
}

func enrichNote(queued int) string {
	if queued == 0 {
		return "Nothing was queued: every lead was skipped."
	}
	return fmt.Sprintf("%d lead(s) queued. Enrichment uses the profile views each sender has left after the day's sequence actions, "+
		"so results arrive within the senders' working hours, usually the same or the next working day; a large batch can take several days. "+
		"Read the results in each lead's profile (GET /v1/leads/{id}); enriched_at is set when a lead is done.", queued)
}

// leadsByIDs returns the leads with ids, all of which must be uuids of
// leads the principal can see: otherwise E_PAYLOAD_INVALID names a few of
// the others, and the caller changes nothing.
func (s *Service) leadsByIDs(ctx context.Context, p apikit.Principal, ids []string) ([]Lead, error) {
	for _, id := range ids {
		if !apikit.ValidID(id) {
			return nil, apikit.Invalid(fmt.Sprintf("lead_ids: %q is not an id (a lower-case uuid).", id), "Send lead ids as returned by GET /v1/leads; nothing was changed.")
		}
	}
	found, err := s.store.ByIDs(ctx, p.WorkspaceID, ids)
	if err != nil {
		return nil, err
	}
	found = slices.DeleteFunc(found, func(l Lead) bool { return !p.SeesClient(deref(l.ClientID)) })
	if len(found) != len(ids) {
		return nil, apikit.Invalid(fmt.Sprintf("lead_ids: %d of the ids are not leads this key can see, e.g. %s.", len(ids)-len(found), missing(ids, found)),
			"Remove those ids and send the call again; nothing was changed.")
	}
	return found, nil
}

func missing(ids []string, found []Lead) string {
	var out []string
	for _, id := range ids {
		if !slices.ContainsFunc(found, func(l Lead) bool { return l.ID == id }) {
			out = append(out, id)
			if len(out) == 3 {
				break
			}
		}
	}
	return strings.Join(out, ", ")
}
