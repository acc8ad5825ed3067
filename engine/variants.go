package engine

import (
	"context"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/sequences"
)

// variantFor returns the variant of step the enrollment sends, nil for a
// step without variants. The choice is made once: a retry or a recovery
// of the step (an attempt after the first) sends the variant its earlier
// attempt was recorded with, even when a winner was picked meanwhile; a
// first attempt gets the step's winner, or the variant the enrollment's
// hash chooses by weight (sequences.Step.Choose), the same on every
// replica.
func (r *Runner) variantFor(ctx context.Context, e *enrollments.Enrollment, q *sequences.Sequence, step sequences.Step) (*string, error) {
	if len(step.Variants) == 0 {
		return nil, nil
	}
	if e.Attempt > 0 {
		var ids []string
		if err := r.svc.db.IDB(ctx).NewRaw(`SELECT a.variant_id FROM actions AS a
			WHERE a.enrollment_id = ? AND a.step_id = ? AND a.variant_id IS NOT NULL AND a.created_at >= ?
			ORDER BY a.created_at DESC LIMIT 1`, e.ID, step.ID, r.svc.db.TimeArg(&e.StepStartedAt)).Scan(ctx, &ids); err != nil {
			return nil, err
		}
		if len(ids) == 1 {
			if _, ok := step.VariantByID(ids[0]); ok {
				return &ids[0], nil
			}
		}
	}
	id := step.Choose(e.ID, q.WinnerOf(step.ID))
	return &id, nil
}
