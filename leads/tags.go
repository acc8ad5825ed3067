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
	if err := checkTagIDs(tagIDs); err != nil {
		return nil, err
	}
	var out *LeadDetail
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		l, err := s.visible(ctx, p, id)
		if err != nil {
			return err
		}
		known, err := s.knownTags(ctx, p, tagIDs)
		if err != nil {
			return err
		}
		if _, err := s.tagLead(ctx, p.WorkspaceID, l.ID, known); err != nil {
			return err
		}
		out, err = s.detail(ctx, l)
		return err
	})
	return out, err
}

// checkTagIDs checks the form of the tag ids one call adds: 1 to 20 ids,
// each once.
func checkTagIDs(tagIDs []string) error {
	if len(tagIDs) == 0 {
		return apikit.Invalid("No tag was sent.", "Send tag_id, or tag_ids with 1 to 20 tag ids from GET /v1/me.")
	}
	if len(tagIDs) > MaxTagsPerCall {
		return apikit.TooMany(fmt.Sprintf("tag_id and tag_ids name %d tags; one call names at most %d.", len(tagIDs), MaxTagsPerCall),
			"Split the tags over several calls.")
	}
	seen := map[string]bool{}
	for _, t := range tagIDs {
		if !apikit.ValidID(t) {
			return apikit.Invalid(fmt.Sprintf("tag id %q is not an id (a lower-case uuid).", t), "Use tag ids listed by GET /v1/me.")
		}
		if seen[t] {
			return apikit.Invalid(fmt.Sprintf("tag %s is named twice; tag_id and tag_ids together name each tag once.", t),
				"Send each tag id once.")
		}
		seen[t] = true
	}
	return nil
}

// knownTags returns the workspace's tags with tagIDs, or E_PAYLOAD_INVALID
// naming one that is not the workspace's.
func (s *Service) knownTags(ctx context.Context, p apikit.Principal, tagIDs []string) ([]workspace.Named, error) {
	known, err := s.catalog.Lookup(ctx, p.WorkspaceID, workspace.Tags, tagIDs)
	if err != nil {
		return nil, err
	}
	if len(known) != len(tagIDs) {
		for _, t := range tagIDs {
			if !slices.ContainsFunc(known, func(n workspace.Named) bool { return n.ID == t }) {
				return nil, apikit.Invalid(fmt.Sprintf("tag %s is not one of this workspace's tags.", t), "Use tag ids listed by GET /v1/me.")
			}
		}
	}
	return known, nil
}

// tagLead adds the tags to the lead, writing an event for each tag it did
// not have yet, and returns how many it added.
func (s *Service) tagLead(ctx context.Context, workspaceID, leadID string, known []workspace.Named) (int, error) {
	var evs []events.Event
	now := db.Now(ctx, s.clock)
	for _, t := range known {
		added, err := s.store.AddTag(ctx, leadID, t.ID, now)
		if err != nil {
			return 0, err
		}
		if added {
			evs = append(evs, leadEvent(leadID, EventTagged, map[string]any{"tag_id": t.ID, "tag": t.Name}))
		}
	}
	return len(evs), s.emit(ctx, workspaceID, evs...)
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
		if err := s.markDoNotContact(ctx, l, on, "suppressed through the API", nil); err != nil {
			return err
		}
		out, err = s.detail(ctx, l)
		return err
	})
	return out, err
}

// markDoNotContact sets or clears l's do-not-contact mark, records the
// event (with data, if any) and, when set, stops its enrollments. A lead
// already in that state is left as it is.
func (s *Service) markDoNotContact(ctx context.Context, l *Lead, on bool, reason string, data map[string]any) error {
	if l.DoNotContact == on {
		return nil
	}
	now := db.Now(ctx, s.clock)
	l.DoNotContact, l.UpdatedAt = on, now
	kind := EventUnsuppressed
	if on {
		l.DoNotContactAt, l.DoNotContactReason, kind = &now, &reason, EventSuppressed
	} else {
		l.DoNotContactAt, l.DoNotContactReason = nil, nil
	}
	if err := s.store.Update(ctx, l); err != nil {
		return err
	}
	if data == nil {
		data = map[string]any{}
	}
	if err := s.emit(ctx, l.WorkspaceID, leadEvent(l.ID, kind, data)); err != nil {
		return err
	}
	if on {
		return s.stopped(ctx, l.WorkspaceID, []string{l.ID})
	}
	return nil
}
