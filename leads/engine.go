package leads

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/workspace"
)

// Person is what the blacklist is checked against: the lead's company,
// emails and LinkedIn identities.
func (l *Lead) Person() workspace.Person {
	return workspace.Person{Company: apikit.Deref(l.Company), Emails: present(apikit.Deref(l.EmailWork), apikit.Deref(l.EmailPersonal)),
		LinkedIn: present(apikit.Deref(l.PublicIdentifier), apikit.Deref(l.LinkedInID))}
}

// Address is where email goes to the lead: the work email first.
func (l *Lead) Address() string {
	if e := apikit.Deref(l.EmailWork); e != "" {
		return e
	}
	return apikit.Deref(l.EmailPersonal)
}

// Recipient is the lead as a transport needs it.
func (l *Lead) Recipient() senders.Recipient {
	return senders.Recipient{LeadID: l.ID, Name: apikit.Deref(l.Name), LinkedInID: apikit.Deref(l.LinkedInID),
		PublicIdentifier: apikit.Deref(l.PublicIdentifier), ProviderID: apikit.Deref(l.ProviderID), Email: l.Address()}
}

func present(vals ...string) []string {
	var out []string
	for _, v := range vals {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// ByIDs returns the workspace's leads among ids (unknown ids are left
// out), for the engine: enrollments check them against every rule.
func (s *Service) ByIDs(ctx context.Context, workspaceID string, ids []string) ([]Lead, error) {
	return s.store.ByIDs(ctx, workspaceID, ids)
}

// MarkReplied records that the leads replied, inside the transaction ctx
// carries: the lead's replied flag is what the replied filter reads.
func (s *Service) MarkReplied(ctx context.Context, workspaceID string, leadIDs ...string) error {
	for start := 0; start < len(leadIDs); start += 500 {
		part := leadIDs[start:min(start+500, len(leadIDs))]
		if _, err := s.db.IDB(ctx).NewUpdate().Model((*Lead)(nil)).Set("replied = ?", true).Set("updated_at = ?", db.Now(ctx, s.clock)).
			Where("workspace_id = ? AND id IN (?) AND NOT replied", workspaceID, bun.In(part)).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// SetProfile stores what a profile view found of a lead (enrichment, or a
// provider's view in a sequence), and keeps the provider's id of the person
// it names.
func (s *Service) SetProfile(ctx context.Context, workspaceID, leadID string, profile map[string]any) error {
	now := db.Now(ctx, s.clock)
	q := s.db.IDB(ctx).NewUpdate().Model((*Lead)(nil)).Set("profile = ?", profile).Set("enriched_at = ?", now).
		Set("updated_at = ?", now).Where("workspace_id = ? AND id = ?", workspaceID, leadID)
	if pid, _ := profile["provider_id"].(string); pid != "" && len(pid) <= 200 {
		// The provider's id of the person, kept unless the lead has one
		// or another lead of the workspace holds it (it is unique).
		q = q.Set(`provider_id = CASE WHEN provider_id IS NULL AND NOT EXISTS
			(SELECT 1 FROM leads AS o WHERE o.workspace_id = ? AND o.provider_id = ?) THEN ? ELSE provider_id END`, workspaceID, pid, pid)
	}
	_, err := q.Exec(ctx)
	return err
}

// EnrichmentJob is a queued enrichment request.
type EnrichmentJob struct {
	ID          string `bun:"id"`
	WorkspaceID string `bun:"workspace_id"`
	LeadID      string `bun:"lead_id"`
	WantPosts   bool   `bun:"want_posts"`
}

// Enrichment request outcomes.
const (
	EnrichDone    = "done"
	EnrichRefused = "refused"
)

// QueuedEnrichment returns up to limit of the workspace's queued
// enrichment requests, oldest first.
func (s *Service) QueuedEnrichment(ctx context.Context, workspaceID string, limit int) ([]EnrichmentJob, error) {
	var out []EnrichmentJob
	err := s.db.IDB(ctx).NewSelect().Model((*enrichmentRequest)(nil)).Column("id", "workspace_id", "lead_id", "want_posts").
		Where("er.status = ? AND er.workspace_id = ?", EnrichQueued, workspaceID).OrderExpr("er.created_at, er.id").Limit(int64(limit)).Scan(ctx, &out)
	return out, err
}

// FinishEnrichment marks a request done or refused.
func (s *Service) FinishEnrichment(ctx context.Context, id, status string) error {
	_, err := s.db.IDB(ctx).NewUpdate().Model((*enrichmentRequest)(nil)).Set("status = ?", status).Set("updated_at = ?", db.Now(ctx, s.clock)).
		Where("id = ?", id).Exec(ctx)
	return err
}

// ByEmail returns the workspace's lead with email as its work or personal
// address (case-insensitive), the work address first; sql.ErrNoRows when
// none has it. Bookings match their invitee with it.
func (s *Service) ByEmail(ctx context.Context, workspaceID, email string) (*Lead, error) {
	l, err := s.store.FindBy(ctx, workspaceID, keyEmailWork, email)
	if err == nil || !db.IsNoRows(err) {
		return l, err
	}
	return s.store.FindBy(ctx, workspaceID, keyEmailPersonal, email)
}
