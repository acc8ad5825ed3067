package leads

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// ImportJob is a CSV import sent over HTTP, run in the background by the
// process that took it.
type ImportJob struct {
	bun.BaseModel `bun:"table:imports,alias:im"`

	ID          string            `bun:"id,pk" json:"id" format:"uuid"`
	WorkspaceID string            `bun:"workspace_id" json:"-"`
	ClientID    *string           `bun:"client_id" json:"-"`
	KeyID       *string           `bun:"key_id" json:"-"`
	Status      string            `bun:"status" json:"status" enum:"running,succeeded,failed" doc:"running until every row is read; failed when the import stopped (error says why)."`
	DryRun      bool              `bun:"dry_run" json:"dry_run" doc:"A dry run writes nothing; its counts are those a real import would give."`
	Rows        int               `bun:"rows" json:"rows" doc:"Rows read so far, not counting the header and blank rows."`
	Created     int               `bun:"created" json:"created"`
	Updated     int               `bun:"updated" json:"updated"`
	Unchanged   int               `bun:"unchanged" json:"unchanged"`
	Rejected    int               `bun:"rejected" json:"rejected" doc:"Rows refused by a rule of POST /v1/leads; every one is listed (errors, and GET /v1/imports/{id}/rejected.csv)."`
	Normalized  int               `bun:"normalized" json:"normalized" doc:"Rows imported after a line break or tab in a one-line field (name, company, headline, …) became one space: spreadsheets put line breaks inside cells (Alt+Enter). Counted among created, updated and unchanged; POST /v1/leads refuses such text."`
	Errors      []RowError        `bun:"-" json:"errors" doc:"Rejected rows in line order, with their line, code and reason: one page of them (limit and offset of GET /v1/imports/{id}; the first 100 by default)."`
	Columns     map[string]string `bun:"columns,type:jsonb" json:"columns" doc:"What each column of the header maps to; \"-\" when it is left out."`
	Error       *string           `bun:"error" json:"error" doc:"Why a failed import stopped; null otherwise. Rows written before it stopped stay written."`
	CreatedAt   time.Time         `bun:"created_at" json:"created_at"`
	UpdatedAt   time.Time         `bun:"updated_at" json:"updated_at"`
	FinishedAt  *time.Time        `bun:"finished_at" json:"finished_at"`
}

// Import job statuses.
const (
	ImportRunning   = "running"
	ImportSucceeded = "succeeded"
	ImportFailed    = "failed"
)

// importStale is how long a running job may go without writing its counts
// before it counts as left by a process that stopped.
const importStale = 2 * time.Minute

const importInterrupted = "The server process running the import stopped before it ended; rows written before are kept. Send the file again: rows already imported come back unchanged."

const importShutDown = "The server shut down before the import ended; the rows counted were written and are kept. Send the file again: rows already imported come back unchanged."

// running are the imports this process runs in the background, so that a
// server shutting down can wait for them (DrainImports).
type running struct {
	mu     sync.Mutex
	wg     sync.WaitGroup
	cancel map[string]context.CancelFunc
}

// start registers one import and returns its context, which DrainImports
// cancels, and the function that ends it.
func (r *running) start(ctx context.Context, id string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel == nil {
		r.cancel = map[string]context.CancelFunc{}
	}
	r.cancel[id] = cancel
	r.wg.Add(1)
	return ctx, func() {
		r.mu.Lock()
		delete(r.cancel, id)
		r.mu.Unlock()
		cancel()
		r.wg.Done()
	}
}

// DrainImports waits for the imports this process runs in the background
// to end, until ctx ends. Then it stops those still running: each ends at
// the next batch (a batch is written whole or not at all) and records
// itself failed, with the rows it wrote and a message to send the file
// again. It returns once every import has recorded how it ended, and
// ctx's error if it had to stop some. A server calls it as it shuts down,
// after it stops taking requests.
func (s *Service) DrainImports(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.imports.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.StopImports()
	<-done
	return ctx.Err()
}

// StopImports stops the imports this process runs in the background now:
// each ends at its next batch and records itself failed, as DrainImports
// says. It does not wait for them.
func (s *Service) StopImports() {
	s.imports.mu.Lock()
	defer s.imports.mu.Unlock()
	for _, cancel := range s.imports.cancel {
		cancel()
	}
}

// StartImport checks the options and the file's header, records a running
// job and imports the file in the background, with p's rights, on a
// context that outlives the request. It returns the job as it starts.
// Returns E_PAYLOAD_INVALID (or E_FORBIDDEN, E_TOO_MANY) as Import does
// for a file or options it cannot use; nothing is recorded then. The file
// is StartImport's to close: when it returns an error, or when the
// background import ends.
func (s *Service) StartImport(ctx context.Context, p apikit.Principal, file io.ReadCloser, opt ImportOptions, logger *slog.Logger) (job *ImportJob, err error) {
	defer func() {
		if err != nil {
			file.Close()
		}
	}()
	im, b, err := s.startImport(ctx, p, file, opt)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	job = &ImportJob{ID: apikit.NewID(), WorkspaceID: p.WorkspaceID, Status: ImportRunning, DryRun: opt.DryRun,
		Errors: []RowError{}, Columns: im.mapping.columns, CreatedAt: now, UpdatedAt: now}
	if opt.ClientID != "" {
		job.ClientID = &opt.ClientID
	}
	if p.KeyID != "" {
		job.KeyID = &p.KeyID
	}
	if _, err := s.db.NewInsert().Model(job).Exec(ctx); err != nil {
		return nil, err
	}
	bg, end := s.imports.start(apikit.WithPrincipal(context.WithoutCancel(ctx), p), job.ID)
	go func() {
		defer end()
		defer file.Close()
		opt.Progress = func(pr ImportProgress) {
			if err := s.saveImport(context.WithoutCancel(bg), job.ID, ImportRunning, pr.Report, pr.Rejects, nil); err != nil {
				logger.Error("import progress", "import", job.ID, "err", err)
			}
		}
		rep, err := s.runImport(bg, im, b, opt)
		status, msg := ImportSucceeded, (*string)(nil)
		switch {
		case err != nil && bg.Err() != nil:
			status, msg = ImportFailed, new(importShutDown)
			logger.Warn("import stopped by the shutdown", "import", job.ID)
		case err != nil:
			status = ImportFailed
			m := "The import stopped: " + err.Error()
			msg = &m
			logger.Error("import failed", "import", job.ID, "err", err)
		}
		var r Report
		if rep != nil {
			r = rep.Report
		}
		// Recorded even when the shutdown stopped it. The rejected rows
		// went with each batch's progress.
		save, cancel := context.WithTimeout(context.WithoutCancel(bg), 10*time.Second)
		defer cancel()
		if err := s.saveImport(save, job.ID, status, r, nil, msg); err != nil {
			logger.Error("import end", "import", job.ID, "err", err)
		}
	}()
	return job, nil
}

// importReject is one rejected row of an import job, as stored.
type importReject struct {
	bun.BaseModel `bun:"table:import_rejects,alias:ir"`

	ImportID string `bun:"import_id,pk"`
	Line     int    `bun:"line,pk"`
	Code     string `bun:"code"`
	Reason   string `bun:"reason"`
}

// rejectsPerStatement bounds one insert of rejected rows well below the
// bound variables either engine takes in a statement.
const rejectsPerStatement = 1000

// saveImport writes a job's counts with the rows the last batch rejected,
// in one transaction so that the rows listed always match the count, and
// when it ended its status and error.
func (s *Service) saveImport(ctx context.Context, id, status string, r Report, rejects []RowError, msg *string) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		idb := s.db.IDB(ctx)
		for part := range slices.Chunk(rejects, rejectsPerStatement) {
			rows := make([]importReject, len(part))
			for i, e := range part {
				rows[i] = importReject{ImportID: id, Line: e.Line, Code: e.Code, Reason: e.Reason}
			}
			if _, err := idb.NewInsert().Model(&rows).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
				return fmt.Errorf("save rejected rows: %w", err)
			}
		}
		now := s.clock.Now()
		q := idb.NewUpdate().Model((*ImportJob)(nil)).Where("id = ?", id).
			Set("rows = ?, created = ?, updated = ?, unchanged = ?, rejected = ?, normalized = ?, updated_at = ?",
				r.Rows, r.Created, r.Updated, r.Unchanged, r.Rejected, r.Normalized, now)
		if status != ImportRunning {
			q = q.Set("status = ?, error = ?, finished_at = ?", status, msg, now)
		}
		_, err := q.Exec(ctx)
		return err
	})
}

// DefaultImportErrors is how many rejected rows an import job carries
// unless a page is asked for.
const DefaultImportErrors = 100

// ImportJob returns the import job with id and its first
// DefaultImportErrors rejected rows. A running job that has not written
// its counts for two minutes was left by a process that stopped: it is
// marked failed. Returns E_NOT_FOUND if the job is not the workspace's, or
// is of a client outside a scoped key's clients.
func (s *Service) ImportJob(ctx context.Context, p apikit.Principal, id string) (*ImportJob, error) {
	job, _, err := s.ImportJobPage(ctx, p, id, DefaultImportErrors, 0)
	return job, err
}

// ImportJobPage returns the import job with id, as ImportJob does, with
// the page of its rejected rows (in line order) that limit (1 to
// apikit.MaxLimit) and offset (0 or more) select, and how many rejected
// rows are listed in all. Returns E_PAYLOAD_INVALID for a limit or offset
// out of bounds, and E_NOT_FOUND as ImportJob does.
func (s *Service) ImportJobPage(ctx context.Context, p apikit.Principal, id string, limit, offset int) (*ImportJob, int, error) {
	if err := apikit.CheckPage(&limit, offset); err != nil {
		return nil, 0, err
	}
	job, err := s.importJob(ctx, p, id)
	if err != nil {
		return nil, 0, err
	}
	var rows []importReject
	total, err := s.db.NewSelect().Model(&rows).Where("import_id = ?", id).Order("line").Limit(int64(limit)).Offset(int64(offset)).ScanAndCount(ctx)
	if err != nil {
		return nil, 0, err
	}
	job.Errors = make([]RowError, len(rows))
	for i, r := range rows {
		job.Errors[i] = RowError{Line: r.Line, Code: r.Code, Reason: r.Reason}
	}
	return job, int(total), nil
}

// WriteRejectedCSV writes every rejected row of the import job with id to
// w as CSV, in line order: a header line (line,code,reason) and a line per
// row. It reads the rows a thousand at a time, so that a large report
// never sits in memory. Returns E_NOT_FOUND as ImportJob does, before it
// writes anything.
func (s *Service) WriteRejectedCSV(ctx context.Context, p apikit.Principal, id string, w io.Writer) error {
	if _, err := s.importJob(ctx, p, id); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"line", "code", "reason"}); err != nil {
		return err
	}
	after := 0
	for {
		var rows []importReject
		err := s.db.NewSelect().Model(&rows).Where("import_id = ? AND line > ?", id, after).Order("line").Limit(rejectsPerStatement).Scan(ctx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := cw.Write([]string{strconv.Itoa(r.Line), r.Code, r.Reason}); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		if len(rows) < rejectsPerStatement {
			return nil
		}
		after = rows[len(rows)-1].Line
	}
}

// importJob reads the job with id, for ImportJob.
func (s *Service) importJob(ctx context.Context, p apikit.Principal, id string) (*ImportJob, error) {
	job, err := db.Visible(p, "Import", id, func() (*ImportJob, error) {
		j := new(ImportJob)
		err := s.db.NewSelect().Model(j).Where("im.workspace_id = ? AND im.id = ?", p.WorkspaceID, id).Scan(ctx)
		return j, err
	}, func(j *ImportJob) *string { return j.ClientID })
	if err != nil {
		return nil, err
	}
	if job.Status == ImportRunning && s.clock.Now().Sub(job.UpdatedAt) > importStale {
		if err := s.FailInterruptedImports(ctx); err != nil {
			return nil, err
		}
		return s.importJob(ctx, p, id)
	}
	job.Errors = []RowError{}
	return job, nil
}

// FailInterruptedImports marks failed the running jobs that have not
// written their counts for two minutes: the process running them stopped.
// The server calls it as it starts; reading such a job calls it too.
func (s *Service) FailInterruptedImports(ctx context.Context) error {
	now := s.clock.Now()
	_, err := s.db.NewUpdate().Model((*ImportJob)(nil)).
		Set("status = ?, error = ?, finished_at = ?", ImportFailed, importInterrupted, now).
		Where("status = ? AND updated_at < ?", ImportRunning, now.Add(-importStale)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("fail interrupted imports: %w", err)
	}
	return nil
}
