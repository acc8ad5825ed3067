package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/reports"
	"github.com/leadline/leadline/workspace"
)

// Me is the key's context: who it acts as, with which rights, and the ids
// it can use.
type Me struct {
	Workspace   MeWorkspace       `json:"workspace"`
	KeyID       string            `json:"key_id" doc:"The key making this call."`
	Member      MeMember          `json:"member" doc:"The member the key acts as; audit entries name this member."`
	Role        apikit.Role       `json:"role" enum:"manager,member,client_viewer" doc:"Effective role: the lower of the key's role and its creator's current role."`
	ClientScope []string          `json:"client_scope" doc:"Client ids the key is limited to; empty means the whole workspace."`
	Clients     []workspace.Named `json:"clients" doc:"Clients this key may see."`
	Stages      []workspace.Named `json:"stages"`
	Tags        []workspace.Named `json:"tags"`
	Lists       []workspace.Named `json:"lists"`
}

// MeWorkspace is the workspace part of Me.
type MeWorkspace struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Timezone string `json:"timezone" doc:"IANA timezone; report dates are in it."`
	Plan     string `json:"plan" enum:"starter,pro"`
}

// MeMember is the member part of Me.
type MeMember struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

type meOutput struct {
	Body struct {
		Data Me `json:"data"`
	}
}

type metricsOutput struct {
	Body struct {
		Data map[string]reports.Definition `json:"data"`
	}
}

func (s *Server) registerMeta() {
	register(s, huma.Operation{
		OperationID: "get-me", Method: http.MethodGet, Path: "/v1/me", Tags: []string{"Meta"},
		Summary:     "The key's context",
		Description: "Role, client scope, and the ids with names of the clients, stages, tags and lists this key may use.",
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, _ *struct{}) (*meOutput, error) {
		c, err := s.workspaces.Catalog(ctx, p)
		if err != nil {
			return nil, err
		}
		out := &meOutput{}
		scope := p.ClientIDs
		if scope == nil {
			scope = []string{}
		}
		out.Body.Data = Me{
			Workspace: MeWorkspace{ID: p.WorkspaceID, Name: p.WorkspaceName, Timezone: p.Timezone, Plan: p.Plan},
			KeyID:     p.KeyID, Member: MeMember{ID: p.MemberID, Email: p.MemberEmail},
			Role: p.Role, ClientScope: scope,
			Clients: c.Clients, Stages: c.Stages, Tags: c.Tags, Lists: c.Lists,
		}
		return out, nil
	})

	register(s, huma.Operation{
		OperationID: "get-metric-definitions", Method: http.MethodGet, Path: "/v1/metrics/definitions", Tags: []string{"Meta"},
		Summary:     "Metric definitions",
		Description: "Every metric reports use, keyed by metric key, with label, description, unit and how it is computed.",
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, _ *struct{}) (*metricsOutput, error) {
		out := &metricsOutput{}
		out.Body.Data = reports.Definitions()
		return out, nil
	})
}
