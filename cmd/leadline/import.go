package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/workspace"
)

const importHelp = `Usage: leadline import FILE.csv --workspace NAME [--client NAME] [--map column=field]… [--tag NAME]… [--dry-run] [flags]

Creates or updates a lead for every row of a CSV file, with the rules of POST /v1/leads: matching by LinkedIn id,
provider id, work email, personal email (public identifier last), fields filled only when empty, do-not-contact
and blacklist checks. Rows are written in transactions of --batch rows; a bad row is reported with its line and
reason and changes nothing, the others go on. It ends with created, updated, unchanged and rejected counts.

The file is UTF-8, with or without a byte order mark; the separator (comma, semicolon or tab) is taken from
the header line; quoted fields may hold line breaks. Columns map to fields by their header, without regard to
case or spaces: First Name, Last Name, Name/Full Name, Email/Work Email, Personal Email, LinkedIn/LinkedIn URL,
Company, Title/Job Title, Location, Source, Phone (kept as custom.phone), and the lead fields' own names.
--map "column=field" maps a column by hand: field is a lead field, first_name, last_name, custom.KEY, or -
to leave the column out. Other columns are left out.
`

func cmdImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("import")
	name := fs.String("workspace", "", "workspace name")
	client := fs.String("client", "", "client of every imported lead (filled only when a lead has none)")
	var maps, tags multiFlag
	fs.Var(&maps, "map", "column=field (repeatable): a lead field, first_name, last_name, custom.KEY, or - to leave the column out")
	fs.Var(&tags, "tag", "tag every imported lead with this tag (repeatable)")
	dry := fs.Bool("dry-run", false, "write nothing; report the counts a real import would give")
	batch := fs.Int("batch", leads.DefaultImportBatch, "rows per transaction")
	// The file comes first or last: flag parsing stops at the first
	// argument that is not a flag.
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return parse(fs, args)
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("import: unexpected argument %q", fs.Arg(0))}
	}
	if file == "" {
		return usageError{"import: name the CSV file to import"}
	}
	if *name == "" {
		return usageError{"import: --workspace is required"}
	}
	if *batch < 1 {
		return usageError{"import: --batch must be a positive number"}
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	d, w, err := openWorkspace(ctx, *dsn, *name)
	if err != nil {
		return err
	}
	defer d.Close()
	pl := platform.New(platform.Config{DB: d})
	p := apikit.Principal{WorkspaceID: w.ID, WorkspaceName: w.Name, Timezone: w.Timezone, Role: apikit.RoleOwner}
	ctx = apikit.WithPrincipal(ctx, p)
	cat, err := pl.Workspaces.Catalog(ctx, p)
	if err != nil {
		return err
	}
	opt := leads.ImportOptions{Map: maps, DryRun: *dry, BatchSize: *batch}
	if *client != "" {
		if opt.ClientID, err = namedID(cat.Clients, "client", *client, w.Name); err != nil {
			return err
		}
	}
	for _, t := range tags {
		id, err := namedID(cat.Tags, "tag", t, w.Name)
		if err != nil {
			return err
		}
		opt.TagIDs = append(opt.TagIDs, id)
	}
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	opt.Progress = progress(stderr, size)
	start := time.Now()
	rep, err := pl.Leads.Import(ctx, p, f, opt)
	if err != nil {
		return err
	}
	took := time.Since(start)
	verb := "imported"
	if *dry {
		verb = "dry run: would import"
	}
	fmt.Fprintf(stdout, "%s %d rows in %s (%.0f rows/s): %d created, %d updated, %d unchanged, %d rejected\n",
		verb, rep.Rows, took.Round(time.Millisecond), float64(rep.Rows)/max(took.Seconds(), 1e-9), rep.Created, rep.Updated, rep.Unchanged, rep.Rejected)
	if rep.Normalized > 0 {
		fmt.Fprintf(stdout, "%d of them had line breaks or tabs in one-line fields, imported as spaces\n", rep.Normalized)
	}
	var left []string
	for col, field := range rep.Columns {
		if field == "-" {
			left = append(left, fmt.Sprintf("%q", col))
		}
	}
	if len(left) > 0 {
		fmt.Fprintf(stdout, "columns left out: %s (map them with --map column=field)\n", strings.Join(left, ", "))
	}
	for _, e := range rep.Errors {
		fmt.Fprintf(stdout, "line %d: %s\n", e.Line, e.Reason)
	}
	if rep.Rejected > len(rep.Errors) {
		fmt.Fprintf(stdout, "… and %d more rejected rows\n", rep.Rejected-len(rep.Errors))
	}
	return nil
}

// namedID finds the id of the entry called name (case-insensitive).
func namedID(list []workspace.Named, kind, name, ws string) (string, error) {
	for _, n := range list {
		if strings.EqualFold(n.Name, name) {
			return n.ID, nil
		}
	}
	return "", apikit.Invalid(fmt.Sprintf("Workspace %q has no %s %q.", ws, kind, name),
		fmt.Sprintf("Check the name, or add the %s to the setup file and run `leadline apply`.", kind))
}

// progress shows a progress bar on a terminal and a plain line every few
// seconds elsewhere.
func progress(w io.Writer, size int64) func(leads.ImportProgress) {
	if f, ok := w.(*os.File); ok && size > 0 {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			bar := progressbar.NewOptions64(size, progressbar.OptionSetWriter(w), progressbar.OptionShowBytes(true),
				progressbar.OptionSetDescription("importing"), progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
			return func(p leads.ImportProgress) { _ = bar.Set64(p.Bytes) }
		}
	}
	last := time.Now()
	return func(p leads.ImportProgress) {
		if time.Since(last) < 2*time.Second {
			return
		}
		last = time.Now()
		pct := ""
		if size > 0 {
			pct = fmt.Sprintf(" (%.0f%%)", 100*float64(p.Bytes)/float64(size))
		}
		fmt.Fprintf(w, "import: %d rows read%s: %d created, %d updated, %d unchanged, %d rejected\n",
			p.Rows, pct, p.Created, p.Updated, p.Unchanged, p.Rejected)
	}
}
