package console

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/reports"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// The reports: the overview (every metric over the period, with sends,
// replies and acceptances over time), the funnel and the intents on one
// page, and one page per sequence, sender and client. Each calls the
// reports service as its GET /v1/reports route does, with the same
// period (local dates in the workspace's timezone) and filters, so the
// numbers are the API's. Every chart is a <canvas> with its numbers in
// data- attributes, drawn by app.js, beside a table that holds the same
// numbers; every table downloads as CSV (GET /reports/export).
func (c *Console) routesReports() {
	c.handle("GET /reports", apikit.RoleClientViewer, c.reportsPage)
	c.handle("GET /reports/export", apikit.RoleClientViewer, c.reportExport)
	for _, kind := range []string{reports.Sequences, reports.Senders, reports.Clients} {
		c.handle("GET /reports/"+kind, apikit.RoleClientViewer, func(rq *Request) error { return c.reportListPage(rq, kind) })
	}
}

// reportFilter is the period and filter form, as typed.
type reportFilter struct {
	From, To, ClientID, SequenceID, SenderID, Channel, Interval string
}

func readReportFilter(q url.Values) reportFilter {
	return reportFilter{From: strings.TrimSpace(q.Get("from")), To: strings.TrimSpace(q.Get("to")), ClientID: q.Get("client_id"),
		SequenceID: q.Get("sequence_id"), SenderID: q.Get("sender_id"), Channel: q.Get("channel"), Interval: q.Get("interval")}
}

// params are the service's parameters of the form, as the API's
// ReportPeriod makes them.
func (f reportFilter) params(interval bool) reports.Params {
	p := reports.Params{From: f.From, To: f.To, ClientID: listID(f.ClientID), SequenceID: listID(f.SequenceID), SenderID: listID(f.SenderID)}
	if f.Channel == string(senders.LinkedIn) || f.Channel == string(senders.Email) {
		p.Channel = f.Channel
	}
	if interval {
		p.Interval = f.Interval
	}
	return p
}

// metricCol is a metric as a column: its key, label and unit.
type metricCol struct{ Key, Label, Unit string }

// tableMetrics are the metrics the per-subject tables and the series
// show, in order.
var tableMetrics = []string{"sends.total", "leads.contacted", "invites.accepted", "acceptance_rate", "replies", "reply_rate",
	"positive_reply_rate", "meetings.booked", "meeting_rate", "emails.bounced", "bounce_rate", "cost.total"}

// chartMetrics are the series the overview's chart draws.
var chartMetrics = []string{"sends.total", "replies", "invites.accepted"}

func cols(keys []string) []metricCol {
	defs := reports.Definitions()
	out := make([]metricCol, 0, len(keys))
	for _, k := range keys {
		out = append(out, metricCol{Key: k, Label: defs[k].Label, Unit: defs[k].Unit})
	}
	return out
}

// allCols are every metric of the definitions, by key.
func allCols() []metricCol {
	defs := reports.Definitions()
	keys := make([]string, 0, len(defs))
	for k := range defs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return cols(keys)
}

// raw is a metric's value as the API's JSON has it; "" for null.
func raw(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// shown is a metric's value for people: counts whole, ratios as
// percentages, dollars with cents, seconds as a duration; "—" for null.
func shown(v *float64, unit string) string {
	if v == nil {
		return "—"
	}
	switch unit {
	case "ratio":
		return strconv.FormatFloat(*v*100, 'f', 1, 64) + "%"
	case "usd":
		return "$" + strconv.FormatFloat(*v, 'f', 2, 64)
	case "seconds":
		s := int64(math.Round(*v))
		return fmt.Sprintf("%dh %02dm", s/3600, s%3600/60)
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// cell is one table cell: the value shown and the API's raw value.
type cell struct{ Shown, Raw string }

// reportTable is a table of a report page, with its CSV download's
// address.
type reportTable struct {
	Name    string
	Caption string
	Head    []string
	Rows    [][]cell
	CSV     string
}

// chart is a chart's data for app.js: its kind, labels and datasets, as
// JSON in data- attributes.
type chart struct {
	Kind, Label string
	Labels      string
	Datasets    string
}

type dataset struct {
	Label string     `json:"label"`
	Data  []*float64 `json:"data"`
}

func newChart(kind, label string, labels []string, sets []dataset) chart {
	l, _ := json.Marshal(labels)
	s, _ := json.Marshal(sets)
	return chart{Kind: kind, Label: label, Labels: string(l), Datasets: string(s)}
}

type reportChoices struct {
	Clients   []workspace.Named
	Sequences []sequences.Ref
	Senders   []senders.Ref
}

type reportsData struct {
	Filter  reportFilter
	Choices reportChoices
	// Kind is the page: "" for the overview, else sequences, senders or
	// clients.
	Kind     string
	Period   reports.Period
	Charts   []chart
	Tables   []reportTable
	Pager    *Pager
	Subjects []string
}

func (c *Console) reportChoices(rq *Request) (reportChoices, error) {
	var ch reportChoices
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return ch, err
	}
	// Names and ids alone, of the sequences and senders the report lists
	// show the member (reports.Service.List reads the same).
	qs, err := c.pl.Sequences.Refs(rq.Ctx, rq.P.WorkspaceID, nil)
	if err != nil {
		return ch, err
	}
	ss, err := c.pl.Senders.Refs(rq.Ctx, rq.P.WorkspaceID, nil)
	if err != nil {
		return ch, err
	}
	hidden := func(client *string) bool { return !rq.P.SeesClient(apikit.Deref(client)) }
	qs = slices.DeleteFunc(qs, func(r sequences.Ref) bool { return hidden(r.ClientID) })
	ss = slices.DeleteFunc(ss, func(r senders.Ref) bool { return hidden(r.ClientID) })
	return reportChoices{Clients: cat.Clients, Sequences: qs, Senders: ss}, nil
}

// exportLink is the CSV download of table with the page's filters.
func (rq *Request) exportLink(table string, f reportFilter) string {
	v := url.Values{"table": {table}}
	for k, x := range map[string]string{"from": f.From, "to": f.To, "client_id": f.ClientID, "sequence_id": f.SequenceID,
		"sender_id": f.SenderID, "channel": f.Channel, "interval": f.Interval} {
		if x != "" {
			v.Set(k, x)
		}
	}
	return rq.Path("/reports/export?" + v.Encode())
}

// overviewTables reads the overview, funnel and intents of the filter
// and makes their tables (and, with charts, their charts).
func (c *Console) overviewTables(rq *Request, f reportFilter) (*reportsData, error) {
	d := &reportsData{Filter: f}
	ov, fn, in, err := c.pl.Reports.Dashboard(rq.Ctx, rq.P, f.params(true))
	if err != nil {
		return d, err
	}
	d.Period = reports.Period{From: ov.From, To: ov.To, Timezone: ov.Timezone}

	// Over time: sends, replies and acceptances per day or week.
	series := reportTable{Name: "series", Caption: "Sends, replies and acceptances per " + ov.Interval, Head: []string{"Date"}, CSV: rq.exportLink("series", f)}
	labels := make([]string, 0, len(ov.Series))
	sets := make([]dataset, len(chartMetrics))
	chartCols := cols(chartMetrics)
	for i, m := range chartCols {
		series.Head = append(series.Head, m.Label)
		sets[i].Label = m.Label
	}
	for _, pt := range ov.Series {
		labels = append(labels, pt.Date)
		row := []cell{{Shown: pt.Date, Raw: pt.Date}}
		for i, m := range chartCols {
			v := pt.Metrics[m.Key]
			sets[i].Data = append(sets[i].Data, v)
			row = append(row, cell{Shown: shown(v, m.Unit), Raw: raw(v)})
		}
		series.Rows = append(series.Rows, row)
	}
	d.Charts = append(d.Charts, newChart("line", series.Caption, labels, sets))

	// The funnel.
	funnel := reportTable{Name: "funnel", Caption: "Funnel", Head: []string{"Stage", "Count", "Conversion"}, CSV: rq.exportLink("funnel", f)}
	var fl []string
	var fd []*float64
	for _, s := range fn.Stages {
		n := float64(s.Count)
		fl, fd = append(fl, s.Stage), append(fd, &n)
		funnel.Rows = append(funnel.Rows, []cell{{s.Stage, s.Stage}, {shown(&n, "count"), raw(&n)}, {shown(s.Conversion, "ratio"), raw(s.Conversion)}})
	}
	d.Charts = append(d.Charts, newChart("bar", "Funnel", fl, []dataset{{Label: "Count", Data: fd}}))

	// Intents.
	intents := reportTable{Name: "intents", Caption: fmt.Sprintf("Replies per intent (%d replies)", in.Replies), Head: []string{"Intent", "Replies", "Share"},
		CSV: rq.exportLink("intents", f)}
	var il []string
	var id []*float64
	for _, i := range in.Intents {
		n := float64(i.Count)
		il, id = append(il, i.Intent), append(id, &n)
		intents.Rows = append(intents.Rows, []cell{{i.Intent, i.Intent}, {shown(&n, "count"), raw(&n)}, {shown(i.Share, "ratio"), raw(i.Share)}})
	}
	d.Charts = append(d.Charts, newChart("bar", "Replies per intent", il, []dataset{{Label: "Replies", Data: id}}))

	// Every metric's total.
	totals := reportTable{Name: "totals", Caption: "Every metric over the period", Head: []string{"Metric", "Key", "Value"}, CSV: rq.exportLink("totals", f)}
	for _, m := range allCols() {
		v := ov.Totals[m.Key]
		totals.Rows = append(totals.Rows, []cell{{m.Label, m.Label}, {m.Key, m.Key}, {shown(v, m.Unit), raw(v)}})
	}
	d.Tables = []reportTable{series, funnel, intents, totals}
	return d, nil
}

// listTable reads the per-subject report of kind.
func (c *Console) listTable(rq *Request, kind string, f reportFilter, limit, offset int) (reportTable, int, error) {
	t := reportTable{Name: kind, Caption: "Per " + strings.TrimSuffix(kind, "s"), Head: []string{"Name"}, CSV: rq.exportLink(kind, f)}
	page, err := c.pl.Reports.List(rq.Ctx, rq.P, kind, f.params(false), reports.ListParams{Limit: limit, Offset: offset})
	if err != nil {
		return t, 0, err
	}
	mc := cols(tableMetrics)
	for _, m := range mc {
		t.Head = append(t.Head, m.Label)
	}
	for _, r := range page.Data {
		row := []cell{{r.Name, r.Name}}
		for _, m := range mc {
			row = append(row, cell{shown(r.Metrics[m.Key], m.Unit), raw(r.Metrics[m.Key])})
		}
		t.Rows = append(t.Rows, row)
	}
	return t, page.Total, nil
}

func (c *Console) reportsPage(rq *Request) error {
	return c.reportPage(rq, "", func(f reportFilter, d *reportsData) (*reportsData, error) { return c.overviewTables(rq, f) })
}

func (c *Console) reportListPage(rq *Request, kind string) error {
	return c.reportPage(rq, kind, func(f reportFilter, d *reportsData) (*reportsData, error) {
		q := rq.R.URL.Query()
		offset, _ := strconv.Atoi(q.Get("offset"))
		offset = max(offset, 0)
		const limit = apikit.DefaultLimit
		t, total, err := c.listTable(rq, kind, f, limit, offset)
		if err != nil {
			return d, err
		}
		d.Tables = []reportTable{t}
		pg := newPager(rq.Path("/reports/"+kind), q, total, limit, offset, len(t.Rows))
		d.Pager = &pg
		return d, nil
	})
}

// reportPage renders a report page; a refused period or filter (a bad
// date, another client) is shown above the form, as typed.
func (c *Console) reportPage(rq *Request, kind string, read func(reportFilter, *reportsData) (*reportsData, error)) error {
	f := readReportFilter(rq.R.URL.Query())
	ch, err := c.reportChoices(rq)
	if err != nil {
		return err
	}
	d, err := read(f, &reportsData{Filter: f})
	if d == nil {
		d = &reportsData{Filter: f}
	}
	d.Choices, d.Kind, d.Subjects = ch, kind, []string{reports.Sequences, reports.Senders, reports.Clients}
	pg := page{Title: "Reports", Nav: "reports", Data: d}
	if err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal {
			return err
		}
		pg.Error, d.Charts, d.Tables, d.Pager = ae, nil, nil, nil
		return rq.Render(StatusOf(ae.Code), "reports", pg)
	}
	return rq.Render(http.StatusOK, "reports", pg)
}

// reportExport answers one table of a report page as CSV, with the API's
// raw numbers (ratios 0 to 1, empty for null).
func (c *Console) reportExport(rq *Request) error {
	q := rq.R.URL.Query()
	f := readReportFilter(q)
	table := q.Get("table")
	var t reportTable
	switch table {
	case "series", "funnel", "intents", "totals":
		d, err := c.overviewTables(rq, f)
		if err != nil {
			return err
		}
		for _, x := range d.Tables {
			if x.Name == table {
				t = x
			}
		}
	case reports.Sequences, reports.Senders, reports.Clients:
		var rows [][]cell
		for offset := 0; ; offset += apikit.MaxLimit {
			part, total, err := c.listTable(rq, table, f, apikit.MaxLimit, offset)
			if err != nil {
				return err
			}
			t, rows = part, append(rows, part.Rows...)
			if offset+apikit.MaxLimit >= total {
				break
			}
		}
		t.Rows = rows
	default:
		return apikit.Invalid(fmt.Sprintf("There is no report table %q.", table),
			"Use the Download CSV link under a table of the reports pages.")
	}
	w := rq.W
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="leadline-%s.csv"`, table))
	cw := csv.NewWriter(w)
	_ = cw.Write(t.Head)
	for _, r := range t.Rows {
		rec := make([]string, len(r))
		for i, x := range r {
			rec[i] = csvSafe(x.Raw)
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// csvSafe keeps a text a spreadsheet would run as a formula (=, +, -, @
// first) as text; numbers stay as they are.
func csvSafe(s string) string {
	if s == "" || !strings.ContainsAny(s[:1], "=+-@\t\r") {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}
