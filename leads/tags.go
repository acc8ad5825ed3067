package leads

import (
	"context"
	"fmt"
	"slices"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/workspace"
)

// MaxTagsPerCall is how many tags one tag call may add.
const MaxTagsPerCall = 20

// AddTags tags the lead with tagIDs (tag_id and tag_ids together); tags it
// already has are kept as they are. Every id sent counts: one call names at
// most 20 ids, each once. Returns E_NOT_FOUND if the lead is not visible,
// E_TOO_MANY for more than 20 ids and E_PAYLOAD_INVALID for none, a
// repeated id or an unknown tag.
func (s *Service) AddTags(ctx context.Context, p apikit.Principal, id string, tagIDs []string) (*LeadDetail, error) {
	if len(tagIDs) == 0 {
		return nil, apikit.Invalid("No tag was sent.", "Send tag_id, or tag_ids with 1 to 20 tag ids from GET /v1/me.")
	}
	if len(tagIDs) > MaxTagsPerCall {
		return nil, apikit.TooMany(fmt.Sprintf("tag_id and tag_ids name %d tags; one call names at most %d.", len(tagIDs), MaxTagsPerCall),
			"Split the tags over several calls.")
	}
	seen := map[string]bool{}
	for _, t := range tagIDs {
		if !apikit.ValidID(t) {
			return nil, apikit.Invalid(fmt.Sprintf("tag id %q is not an id (a lower-case uuid).", t), "Use tag ids listed by GET /v1/me.")
		}
		if seen[t] {
			return nil, apikit.Invalid(fmt.Sprintf("tag %s is named twice; tag_id and tag_ids together name each tag once.", t),
				"Send each tag id once.")
		}
		seen[t] = true
	}
	var out *LeadDetail
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		l, err := s.visible(ctx, p, id)
		if err != nil {
			return err
		}
		known, err := s.catalog.Lookup(ctx, p.WorkspaceID, workspace.Tags, tagIDs)
		if err != nil {
			return err
		}
		if len(known) != len(tagIDs) {
			for _, t := range tagIDs {
				if !slices.ContainsFunc(known, func(n workspace.Named) bool { return n.ID == t }) {
					return apikit.Invalid(fmt.Sprintf("tag %s is not one of this workspace's tags.", t), "Use tag ids listed by GET /v1/me.")
				}
			}
		}
		var evs []events.Event
		now := db.Now(ctx, s.clock)
		for _, t := range known {
			added, err := s.store.AddTag(ctx, l.ID, t.ID, now)
			if err != nil {
				return err
			}
			if added {
				evs = append(evs, leadEvent(l.ID, EventTagged, map[string]any{"tag_id": t.ID, "tag": t.Name}))
			}
		}
		if err := s.emit(ctx, p.WorkspaceID, evs...); err != nil {
			return err
		}
		out, err = s.detail(ctx, l)
		return err
	})
	return out, err
}

// RemoveTag removes a tag from the lead; a tag the lead does not have is no
// error. Returns E_NOT_FOUND if the lead is not visible and
// E_PAYLOAD_INVALID if the tag is not one of the workspace's.
func (s *Service) RemoveTag(ctx context.Context, p apikit.Principal, id, tagID string) (*LeadDetail, error) {
	var out *LeadDetail
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		l, err := s.visible(ctx, p, id)
		if err != nil {
			return err
		}
		known, err := s.catalog.Lookup(ctx, p.WorkspaceID, workspace.Tags, []string{tagID})
		if err != nil {
			return err
		}
		if len(known) == 0 {
			return apikit.Invalid(fmt.Sprintf("tag %s is not one of this workspace's tags.", tagID), "Use tag ids listed by GET /v1/me.")
		}
		removed, err := s.store.RemoveTag(ctx, l.ID, tagID)
		if err != nil {
			return err
		}
		if removed {
			if err := s.emit(ctx, p.WorkspaceID, leadEvent(l.ID, EventUntagged, map[string]any{"tag_id": tagID, "tag": known[0].Name})); err != nil {
				return err
			}
		}
		out, err = s.detail(ctx, l)
		return err
	})
	return out, err
}

// SetStage sets the lead's stage; nil clears it.
// Returns E_NOT_FOUND if the lead is not visible and E_PAYLOAD_INVALID for
// a stage that is not the workspace's.
func (s *Service) SetStage(ctx context.Context, p apikit.Principal, id string, stageID *string) (*LeadDetail, error) {
	return s.setRef(ctx, p, id, workspace.Stages, "stage_id", stageID)
}

// SetList sets the lead's list; nil clears it.
// Returns E_NOT_FOUND if the lead is not visible and E_PAYLOAD_INVALID for
// a list that is not the workspace's.
func (s *Service) SetList(ctx context.Context, p apikit.Principal, id string, listID *string) (*LeadDetail, error) {
	return s.setRef(ctx, p, id, workspace.Lists, "list_id", listID)
}

func (s *Service) setRef(ctx context.Context, p apikit.Principal, id string, kind workspace.Kind, name string, ref *string) (*LeadDetail, error) {
	if ref != nil && !apikit.ValidID(*ref) {
		return nil, apikit.Invalid(fmt.Sprintf("%s %q is not an id (a lower-case uuid).", name, *ref), fmt.Sprintf("Use one of the %s ids listed by GET /v1/me, or null to clear it.", kind))
	}
	var out *LeadDetail
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		l, err := s.visible(ctx, p, id)
		if err != nil {
			return err
		}
		if ref != nil {
			if err := s.checkRef(ctx, p, kind, name, *ref); err != nil {
				return err
			}
		}
		cur := &l.StageID
		kindEvent := EventStageChanged
		if kind == workspace.Lists {
			cur, kindEvent = &l.ListID, EventListChanged
		}
		if deref(*cur) != deref(ref) {
			from := *cur
			*cur = ref
			l.UpdatedAt = db.Now(ctx, s.clock)
			if err := s.store.Update(ctx, l); err != nil {
				return err
			}
			if err := s.emit(ctx, p.WorkspaceID, leadEvent(l.ID, kindEvent, map[string]any{"from": from, "to": ref})); err != nil {
				return err
			}
		}
		out, err = s.detail(ctx, l)
		return err
	})
	return out, err
}

// Suppress marks the lead do-not-contact: every later send check refuses
// it. Nothing is deleted. Returns E_NOT_FOUND if the lead is not visible.
func (s *Service) Suppress(ctx context.Context, p apikit.Principal, id string) (*LeadDetail, error) {
	return s.setDoNotContact(ctx, p, id, true)
}

// Unsuppress clears the lead's do-not-contact mark.
// Returns E_NOT_FOUND if the lead is not visible.
func (s *Service) Unsuppress(ctx context.Context, p apikit.Principal, id string) (*LeadDetail, error) {
	return s.setDoNotContact(ctx, p, id, false)
}

func (s *Service) setDoNotContact(ctx context.Context, p apikit.Principal, id string, on bool) (*LeadDetail, error) {
	var out *LeadDetail
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		l, err := s.visible(ctx, p, id)
		if err != nil {
			return err
		}
		if l.DoNotContact != on {
			now := db.Now(ctx, s.clock)
			l.DoNotContact, l.UpdatedAt = on, now
			kind := EventUnsuppressed
			if on {
				reason := "suppressed through the API"
				l.DoNotContactAt, l.DoNotContactReason, kind = &now, &reason, EventSuppressed
			} else {
				l.DoNotContactAt, l.DoNotContactReason = nil, nil
			}
			if err := s.store.Update(ctx, l); err != nil {
				return err
			}
			if err := s.emit(ctx, p.WorkspaceID, leadEvent(l.ID, kind, map[string]any{})); err != nil {
				return err
			}
			if on {
				if err := s.stopped(ctx, p.WorkspaceID, []string{l.ID}); err != nil {
					return err
				}
			}
		}
		out, err = s.detail(ctx, l)
		return err
	})
	return out, err
}
