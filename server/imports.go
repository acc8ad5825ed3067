package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/leads"
)

type importInput struct {
	ClientID string   `query:"client_id" format:"uuid" doc:"Client of every imported lead (filled only when a lead has none)."`
	TagIDs   []string `query:"tag_id,explode" maxItems:"20" doc:"Tag every lead a row creates or updates (repeat the parameter; at most 20)."`
	Maps     []string `query:"map,explode" maxItems:"200" doc:"column=field, repeated: a lead field, first_name, last_name, custom.KEY, or - to leave the column out. Other columns map by their header (First Name, Email, LinkedIn URL, Company, Title, …) or are left out."`
	DryRun   bool     `query:"dry_run" doc:"Write nothing; the job's counts are those a real import would give."`
	// The file is not a field: the guard keeps it in a temporary file
	// (metaUpload) and the operation takes it from there (takeUpload).
}

type importOutput struct {
	Status int
	Body   struct {
		Data *leads.ImportJob `json:"data"`
	}
}

type importIDInput struct {
	ID string `path:"id" format:"uuid" doc:"Import id."`
}

type importPageInput struct {
	ID     string `path:"id" format:"uuid" doc:"Import id."`
	Limit  int    `query:"limit" minimum:"1" maximum:"200" default:"100" doc:"How many rejected rows errors carries."`
	Offset int    `query:"offset" minimum:"0" default:"0" doc:"How many rejected rows, in line order, to skip."`
}

type importPageOutput struct {
	Body struct {
		Data    *leads.ImportJob `json:"data"`
		Total   int              `json:"total" doc:"How many rejected rows the job lists (as rejected counts them)."`
		Limit   int              `json:"limit"`
		Offset  int              `json:"offset"`
		HasMore bool             `json:"has_more" doc:"true when rejected rows follow this page: ask again with offset + limit."`
	}
}

func (s *Server) registerImports() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.leads.FailInterruptedImports(ctx); err != nil {
		s.logger.Error("mark interrupted imports failed", "err", err)
	}
	tags := []string{"Leads"}
	mib := s.maxUpload >> 20
	register(s, huma.Operation{
		OperationID: "import-leads", Method: http.MethodPost, Path: "/v1/leads/import", Tags: tags,
		DefaultStatus: http.StatusAccepted,
		Summary:       "Import leads from a CSV file",
		Description: fmt.Sprintf("Takes a CSV file (`Content-Type: text/csv`) of at most %d MiB, this route's own limit (other "+
			"requests take 2 MiB); a larger file is refused with 422 E_PAYLOAD_INVALID and nothing is imported: split it, or use `leadline import`. "+
			"It answers 202 with an import job to poll at GET /v1/imports/{id}. The server imports the file in the background "+
			"with this key's rights: every row is created or updated with the rules of POST /v1/leads (matching order, fields "+
			"filled only when empty, do-not-contact and blacklist), in transactions of %d rows. A bad row is counted as rejected "+
			"and reported with its line and reason; it changes nothing, and the other rows go on. The whole file counts once "+
			"against the write class. A file or options that cannot be used (no header, no identity column, a bad map, an unknown "+
			"tag or client) give 422 at once.", mib, leads.DefaultImportBatch),
		RequestBody: &huma.RequestBody{
			Description: fmt.Sprintf("A CSV file of at most %d MiB: UTF-8 with or without a byte order mark, comma, semicolon or "+
				"tab separated (taken from the header line), with the column names on the first line.", mib),
			Required: true,
			Content: map[string]*huma.MediaType{"text/csv": {
				Schema:  &huma.Schema{Type: huma.TypeString, Format: "binary"},
				Example: "Email,First Name,Last Name,Company,LinkedIn URL\nann@acme.test,Ann,Lee,Acme,https://www.linkedin.com/in/ann-lee\n",
			}},
		},
		Metadata: map[string]any{metaUpload: true},
	}, apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *importInput) (*importOutput, error) {
		file := takeUpload(ctx)
		if file == nil {
			return nil, apikit.Invalid("The request carries no file.", "Send the CSV file as the body, with Content-Type: text/csv.")
		}
		job, err := s.leads.StartImport(ctx, p, file, leads.ImportOptions{ClientID: in.ClientID, TagIDs: in.TagIDs,
			Map: in.Maps, DryRun: in.DryRun}, s.logger)
		if err != nil {
			return nil, err
		}
		out := &importOutput{Status: http.StatusAccepted}
		out.Body.Data = job
		return out, nil
	})

	register(s, huma.Operation{
		OperationID: "get-import", Method: http.MethodGet, Path: "/v1/imports/{id}", Tags: tags,
		Summary: "Get an import",
		Description: "The import's status and counts so far: created, updated, unchanged, rejected and normalized rows, and " +
			"its rejected rows with their line, code and reason, in line order, paged as every list is: `errors` holds `limit` " +
			"of them (100 by default, at most 200) from `offset`; `total`, `limit`, `offset` and `has_more` describe that page. " +
			"Every rejected row is listed, as the batch that rejected it is written; " +
			"GET /v1/imports/{id}/rejected.csv lists them all at once. Poll until status is no longer running.",
		Errors: []int{http.StatusNotFound, http.StatusUnprocessableEntity},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *importPageInput) (*importPageOutput, error) {
		job, total, err := s.leads.ImportJobPage(ctx, p, in.ID, in.Limit, in.Offset)
		if err != nil {
			return nil, err
		}
		out := &importPageOutput{}
		page := apikit.NewPage(job.Errors, total, in.Limit, in.Offset)
		out.Body.Data, out.Body.Total, out.Body.Limit, out.Body.Offset, out.Body.HasMore = job, total, in.Limit, in.Offset, page.HasMore
		return out, nil
	})

	register(s, huma.Operation{
		OperationID: "download-import-rejected", Method: http.MethodGet, Path: "/v1/imports/{id}/rejected.csv", Tags: tags,
		Summary: "Download an import's rejected rows",
		Description: "Every rejected row of the import as a CSV file (`text/csv`, UTF-8, comma separated): a header line " +
			"`line,code,reason`, then a line per rejected row in line order: the row's first line in the imported file, the error " +
			"code POST /v1/leads would answer and the reason. While the import runs it lists the rows rejected so far.",
		Errors: []int{http.StatusNotFound},
		Responses: map[string]*huma.Response{"200": {
			Description: "The rejected rows as CSV.",
			Headers: map[string]*huma.Header{"Content-Disposition": {
				Description: "attachment, with a file name: import-{id}-rejected.csv.",
				Schema:      &huma.Schema{Type: huma.TypeString},
			}},
			Content: map[string]*huma.MediaType{"text/csv": {
				Schema:  &huma.Schema{Type: huma.TypeString},
				Example: "line,code,reason\n5,E_PAYLOAD_INVALID,\"email_work \"\"nope\"\" is not an email address.\"\n",
			}},
		}},
	}, apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *importIDInput) (*huma.StreamResponse, error) {
		// Looked up first, so that an unknown import answers 404 in the
		// envelope before the file begins.
		if _, err := s.leads.ImportJob(ctx, p, in.ID); err != nil {
			return nil, err
		}
		return &huma.StreamResponse{Body: func(hctx huma.Context) {
			hctx.SetHeader("Content-Type", "text/csv; charset=utf-8")
			hctx.SetHeader("Content-Disposition", `attachment; filename="import-`+in.ID+`-rejected.csv"`)
			hctx.SetStatus(http.StatusOK)
			if err := s.leads.WriteRejectedCSV(hctx.Context(), p, in.ID, hctx.BodyWriter()); err != nil {
				// The answer has begun: it ends short, and the log says why.
				s.logger.Error("rejected rows download", "import", in.ID, "err", err)
			}
		}}, nil
	})
}
