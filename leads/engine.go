package leads

import (
	"context"
	"strings"

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
// provider's view in a sequence), and keeps the person it names (its
// provider_id and public_identifier) as SetMember does.
func (s *Service) SetProfile(ctx context.Context, workspaceID, leadID string, profile map[string]any) error {
	now := db.Now(ctx, s.clock)
	q := s.db.IDB(ctx).NewUpdate().Model((*Lead)(nil)).Set("profile = ?", profile).Set("enriched_at = ?", now).
		Set("updated_at = ?", now).Where("workspace_id = ? AND id = ?", workspaceID, leadID)
	pid, _ := profile["provider_id"].(string)
	pub, _ := profile["public_identifier"].(string)
	_, err := keepMember(q, workspaceID, &senders.Member{ProviderID: pid, PublicIdentifier: pub}).Exec(ctx)
	return err
}

// SetMember keeps on the lead the person a provider resolved it to (an
// invitation, a message, a reply or an acceptance that named them), in
// the transaction ctx carries: the provider's id unless the lead has one
// or another lead of the workspace holds it (it is unique), and the
// public identifier unless the lead has one. Values no lead field can
// hold are left out. It reports whether the lead changed.
func (s *Service) SetMember(ctx context.Context, workspaceID, leadID string, m *senders.Member) (bool, error) {
	if m == nil {
		return false, nil
	}
	q := s.db.IDB(ctx).NewUpdate().Model((*Lead)(nil)).Where("workspace_id = ? AND id = ?", workspaceID, leadID)
	pid, pub := memberIDs(m)
	switch {
	case pid != "" && pub != "":
		q = q.Where("(provider_id IS NULL OR public_identifier IS NULL)")
	case pid != "":
		q = q.Where("provider_id IS NULL")
	case pub != "":
		q = q.Where("public_identifier IS NULL")
	default:
		return false, nil
	}
	q = keepMember(q.Set("updated_at = ?", db.Now(ctx, s.clock)), workspaceID, m)
	res, err := q.Exec(ctx)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// memberIDs returns the provider id and the public identifier of m that a
// lead can hold: one line of at most maxIdentity characters, the public
// identifier lower-case as leads keep it; "" for one it cannot.
func memberIDs(m *senders.Member) (providerID, publicIdentifier string) {
	ok := func(v string) bool { return v != "" && len(v) <= maxIdentity && apikit.OneLine("", v) == nil }
	if ok(m.ProviderID) {
		providerID = m.ProviderID
	}
	if v := strings.ToLower(strings.Trim(strings.TrimSpace(m.PublicIdentifier), "/")); ok(v) {
		publicIdentifier = v
	}
	return providerID, publicIdentifier
}

// maxIdentity is the longest provider id or public identifier a lead holds.
const maxIdentity = 200

// keepMember adds to an update of one lead the columns that keep m.
func keepMember(q *bun.UpdateQuery, workspaceID string, m *senders.Member) *bun.UpdateQuery {
	pid, pub := memberIDs(m)
	if pid != "" {
		q = q.Set(`provider_id = CASE WHEN provider_id IS NULL AND NOT EXISTS
			(SELECT 1 FROM leads AS o WHERE o.workspace_id = ? AND o.provider_id = ?) THEN ? ELSE provider_id END`, workspaceID, pid, pid)
	}
	if pub != "" {
		q = q.Set("public_identifier = COALESCE(public_identifier, ?)", pub)
	}
	return q
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
