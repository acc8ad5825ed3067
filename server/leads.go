package server

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/leads"
)

type listLeadsInput struct {
	Q                string    `query:"q" maxLength:"200" doc:"Case-insensitive substring of name, company, headline or work email."`
	ClientID         string    `query:"client_id" format:"uuid"`
	ListID           string    `query:"list_id" format:"uuid"`
	StageID          string    `query:"stage_id" format:"uuid"`
	TagID            string    `query:"tag_id" format:"uuid"`
	Source           string    `query:"source"`
	Email            string    `query:"email" doc:"Work or personal email, case-insensitive."`
	PublicIdentifier string    `query:"public_identifier"`
	UpdatedSince     time.Time `query:"updated_since" doc:"Only leads updated at or after this time (RFC 3339)."`
	Replied          string    `query:"replied" enum:"true,false" doc:"Only leads who replied (true) or did not (false)."`
	Enriched         string    `query:"enriched" enum:"true,false" doc:"Only leads with (true) or without (false) an enriched profile."`
	Limit            int       `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Offset           int       `query:"offset" minimum:"0" default:"0"`
}

type leadPage struct {
	Body apikit.Page[leads.Lead]
}

type leadIDInput struct {
	ID string `path:"id" format:"uuid" doc:"Lead id."`
}

type leadOutput struct {
	Body struct {
		Data *leads.LeadDetail `json:"data"`
	}
}

func detailOut(d *leads.LeadDetail) *leadOutput {
	out := &leadOutput{}
	out.Body.Data = d
	return out
}

type upsertInput struct {
	Body leads.LeadInput
}

type upsertOutput struct {
	Status int
	Body   struct {
		Data            *leads.LeadDetail `json:"data"`
		Created         bool              `json:"created" doc:"true when no lead matched and this one was created."`
		UnchangedFields []string          `json:"unchanged_fields" doc:"Fields sent with a value that was kept, because they are filled only when empty."`
	}
}

type patchInput struct {
	ID   string `path:"id" format:"uuid"`
	Body leads.LeadInput
}

type patchOutput struct {
	Body struct {
		Data            *leads.LeadDetail `json:"data"`
		UnchangedFields []string          `json:"unchanged_fields"`
	}
}

type tagsInput struct {
	ID   string `path:"id" format:"uuid"`
	Body struct {
		TagID  *string  `json:"tag_id,omitempty" nullable:"false" format:"uuid" doc:"One tag id."`
		TagIDs []string `json:"tag_ids,omitempty" nullable:"false" maxItems:"20" format:"uuid" doc:"Tag ids. tag_id and tag_ids together name 1 to 20 tags (more gives E_TOO_MANY), each once (a repeated id gives E_PAYLOAD_INVALID)."`
	}
}

type untagInput struct {
	ID    string `path:"id" format:"uuid"`
	TagID string `path:"tag_id" format:"uuid"`
}

type setStageInput struct {
	ID   string `path:"id" format:"uuid"`
	Body struct {
		StageID *string `json:"stage_id" required:"true" format:"uuid" doc:"A stage id from GET /v1/me, or null to clear the stage."`
	}
}

type setListInput struct {
	ID   string `path:"id" format:"uuid"`
	Body struct {
		ListID *string `json:"list_id" required:"true" format:"uuid" doc:"A list id from GET /v1/me, or null to clear the list."`
	}
}

type timelineInput struct {
	ID    string `path:"id" format:"uuid"`
	Limit int    `query:"limit" minimum:"1" maximum:"1000" default:"200" doc:"How many of the newest events to return."`
}

type timelineOutput struct {
	Body struct {
		Data []leads.TimelineEvent `json:"data"`
	}
}

type enrichInput struct {
	Body leads.EnrichInput
}

type enrichOutput struct {
	Body struct {
		Data *leads.EnrichResult `json:"data"`
	}
}

type suppressionsInput struct {
	Body leads.SuppressionsInput
}

type suppressionsOutput struct {
	Body struct {
		Data *leads.SuppressionsResult `json:"data"`
	}
}

func (s *Server) registerLeads() {
	tags := []string{"Leads"}
	register(s, huma.Operation{
		OperationID: "list-leads", Method: http.MethodGet, Path: "/v1/leads", Tags: tags,
		Summary:     "List leads",
		Description: "Leads visible to the key, newest first, filtered by the query parameters. Paging with limit and offset never repeats or skips a lead while nothing changes.",
		Metadata:    map[string]any{metaRides: true},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *listLeadsInput) (*leadPage, error) {
		page, err := s.leads.List(ctx, p, leads.Filter{
			Q: in.Q, ClientID: in.ClientID, ListID: in.ListID, StageID: in.StageID, TagID: in.TagID,
			Source: in.Source, Email: in.Email, PublicIdentifier: in.PublicIdentifier,
			UpdatedSince: timeOrNil(in.UpdatedSince), Replied: boolOrNil(in.Replied), Enriched: boolOrNil(in.Enriched),
			Limit: in.Limit, Offset: in.Offset,
		})
		if err != nil {
			return nil, err
		}
		return &leadPage{Body: page}, nil
	})

	register(s, huma.Operation{
		OperationID: "upsert-lead", Method: http.MethodPost, Path: "/v1/leads", Tags: tags,
		Summary: "Create or update a lead",
		Description: "Matches an existing lead by linkedin_id, then provider_id, then email_work, then email_personal " +
			"(public_identifier only when none of those is sent). No match: the lead is created (201). Match: it is updated (200). " +
			"Only sent fields change; null or an empty string counts as left out; custom merges key by key. " +
			"client_id, email_work, email_personal and public_identifier are filled only when empty: a different value is kept out and named in unchanged_fields.",
		Errors: []int{http.StatusConflict},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *upsertInput) (*upsertOutput, error) {
		res, err := s.leads.Upsert(ctx, p, in.Body)
		if err != nil {
			return nil, err
		}
		out := &upsertOutput{Status: http.StatusOK}
		if res.Created {
			out.Status = http.StatusCreated
		}
		out.Body.Data, out.Body.Created, out.Body.UnchangedFields = res.Lead, res.Created, res.UnchangedFields
		return out, nil
	})
	s.documentAlso(http.MethodPost, "/v1/leads", "200", "201", "Lead created (no existing lead matched).")

	register(s, huma.Operation{
		OperationID: "get-lead", Method: http.MethodGet, Path: "/v1/leads/{id}", Tags: tags,
		Summary:     "Get a lead",
		Description: "The lead with its tags, enriched profile, per-sender state and enrollments.",
		Errors:      []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *leadIDInput) (*leadOutput, error) {
		d, err := s.leads.Get(ctx, p, in.ID)
		if err != nil {
			return nil, err
		}
		return detailOut(d), nil
	})

	register(s, huma.Operation{
		OperationID: "patch-lead", Method: http.MethodPatch, Path: "/v1/leads/{id}", Tags: tags,
		Summary:     "Update a lead",
		Description: "Same partial-update rules as create-or-update: only sent fields change, custom merges key by key, the fill-only fields keep their first value.",
		Errors:      []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *patchInput) (*patchOutput, error) {
		res, err := s.leads.Patch(ctx, p, in.ID, in.Body)
		if err != nil {
			return nil, err
		}
		out := &patchOutput{}
		out.Body.Data, out.Body.UnchangedFields = res.Lead, res.UnchangedFields
		return out, nil
	})

	register(s, huma.Operation{
		OperationID: "tag-lead", Method: http.MethodPost, Path: "/v1/leads/{id}/tags", Tags: tags,
		Summary:     "Tag a lead",
		Description: "Adds tag_id, or up to 20 tag_ids. Tags the lead already has are kept.",
		Errors:      []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *tagsInput) (*leadOutput, error) {
		ids := in.Body.TagIDs
		if in.Body.TagID != nil {
			ids = append(ids, *in.Body.TagID)
		}
		d, err := s.leads.AddTags(ctx, p, in.ID, ids)
		if err != nil {
			return nil, err
		}
		return detailOut(d), nil
	})
	s.requireOneOf(http.MethodPost, "/v1/leads/{id}/tags", "tag_id", "tag_ids")

	register(s, huma.Operation{
		OperationID: "untag-lead", Method: http.MethodDelete, Path: "/v1/leads/{id}/tags/{tag_id}", Tags: tags,
		Summary: "Remove a tag from a lead",
		Errors:  []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *untagInput) (*leadOutput, error) {
		d, err := s.leads.RemoveTag(ctx, p, in.ID, in.TagID)
		if err != nil {
			return nil, err
		}
		return detailOut(d), nil
	})

	register(s, huma.Operation{
		OperationID: "set-lead-stage", Method: http.MethodPut, Path: "/v1/leads/{id}/stage", Tags: tags,
		Summary: "Set a lead's stage", Description: "null clears the stage.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *setStageInput) (*leadOutput, error) {
		d, err := s.leads.SetStage(ctx, p, in.ID, in.Body.StageID)
		if err != nil {
			return nil, err
		}
		return detailOut(d), nil
	})

	register(s, huma.Operation{
		OperationID: "set-lead-list", Method: http.MethodPut, Path: "/v1/leads/{id}/list", Tags: tags,
		Summary: "Set a lead's list", Description: "null clears the list.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *setListInput) (*leadOutput, error) {
		d, err := s.leads.SetList(ctx, p, in.ID, in.Body.ListID)
		if err != nil {
			return nil, err
		}
		return detailOut(d), nil
	})

	register(s, huma.Operation{
		OperationID: "suppress-lead", Method: http.MethodPost, Path: "/v1/leads/{id}/suppress", Tags: tags,
		Summary:     "Mark a lead do-not-contact",
		Description: "Future sends to the lead stop. Nothing is deleted: the lead, its timeline and its chats are kept.",
		Errors:      []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *leadIDInput) (*leadOutput, error) {
		d, err := s.leads.Suppress(ctx, p, in.ID)
		if err != nil {
			return nil, err
		}
		return detailOut(d), nil
	})

	register(s, huma.Operation{
		OperationID: "unsuppress-lead", Method: http.MethodDelete, Path: "/v1/leads/{id}/suppress", Tags: tags,
		Summary:     "Clear a lead's do-not-contact mark",
		Description: "Workspace do-not-contact entries (POST /v1/suppressions) are kept; they apply to leads created later.",
		Errors:      []int{http.StatusNotFound},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *leadIDInput) (*leadOutput, error) {
		d, err := s.leads.Unsuppress(ctx, p, in.ID)
		if err != nil {
			return nil, err
		}
		return detailOut(d), nil
	})

	register(s, huma.Operation{
		OperationID: "get-lead-timeline", Method: http.MethodGet, Path: "/v1/leads/{id}/timeline", Tags: tags,
		Summary: "A lead's timeline", Description: "The lead's activity, newest first.",
		Errors: []int{http.StatusNotFound},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *timelineInput) (*timelineOutput, error) {
		evs, err := s.leads.Timeline(ctx, p, in.ID, in.Limit)
		if err != nil {
			return nil, err
		}
		out := &timelineOutput{}
		out.Body.Data = evs
		return out, nil
	})

	register(s, huma.Operation{
		OperationID: "enrich-leads", Method: http.MethodPost, Path: "/v1/leads/enrich", Tags: tags,
		Summary: "Queue profile enrichment", DefaultStatus: http.StatusAccepted,
		Description: "Queues enrichment of 1 to 5000 leads. It uses the profile views left over after the day's sequence actions. " +
			"Leads enriched in the last 90 days are skipped unless force is true; leads with neither a LinkedIn id nor a provider id are skipped.",
	}, apikit.RoleMember, apikit.ClassSpend, func(ctx context.Context, p apikit.Principal, in *enrichInput) (*enrichOutput, error) {
		res, err := s.leads.Enrich(ctx, p, in.Body)
		if err != nil {
			return nil, err
		}
		out := &enrichOutput{}
		out.Body.Data = res
		return out, nil
	})

	register(s, huma.Operation{
		OperationID: "add-suppressions", Method: http.MethodPost, Path: "/v1/suppressions", Tags: []string{"Leads"},
		Summary: "Add do-not-contact entries",
		Description: "Adds workspace-wide do-not-contact entries, for people who may not be leads yet: up to 5000 emails, LinkedIn ids, " +
			"public identifiers and lead ids in all. Existing matching leads become do-not-contact now; leads created later that match are stored as do-not-contact. " +
			"Needs a workspace-wide key: a client-scoped key gets 403.",
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *suppressionsInput) (*suppressionsOutput, error) {
		res, err := s.leads.AddSuppressions(ctx, p, in.Body)
		if err != nil {
			return nil, err
		}
		out := &suppressionsOutput{}
		out.Body.Data = res
		return out, nil
	})
}

// boolOrNil reads an optional boolean query parameter ("" = not sent).
func boolOrNil(s string) *bool {
	if s == "" {
		return nil
	}
	v := s == "true"
	return &v
}

// timeOrNil reads an optional time query parameter (zero = not sent).
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
