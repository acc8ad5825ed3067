package leads

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/leadline/leadline/apikit"
)

// ImportOptions say how a CSV file becomes leads.
type ImportOptions struct {
	// ClientID is set on every row's lead (filled only when empty, as
	// client_id always is).
	ClientID string
	// TagIDs tag every lead a row creates or updates.
	TagIDs []string
	// Map maps columns to fields, each "column=field": field is a lead
	// input field (email_work, linkedin_url, …), first_name or last_name,
	// custom.KEY, or "-" to leave the column out. Columns not named here
	// map by their header (see ImportFields); other columns are left out.
	Map []string
	// DryRun writes nothing and reports the counts a real run would give.
	DryRun bool
	// BatchSize is how many rows one transaction writes (default
	// DefaultImportBatch).
	BatchSize int
	// MaxErrors is how many row errors the report keeps (default 100);
	// every rejected row is counted, and handed to Progress.
	MaxErrors int
	// Progress, when set, is called after every batch.
	Progress func(ImportProgress)
}

// ImportProgress is how far an import got.
type ImportProgress struct {
	Rows  int   // rows read
	Bytes int64 // bytes of the file read
	Report
	// Rejects are the rows this batch rejected, every one of them.
	Rejects []RowError
}

// Report counts what an import did with the file's rows.
type Report struct {
	Rows      int `json:"rows" doc:"Rows read, not counting the header and blank rows."`
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Rejected  int `json:"rejected"`
	// Normalized counts rows imported after flattening, which the API
	// would have refused: see flattenCell.
	Normalized int `json:"normalized" doc:"Rows imported after a line break or tab in a one-line field (name, company, headline, …) became one space: spreadsheets put line breaks inside cells. Counted among created, updated and unchanged."`
}

// RowError is why one row was rejected.
type RowError struct {
	Line   int    `json:"line" doc:"The row's first line in the file (the header is line 1)."`
	Code   string `json:"code" doc:"The error code POST /v1/leads would answer, e.g. E_PAYLOAD_INVALID."`
	Reason string `json:"reason"`
}

// ImportReport is the outcome of an import.
type ImportReport struct {
	Report
	Errors []RowError `json:"errors" doc:"The first rejected rows (ImportOptions.MaxErrors), with their line and reason."`
	// Columns says what each header maps to ("-": left out).
	Columns map[string]string `json:"columns" doc:"What each column of the header maps to; \"-\" when it is left out."`
}

// ImportFields are the header names (compared without case, spaces,
// underscores, hyphens and dots) that map to a field without --map. A
// column with another name is left out unless mapped.
var ImportFields = map[string]string{
	"firstname": "first_name", "first": "first_name", "givenname": "first_name",
	"lastname": "last_name", "last": "last_name", "surname": "last_name", "familyname": "last_name",
	"name": "name", "fullname": "name", "contactname": "name",
	"email": "email_work", "emailaddress": "email_work", "workemail": "email_work", "businessemail": "email_work",
	"emailwork": "email_work", "workemailaddress": "email_work",
	"personalemail": "email_personal", "emailpersonal": "email_personal", "privateemail": "email_personal", "homeemail": "email_personal",
	"linkedin": "linkedin_url", "linkedinurl": "linkedin_url", "linkedinprofile": "linkedin_url", "linkedinprofileurl": "linkedin_url",
	"profileurl": "linkedin_url", "publicidentifier": "public_identifier",
	"linkedinid": "linkedin_id", "linkedinmemberid": "linkedin_id", "providerid": "provider_id",
	"company": "company", "companyname": "company", "organization": "company", "organisation": "company", "account": "company",
	"accountname": "company", "employer": "company",
	"title": "headline", "jobtitle": "headline", "headline": "headline", "position": "headline",
	"location": "location", "source": "source", "leadsource": "source",
	"listid": "list_id", "stageid": "stage_id",
	// Leads have no phone field: a phone column is kept in custom.
	"phone": "custom.phone", "phonenumber": "custom.phone", "mobile": "custom.phone", "telephone": "custom.phone",
}

// importTargets are the fields a column may map to.
var importTargets = []string{"first_name", "last_name", "name", "email_work", "email_personal", "linkedin_url", "public_identifier",
	"linkedin_id", "provider_id", "company", "headline", "location", "source", "list_id", "stage_id"}

// identityTargets are the fields that identify a lead.
var identityTargets = []string{"email_work", "email_personal", "linkedin_url", "public_identifier", "linkedin_id", "provider_id"}

// headerKey is how headers compare: lower case, without spaces,
// underscores, hyphens and dots.
func headerKey(h string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '_' || r == '-' || r == '.' {
			return -1
		}
		return unicode.ToLower(r)
	}, h)
}

// columnMapping is what each column of a file feeds.
type columnMapping struct {
	targets []string // per column: a target, custom.KEY or "" (left out)
	columns map[string]string
}

// mapColumns maps header to fields under the explicit maps.
func mapColumns(header []string, maps []string) (*columnMapping, error) {
	explicit := map[string]string{}
	names := map[string]string{}
	for _, m := range maps {
		col, field, ok := strings.Cut(m, "=")
		col, field = strings.TrimSpace(col), strings.TrimSpace(field)
		if !ok || col == "" || field == "" {
			return nil, apikit.Invalid(fmt.Sprintf("map %q is not column=field.", m),
				"Write each map as column=field, e.g. \"E-mail=email_work\", \"Notes=custom.notes\" or \"Fax=-\".")
		}
		if err := checkTarget(field); err != nil {
			return nil, err
		}
		explicit[headerKey(col)] = field
		names[headerKey(col)] = col
	}
	cm := &columnMapping{targets: make([]string, len(header)), columns: map[string]string{}}
	used := map[string]string{}
	seen := map[string]bool{}
	for i, h := range header {
		k := headerKey(h)
		if seen[k] && k != "" {
			return nil, apikit.Invalid(fmt.Sprintf("The header names column %q twice.", h), "Rename one of the columns.")
		}
		seen[k] = true
		t, ok := explicit[k]
		if !ok {
			t = ImportFields[k]
		}
		if t == "-" {
			t = ""
		}
		if t != "" {
			if prev, dup := used[t]; dup {
				return nil, apikit.Invalid(fmt.Sprintf("Columns %q and %q both map to %s.", prev, h, t),
					fmt.Sprintf("Leave one out with --map \"%s=-\" (map=%s%%3D- over HTTP).", h, h))
			}
			used[t] = h
		}
		cm.targets[i] = t
		cm.columns[h] = cmp(t, "-")
	}
	for k := range explicit {
		if !seen[k] {
			return nil, apikit.Invalid(fmt.Sprintf("map names column %q, which the header does not have.", names[k]),
				"Use the column's name as the file's first line writes it.")
		}
	}
	if !slices.ContainsFunc(identityTargets, func(t string) bool { _, ok := used[t]; return ok }) {
		return nil, apikit.Invalid("No column gives a lead's identity: an email, a LinkedIn URL, a public identifier, a LinkedIn id or a provider id.",
			"Name a column Email or LinkedIn URL, or map one with --map \"column=email_work\".")
	}
	return cm, nil
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func checkTarget(field string) error {
	if field == "-" || slices.Contains(importTargets, field) {
		return nil
	}
	if key, ok := strings.CutPrefix(field, "custom."); ok {
		if key == "" || len(key) > 100 {
			return apikit.Invalid(fmt.Sprintf("map target %q names no custom field.", field), "Write custom.KEY with a key of 1 to 100 characters.")
		}
		return nil
	}
	return apikit.Invalid(fmt.Sprintf("map target %q is not a lead field.", field),
		"Map to one of "+strings.Join(importTargets, ", ")+", custom.KEY, or - to leave the column out.")
}

// input is the lead input of one row, and whether a one-line field's
// line breaks or tabs became spaces (flattened).
func (cm *columnMapping) input(row []string) (in LeadInput, ok, flattened bool) {
	var first, last string
	empty := true
	for i, t := range cm.targets {
		if t == "" || i >= len(row) {
			continue
		}
		v := strings.TrimSpace(row[i])
		if v == "" {
			continue
		}
		if !strings.HasPrefix(t, "custom.") {
			var flat bool
			if v, flat = flattenCell(v); flat {
				flattened = true
			}
		}
		empty = false
		switch t {
		case "first_name":
			first = v
		case "last_name":
			last = v
		case "name":
			in.Name = &v
		case "email_work":
			in.EmailWork = &v
		case "email_personal":
			in.EmailPersonal = &v
		case "linkedin_url":
			in.LinkedInURL = &v
		case "public_identifier":
			in.PublicIdentifier = &v
		case "linkedin_id":
			in.LinkedInID = &v
		case "provider_id":
			in.ProviderID = &v
		case "company":
			in.Company = &v
		case "headline":
			in.Headline = &v
		case "location":
			in.Location = &v
		case "source":
			in.Source = &v
		case "list_id":
			in.ListID = &v
		case "stage_id":
			in.StageID = &v
		default:
			if in.Custom == nil {
				in.Custom = map[string]any{}
			}
			in.Custom[strings.TrimPrefix(t, "custom.")] = v
		}
	}
	if in.Name == nil && (first != "" || last != "") {
		n := strings.TrimSpace(first + " " + last)
		in.Name = &n
	}
	return in, !empty, flattened
}

// cellBreak is what flattenCell turns into a space: the line breaks a
// spreadsheet writes inside a cell (Alt+Enter in Excel) and tabs. Other
// control characters stay, and the row is refused as POST /v1/leads
// refuses them.
func cellBreak(c byte) bool { return c == '\n' || c == '\r' || c == '\t' }

// flattenCell returns v as one line: every run of line breaks and tabs,
// with the spaces around it, becomes one space. It reports whether v held
// any. It works on bytes (the characters it looks for are ASCII, never
// part of a longer UTF-8 sequence), so that text that is not UTF-8 stays
// as it is, for the row to be refused.
func flattenCell(v string) (string, bool) {
	if !strings.ContainsAny(v, "\n\r\t") {
		return v, false
	}
	out := make([]byte, 0, len(v))
	gap := false
	for i := range len(v) {
		c := v[i]
		switch {
		case cellBreak(c):
			out, gap = bytes.TrimRight(out, " "), true
		case c == ' ' && gap:
		default:
			if gap {
				out, gap = append(out, ' '), false
			}
			out = append(out, c)
		}
	}
	return strings.TrimSpace(string(out)), true
}

// importer reads a CSV file: UTF-8 with or without a byte order mark,
// fields separated by commas, semicolons or tabs (whichever the header
// line holds most of outside quotes), quoted fields over several lines.
type importer struct {
	counted *countingReader
	csv     *csv.Reader
	header  []string
	mapping *columnMapping
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

var bom = []byte{0xEF, 0xBB, 0xBF}

func newImporter(r io.Reader, maps []string) (*importer, error) {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 1<<16)
	if b, _ := br.Peek(3); bytes.Equal(b, bom) {
		_, _ = br.Discard(3)
	}
	first, _ := br.Peek(1 << 16)
	c := csv.NewReader(br)
	c.Comma = separator(first)
	c.FieldsPerRecord = -1
	header, err := c.Read()
	if errors.Is(err, io.EOF) {
		return nil, apikit.Invalid("The file is empty.", "Send a CSV file whose first line names the columns.")
	}
	if err != nil {
		return nil, apikit.Invalid(fmt.Sprintf("The header line cannot be read: %v.", err), "Check the file is CSV, with the column names on its first line.")
	}
	m, err := mapColumns(header, maps)
	if err != nil {
		return nil, err
	}
	return &importer{counted: cr, csv: c, header: header, mapping: m}, nil
}

// separator is the one of , ; and tab that the first line holds most of
// outside quotes (a comma when none).
func separator(b []byte) rune {
	counts := map[byte]int{}
	quoted := false
	for _, c := range b {
		if c == '"' {
			quoted = !quoted
		}
		if quoted {
			continue
		}
		if c == '\n' {
			break
		}
		if c == ',' || c == ';' || c == '\t' {
			counts[c]++
		}
	}
	best := byte(',')
	for _, c := range []byte{';', '\t'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return rune(best)
}

// row is one row of the file or why it cannot be read.
type row struct {
	line int
	in   LeadInput
	flat bool // a one-line field was flattened
	err  error
}

// next reads the next row with content; ok is false at the end.
func (im *importer) next() (row, bool, error) {
	for {
		rec, err := im.csv.Read()
		if errors.Is(err, io.EOF) {
			return row{}, false, nil
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return row{line: pe.StartLine, err: apikit.Invalid(fmt.Sprintf("The row is not valid CSV: %v.", pe.Err),
				"Quote fields that hold the separator, quotes or line breaks, and double the quotes inside them.")}, true, nil
		}
		if err != nil {
			return row{}, false, err
		}
		line, _ := im.csv.FieldPos(0)
		if len(rec) > len(im.header) {
			return row{line: line, err: apikit.Invalid(fmt.Sprintf("The row has %d fields; the header has %d.", len(rec), len(im.header)),
				"Quote fields that hold the separator, or remove the extra fields.")}, true, nil
		}
		in, ok, flat := im.mapping.input(rec)
		if !ok {
			continue // a row of empty fields
		}
		return row{line: line, in: in, flat: flat}, true, nil
	}
}

// Import creates or updates a lead for every row of a CSV file, with the
// rules of Upsert, in transactions of opt.BatchSize rows. A rejected row
// is counted and reported with its line and reason and changes nothing;
// the other rows go on. It returns E_PAYLOAD_INVALID for a file or options
// it cannot use (no header, a bad map, no identity column, unknown tags or
// client) before it writes anything.
func (s *Service) Import(ctx context.Context, p apikit.Principal, r io.Reader, opt ImportOptions) (*ImportReport, error) {
	im, b, err := s.startImport(ctx, p, r, opt)
	if err != nil {
		return nil, err
	}
	return s.runImport(ctx, im, b, opt)
}

// startImport reads the header and checks the options.
func (s *Service) startImport(ctx context.Context, p apikit.Principal, r io.Reader, opt ImportOptions) (*importer, *Batch, error) {
	if opt.ClientID != "" {
		if !apikit.ValidID(opt.ClientID) {
			return nil, nil, apikit.Invalid(fmt.Sprintf("client_id %q is not an id (a lower-case uuid).", opt.ClientID), "Use a client id from GET /v1/me.")
		}
		if err := s.checkRefs(ctx, p, &LeadInput{ClientID: &opt.ClientID}); err != nil {
			return nil, nil, err
		}
	}
	b, err := s.NewBatch(ctx, p, BatchOptions{TagIDs: opt.TagIDs, DryRun: opt.DryRun})
	if err != nil {
		return nil, nil, err
	}
	im, err := newImporter(r, opt.Map)
	if err != nil {
		return nil, nil, err
	}
	return im, b, nil
}

// batchOfRows is what the reader hands the writer: up to a batch of rows
// with content, each prepared or refused, in file order.
type batchOfRows struct {
	lines []int
	flat  []bool
	rows  []Prepared
	read  int   // rows read so far, blank rows left out
	bytes int64 // bytes of the file read so far
	err   error // why the file could not be read on
}

// readBatches reads the file on its own goroutine and hands on batches of
// size prepared rows (and the rows refused on the way, up to size more),
// so that reading, parsing and normalising the next rows overlap the
// writing of the last ones. It stops when ctx ends.
func (im *importer) readBatches(ctx context.Context, size int, clientID string) <-chan batchOfRows {
	out := make(chan batchOfRows, 2)
	go func() {
		defer close(out)
		var cur batchOfRows
		valid, read := 0, 0
		send := func() bool {
			cur.read, cur.bytes = read, im.counted.n
			select {
			case out <- cur:
				cur = batchOfRows{}
				valid = 0
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			r, ok, err := im.next()
			if err != nil {
				cur.err = err
				send()
				return
			}
			if !ok {
				if len(cur.rows) > 0 || read == 0 {
					send()
				}
				return
			}
			read++
			pr := Prepared{err: r.err}
			if r.err == nil {
				if clientID != "" {
					c := clientID
					r.in.ClientID = &c
				}
				pr = Prepare(r.in)
			}
			cur.lines = append(cur.lines, r.line)
			cur.flat = append(cur.flat, r.flat)
			cur.rows = append(cur.rows, pr)
			if pr.err == nil {
				valid++
			}
			if (valid >= size || len(cur.rows) >= 2*size) && !send() {
				return
			}
		}
	}()
	return out
}

// DefaultImportBatch is how many rows an import writes per transaction
// unless told otherwise. On SQLite every commit flushes the full-text
// index's pending terms into a new segment that later merges rewrite, so
// larger transactions cost less CPU per row
// (docs/performance/2026-11-25-csv-import.md, 2026-11-27); the price is
// the write lock held for the whole batch, which other writers wait for
// (busy_timeout, 10 s): 5,000 rows hold it about half a second on an idle
// core.
const DefaultImportBatch = 5000

func (s *Service) runImport(ctx context.Context, im *importer, b *Batch, opt ImportOptions) (*ImportReport, error) {
	size := cmp0(opt.BatchSize, DefaultImportBatch)
	maxErrs := cmp0(opt.MaxErrors, 100)
	rep := &ImportReport{Errors: []RowError{}, Columns: im.mapping.columns}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	for batch := range im.readBatches(rctx, size, opt.ClientID) {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		var rejects []RowError
		if len(batch.rows) > 0 {
			res, err := b.UpsertPrepared(ctx, batch.rows)
			if err != nil {
				return rep, err
			}
			for i, r := range res {
				switch r.Outcome {
				case Created:
					rep.Created++
				case Updated:
					rep.Updated++
				case Unchanged:
					rep.Unchanged++
				default:
					re := rowError(batch.lines[i], r.Err)
					rep.Rejected++
					rejects = append(rejects, re)
					if len(rep.Errors) < maxErrs {
						rep.Errors = append(rep.Errors, re)
					}
					continue
				}
				if batch.flat[i] {
					rep.Normalized++
				}
			}
		}
		rep.Rows = batch.read
		// Written rows are reported even when the file cannot be read on.
		if opt.Progress != nil && (batch.err == nil || len(batch.rows) > 0) {
			opt.Progress(ImportProgress{Rows: rep.Rows, Bytes: batch.bytes, Report: rep.Report, Rejects: rejects})
		}
		if batch.err != nil {
			return rep, batch.err
		}
	}
	return rep, ctx.Err()
}

// rowError is why a row was rejected, as POST /v1/leads would answer.
func rowError(line int, err error) RowError {
	re := RowError{Line: line, Code: string(apikit.EPayloadInvalid), Reason: err.Error()}
	var ae *apikit.Error
	if errors.As(err, &ae) {
		re.Code, re.Reason = string(ae.Code), ae.Message
	}
	return re
}

func cmp0(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
