package leads

import (
	"context"
)

// ByIDs returns the workspace's leads among ids (unknown ids are left
// out), for the engine: enrollments check them against every rule.
func (s *Service) ByIDs(ctx context.Context, workspaceID string, ids []string) ([]Lead, error) {
	return s.store.ByIDs(ctx, workspaceID, ids)
}

// MarkReplied records that the lead replied, inside the transaction ctx
// carries: the lead's replied flag is what the replied filter reads.
func (s *Service) MarkReplied(ctx context.Context, workspaceID, leadID string) error {
	_, err := s.db.IDB(ctx).NewUpdate().Model((*Lead)(nil)).Set("replied = ?", true).Set("updated_at = ?", s.clock.Now()).
		Where("workspace_id = ? AND id = ? AND NOT replied", workspaceID, leadID).Exec(ctx)
	return err
}

// SetProfile stores what enrichment found of a lead's profile.
func (s *Service) SetProfile(ctx context.Context, workspaceID, leadID string, profile map[string]any) error {
	now := s.clock.Now()
	_, err := s.db.IDB(ctx).NewUpdate().Model((*Lead)(nil)).Set("profile = ?", profile).Set("enriched_at = ?", now).
		Set("updated_at = ?", now).Where("workspace_id = ? AND id = ?", workspaceID, leadID).Exec(ctx)
	return err
}
