package leads_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
)

// gatedFile is an uploaded file whose first read gives its header, first
// row and 64 KiB of empty lines (which CSV skips: the import reads the
// first 64 KiB before it starts), and whose next read waits for open to
// close: an import of it is under way until the test lets it go on.
type gatedFile struct {
	first, rest string
	open        chan struct{}
	r           io.Reader
}

func (f *gatedFile) Read(p []byte) (int, error) {
	if f.r == nil {
		f.r = strings.NewReader(f.first + strings.Repeat("\n", 1<<16))
	}
	n, err := f.r.Read(p)
	if err == io.EOF && f.open != nil {
		<-f.open
		f.r, f.open = strings.NewReader(f.rest), nil
		return f.r.Read(p)
	}
	return n, err
}

func (f *gatedFile) Close() error { return nil }

// TestDrainImports: a server shutting down waits for its background
// imports; one it has to stop records itself failed, with the rows it
// wrote (a batch is written whole or not at all) and a message to send the
// file again, and no import is left running.
func TestDrainImports(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		b := importSetup(t, d)
		is := is.New(t)
		log := slog.New(slog.DiscardHandler)
		count := func() int {
			page, err := b.svc.List(b.ctx, b.p, leads.Filter{Limit: 1})
			is.NoErr(err)
			return page.Total
		}

		// Stopped: it ends at its next batch and says so.
		f := &gatedFile{first: "email\na@acme.test\n", rest: "b@acme.test\nc@acme.test\n", open: make(chan struct{})}
		job, err := b.svc.StartImport(b.ctx, b.p, f, leads.ImportOptions{BatchSize: 1}, log)
		is.NoErr(err)
		b.svc.StopImports()
		close(f.open)
		is.NoErr(b.svc.DrainImports(context.Background()))
		got, err := b.svc.ImportJob(b.ctx, b.p, job.ID)
		is.NoErr(err)
		is.Equal(got.Status, leads.ImportFailed)
		is.True(got.Error != nil && strings.Contains(*got.Error, "The server shut down before the import ended"))
		is.True(got.FinishedAt != nil)
		is.True(got.Created <= 1) // at most the batch read before the stop
		is.Equal(count(), got.Created)

		// Waited for: a drain returns once the import has ended, and
		// a drain whose time is up stops it.
		f = &gatedFile{first: "email\nd@acme.test\n", rest: "e@acme.test\n", open: make(chan struct{})}
		job, err = b.svc.StartImport(b.ctx, b.p, f, leads.ImportOptions{}, log)
		is.NoErr(err)
		close(f.open)
		is.NoErr(b.svc.DrainImports(context.Background()))
		got, err = b.svc.ImportJob(b.ctx, b.p, job.ID)
		is.NoErr(err)
		is.Equal(got.Status, leads.ImportSucceeded)
		is.Equal(got.Created, 2)

		f = &gatedFile{first: "email\nf@acme.test\n", rest: "g@acme.test\n", open: make(chan struct{})}
		job, err = b.svc.StartImport(b.ctx, b.p, f, leads.ImportOptions{}, log)
		is.NoErr(err)
		up, cancel := context.WithCancel(context.Background())
		cancel()
		drained := make(chan error, 1)
		go func() { drained <- b.svc.DrainImports(up) }()
		close(f.open) // the file goes on; the import is stopped all the same, or has ended
		is.Equal(<-drained, context.Canceled)
		got, err = b.svc.ImportJob(b.ctx, b.p, job.ID)
		is.NoErr(err)
		is.True(got.Status != leads.ImportRunning)
	})
}
