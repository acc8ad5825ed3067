package reports

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// MaxDays is the longest period a report covers.
const MaxDays = 366

// DefaultDays is the period a report covers when from is left out.
const DefaultDays = 30

// Params are a report's period and filters. From and To are local dates
// (YYYY-MM-DD) in the workspace's timezone, both included.
type Params struct {
	From, To   string
	ClientID   string
	SequenceID string
	SenderID   string
	Channel    string
	// Interval is the length of a series point: day (the default) or week
	// (weeks start on Monday; a point's date is its Monday).
	Interval string
}

// Metrics are metric values by metric key. A ratio whose denominator is 0,
// and a median or cost per unit of nothing, is null.
type Metrics map[string]*float64

// Point is one day or week of a series.
type Point struct {
	Date    string  `json:"date" doc:"The local date the point starts on (a Monday for weekly series)."`
	Metrics Metrics `json:"metrics"`
}

// Report is a period's totals and series.
type Report struct {
	From     string  `json:"from" doc:"First local date of the period."`
	To       string  `json:"to" doc:"Last local date of the period, included."`
	Timezone string  `json:"timezone" doc:"The workspace's timezone, in which the dates are local."`
	Interval string  `json:"interval" enum:"day,week"`
	Totals   Metrics `json:"totals" doc:"Every metric of GET /v1/metrics/definitions over the period."`
	Series   []Point `json:"series" doc:"The metrics per day or week, oldest first, every point of the period present."`
}

// scope is a report's resolved period, filters and key scope.
type scope struct {
	ws       string
	loc      *time.Location
	tz       string
	from, to string
	// start and end are the period's instants: local midnight of from,
	// and of the day after to.
	start, end time.Time
	today      string
	interval   string
	clients    []string // nil: every client; otherwise only these
	sequence   string
	senders    []string // nil: every sender; otherwise only these
	empty      bool     // the filters match nothing
}

// resolve checks the period and the filters against p's scope. A client
// filter outside a scoped key's clients is 403; a sequence, sender or
// client that does not exist or that the key may not see is 404.
func (svc *Service) resolve(ctx context.Context, p apikit.Principal, prm Params) (*scope, error) {
	w, err := svc.areas.Workspaces.WorkspaceByID(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	tz := w.Timezone
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, err
	}
	sc := &scope{ws: p.WorkspaceID, loc: loc, tz: tz, today: dayOf(svc.clock.Now(), loc), interval: prm.Interval}
	if sc.interval == "" {
		sc.interval = "day"
	}
	if sc.interval != "day" && sc.interval != "week" {
		return nil, apikit.Invalid("interval must be day or week.", "Leave interval out for daily points, or send interval=week.")
	}
	sc.to = prm.To
	if sc.to == "" {
		sc.to = sc.today
	}
	to, err := time.Parse(time.DateOnly, sc.to)
	if err != nil {
		return nil, apikit.Invalid(fmt.Sprintf("to %q is not a date.", prm.To), "Send dates as YYYY-MM-DD, in the workspace's timezone.")
	}
	sc.from = prm.From
	if sc.from == "" {
		sc.from = to.AddDate(0, 0, -(DefaultDays - 1)).Format(time.DateOnly)
	}
	from, err := time.Parse(time.DateOnly, sc.from)
	if err != nil {
		return nil, apikit.Invalid(fmt.Sprintf("from %q is not a date.", prm.From), "Send dates as YYYY-MM-DD, in the workspace's timezone.")
	}
	sc.start = time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, loc)
	sc.end = time.Date(to.Year(), to.Month(), to.Day()+1, 0, 0, 0, 0, loc)
	if from.After(to) {
		return nil, apikit.Invalid("from is after to.", "Send a from on or before to.")
	}
	if days := int(to.Sub(from).Hours()/24) + 1; days > MaxDays {
		return nil, &apikit.Error{Code: apikit.ETooMany, Message: fmt.Sprintf("The period has %d days; a report covers at most %d.", days, MaxDays),
			Remedy: "Ask for a shorter period, and add periods up if you need more."}
	}
	if err := apikit.CheckClientFilter(p, prm.ClientID); err != nil {
		return nil, err
	}
	if prm.ClientID != "" {
		found, err := svc.areas.Workspaces.Named(ctx, p.WorkspaceID, workspace.Clients, []string{prm.ClientID})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, apikit.NotFound("Client")
		}
		sc.clients = []string{prm.ClientID}
	} else if p.Scoped() {
		sc.clients = p.ClientIDs
	}
	if prm.SequenceID != "" {
		if _, err := svc.visibleSequence(ctx, p, prm.SequenceID); err != nil {
			return nil, err
		}
		sc.sequence = prm.SequenceID
	}
	if prm.SenderID != "" {
		if _, err := svc.visibleSender(ctx, p, prm.SenderID); err != nil {
			return nil, err
		}
		sc.senders = []string{prm.SenderID}
	}
	if prm.Channel != "" {
		if prm.Channel != "linkedin" && prm.Channel != "email" {
			return nil, apikit.Invalid("channel must be linkedin or email.", "Send channel=linkedin or channel=email, or leave it out.")
		}
		refs, err := svc.areas.Senders.Refs(ctx, p.WorkspaceID, nil)
		if err != nil {
			return nil, err
		}
		var ids []string // nil when no sender has the channel: then no sender filter, as before
		for _, r := range refs {
			if string(r.Channel) == prm.Channel {
				ids = append(ids, r.ID)
			}
		}
		if sc.senders != nil {
			ids = slices.DeleteFunc(ids, func(id string) bool { return !slices.Contains(sc.senders, id) })
		}
		sc.senders = ids
	}
	sc.empty = (sc.senders != nil && len(sc.senders) == 0) || (sc.clients != nil && len(sc.clients) == 0)
	return sc, nil
}

// visibleSequence returns the sequence id if p may see it. Returns
// E_NOT_FOUND otherwise.
func (svc *Service) visibleSequence(ctx context.Context, p apikit.Principal, id string) (*sequences.Sequence, error) {
	q, err := svc.areas.Sequences.Visible(ctx, p, id)
	if apikit.ErrorCode(err) == apikit.ENotFound {
		return nil, apikit.NotFound("Sequence")
	}
	return q, err
}

// visibleSender returns the sender id if p may see it. Returns
// E_NOT_FOUND otherwise.
func (svc *Service) visibleSender(ctx context.Context, p apikit.Principal, id string) (*senders.Sender, error) {
	s, err := svc.areas.Senders.Visible(ctx, p, id)
	if apikit.ErrorCode(err) == apikit.ENotFound {
		return nil, apikit.NotFound("Sender")
	}
	return s, err
}

// filter narrows a query on a rollup table to the scope.
func (sc *scope) filter(q *bun.SelectQuery) *bun.SelectQuery {
	return sc.subjects(q.Where("workspace_id = ?", sc.ws).Where("day >= ? AND day <= ?", sc.from, sc.to))
}

// subjects narrows q to the clients, sequence and senders of the scope.
func (sc *scope) subjects(q *bun.SelectQuery) *bun.SelectQuery {
	if sc.empty {
		return q.Where("1 = 0")
	}
	if sc.clients != nil {
		q = q.Where("client_id IN (?)", bun.In(sc.clients))
	}
	if sc.sequence != "" {
		q = q.Where("sequence_id = ?", sc.sequence)
	}
	if sc.senders != nil {
		q = q.Where("sender_id IN (?)", bun.In(sc.senders))
	}
	return q
}

// bucket is the series point a local date falls in.
func (sc *scope) bucket(day string) string {
	if sc.interval == "day" {
		return day
	}
	t, _ := time.Parse(time.DateOnly, day)
	back := (int(t.Weekday()) + 6) % 7 // days since Monday
	return t.AddDate(0, 0, -back).Format(time.DateOnly)
}

// wholeWeeks are the first and last days (a Monday, a Sunday) of the
// whole weeks in the period, if it holds one.
func (sc *scope) wholeWeeks() (first, last string, ok bool) {
	from, err1 := time.Parse(time.DateOnly, sc.from)
	to, err2 := time.Parse(time.DateOnly, sc.to)
	if err1 != nil || err2 != nil {
		return "", "", false
	}
	monday := from.AddDate(0, 0, (8-int(from.Weekday()))%7)
	sunday := to.AddDate(0, 0, -int(to.Weekday()))
	if sunday.Before(monday) {
		return "", "", false
	}
	return monday.Format(time.DateOnly), sunday.Format(time.DateOnly), true
}

// days are the local dates of the period, oldest first.
func (sc *scope) days() []string {
	from, _ := time.Parse(time.DateOnly, sc.from)
	to, _ := time.Parse(time.DateOnly, sc.to)
	var out []string
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format(time.DateOnly))
	}
	return out
}

// cell is what one subject did in one series point, or in the period.
type cell struct {
	counts map[string]int64
	ttr    []int64
	cost   float64
}

func newCell() *cell { return &cell{counts: map[string]int64{}} }

// agg is one subject's cells: per series point and over the period.
type agg struct {
	points map[string]*cell
	total  *cell
}

func (a *agg) point(b string) *cell {
	c := a.points[b]
	if c == nil {
		c = newCell()
		a.points[b] = c
	}
	return c
}

// aggregate reads the rollups in the scope, per subject of the column
// group ("" for one subject: everything in the scope). Without series it
// reads the period's totals alone: no points.
func (svc *Service) aggregate(ctx context.Context, sc *scope, group string, series bool) (*aggregation, error) {
	out := map[string]*agg{}
	senders := map[string]*SenderUse{}
	get := func(g string) *agg {
		a := out[g]
		if a == nil {
			a = &agg{points: map[string]*cell{}, total: newCell()}
			out[g] = a
		}
		return a
	}
	col := "''"
	if group != "" {
		col = group
	}
	idb := svc.db.IDB(ctx)
	// One pass over the period's rows: every metric per subject and point,
	// and the actions per sender and day that the costs split by.
	grain := sc.grain(group)
	from := "report_daily"
	switch {
	case grain != grainClient && grain != grainSender && sc.sequence != "":
		from = svc.db.IndexedBy("report_daily", "report_daily_sequence")
	case grain != grainClient && grain != grainSequence && sc.senders != nil && len(sc.senders) <= 50:
		from = svc.db.IndexedBy("report_daily", "report_daily_sender")
	}
	// Each sender's actions come per day: from its sends.* rows where the
	// grain has senders, from its SenderSends rows where it has none.
	perSender := "metric LIKE 'sender:%'"
	if grain == grainSubject || grain == grainSender {
		perSender = "metric LIKE 'sends.%'"
	}
	// Totals alone need the days of those rows only: the other metrics
	// sum over the period in the database. The totals per sender take each
	// sender's actions per day from the client grain's SenderSends rows
	// (senderShares): fewer rows than its own, one per action.
	byClientGrain := !series && grain == grainSender && group == "sender_id"
	day := "day"
	switch {
	case byClientGrain:
		day = "''"
	case !series:
		day = "CASE WHEN " + perSender + " THEN day ELSE '' END"
	}
	q := idb.NewSelect().TableExpr(from).ColumnExpr(col + " AS g").ColumnExpr(day + " AS d").Column("metric")
	if first, last, ok := sc.wholeWeeks(); ok && grain != grainSubject && (!series || sc.interval == "week") {
		// The period's whole weeks from the week rows, its days before
		// and after them from the day rows, with the per-sender metrics
		// whose days split the costs (none when the totals per sender
		// take them from the client grain).
		weeks, days := "grain = ? AND day <= ?", "grain = ? AND (day < ? OR day > ?)"
		if !byClientGrain {
			weeks, days = weeks+" AND NOT ("+perSender+")", "grain = ? AND (day < ? OR day > ? OR "+perSender+")"
		}
		q = q.Where("workspace_id = ? AND grain IN (?, ?) AND day >= ? AND day <= ?", sc.ws, grain, weekly(grain), sc.from, sc.to).
			Where("("+weeks+") OR ("+days+")", weekly(grain), weekOf(last), grain, first, last)
	} else {
		q = q.Where("workspace_id = ? AND grain = ? AND day >= ? AND day <= ?", sc.ws, grain, sc.from, sc.to)
	}
	q = sc.subjects(q)
	if grain == grainSubject || grain == grainSender {
		q = q.ColumnExpr("CASE WHEN metric LIKE 'sends.%' THEN sender_id ELSE '' END AS sender").GroupExpr(groupBy(group, "d, metric, sender"))
	} else {
		q = q.ColumnExpr("'' AS sender").GroupExpr(groupBy(group, "d, metric"))
	}
	rows, err := q.ColumnExpr("SUM(value) AS value").Rows(ctx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	shares := map[daySender]map[string]int64{}
	share := func(k daySender, g string, n int64) {
		if shares[k] == nil {
			shares[k] = map[string]int64{}
		}
		shares[k][g] += n
	}
	// The rows are read by hand: a year of a large workspace is tens of
	// thousands of them.
	var r struct {
		G, Day, Metric, Sender string
		Value                  int64
	}
	for rows.Next() {
		if err := rows.Scan(&r.G, &r.Day, &r.Metric, &r.Sender, &r.Value); err != nil {
			return nil, err
		}
		if sender, ok := senderOf(r.Metric); ok {
			share(daySender{r.Day, sender}, r.G, r.Value)
			continue
		}
		a := get(r.G)
		a.total.counts[r.Metric] += r.Value
		if series {
			a.point(sc.bucket(r.Day)).counts[r.Metric] += r.Value
		}
		if isSends(r.Metric) {
			// sends.total is the sum of the actions, not a row of its own.
			a.total.counts["sends.total"] += r.Value
			if series {
				a.point(sc.bucket(r.Day)).counts["sends.total"] += r.Value
			}
			if (grain == grainSubject || grain == grainSender) && !byClientGrain {
				share(daySender{r.Day, r.Sender}, r.G, r.Value)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if byClientGrain {
		if err := svc.senderShares(ctx, sc, share); err != nil {
			return nil, err
		}
	}
	var ttrs []struct {
		G   string `bun:"g"`
		Day string `bun:"day"`
		TTR int64  `bun:"time_to_reply"`
	}
	threads := "report_threads"
	switch {
	case sc.sequence != "":
		threads = svc.db.IndexedBy("report_threads", "report_threads_sequence")
	case sc.senders != nil && len(sc.senders) <= 50:
		threads = svc.db.IndexedBy("report_threads", "report_threads_sender")
	}
	q = sc.filter(idb.NewSelect().TableExpr(threads).ColumnExpr(col+" AS g").Column("day", "time_to_reply")).
		Where("time_to_reply IS NOT NULL")
	if err := q.Scan(ctx, &ttrs); err != nil {
		return nil, err
	}
	for _, r := range ttrs {
		a := get(r.G)
		if series {
			c := a.point(sc.bucket(r.Day))
			c.ttr = append(c.ttr, r.TTR)
		}
		a.total.ttr = append(a.total.ttr, r.TTR)
	}
	if err := svc.costs(ctx, sc, group, shares, get, senders); err != nil {
		return nil, err
	}
	return &aggregation{groups: out, senders: senders}, nil
}

// senderShares shares each sender's actions per day in the scope to the
// sender itself, from the client grain's SenderSends rows.
func (svc *Service) senderShares(ctx context.Context, sc *scope, share func(daySender, string, int64)) error {
	var rows []struct {
		Day    string `bun:"day"`
		Metric string `bun:"metric"`
		Value  int64  `bun:"value"`
	}
	if sc.empty {
		return nil
	}
	// The client grain has no sender: the scope's senders are picked from
	// the metrics below.
	q := svc.db.IDB(ctx).NewSelect().Table("report_daily").Column("day", "metric").ColumnExpr("SUM(value) AS value").
		Where("workspace_id = ? AND grain = ? AND day >= ? AND day <= ? AND metric LIKE 'sender:%'", sc.ws, grainClient, sc.from, sc.to)
	if sc.clients != nil {
		q = q.Where("client_id IN (?)", bun.In(sc.clients))
	}
	if err := q.GroupExpr("day, metric").Scan(ctx, &rows); err != nil {
		return err
	}
	for _, r := range rows {
		sender, ok := senderOf(r.Metric)
		if ok && (sc.senders == nil || slices.Contains(sc.senders, sender)) {
			share(daySender{r.Day, sender}, sender, r.Value)
		}
	}
	return nil
}

// grain is the narrowest grain of report_daily that holds the numbers of
// the scope per subject of group. Without a sequence or sender to single
// out, the client grain has it all; without a sender, the sequence grain;
// without a sequence, the sender grain.
func (sc *scope) grain(group string) string {
	switch {
	case (group == "" || group == "client_id") && sc.sequence == "" && sc.senders == nil:
		return grainClient
	case group != "sender_id" && sc.senders == nil:
		return grainSequence
	case group != "sequence_id" && sc.sequence == "":
		return grainSender
	}
	return grainSubject
}

// aggregation is what aggregate read: each subject's cells, and each
// sender's actions and cost in the scope.
type aggregation struct {
	groups  map[string]*agg
	senders map[string]*SenderUse
}

// SenderUse is a sender's actions and cost in a report's scope.
type SenderUse struct {
	Actions int64
	Cost    float64
}

// senderOf is the sender of a client- or sequence-grain SenderSends
// metric.
func senderOf(metric string) (string, bool) {
	rest, ok := strings.CutPrefix(metric, "sender:")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, ":sends")
	return id, ok
}

// daySender is a sender's local day.
type daySender struct{ day, sender string }

// groupBy is the GROUP BY list of a query per subject of group.
func groupBy(group, rest string) string {
	if group == "" {
		return rest
	}
	return group + ", " + rest
}

// filtered reports whether the scope leaves out some of the workspace's
// numbers.
func (sc *scope) filtered() bool {
	return sc.clients != nil || sc.sequence != "" || sc.senders != nil || sc.empty
}

// costs spreads each sender's monthly cost over the days of its months
// from the day it was added (until today), and each day's cost over the
// subjects it worked for by their share of its actions that day (shares:
// the scope's actions per sender, day and subject). A day with no action
// is the sender's own: it counts for the sender, its client and the
// workspace, but for no sequence.
func (svc *Service) costs(ctx context.Context, sc *scope, group string, shares map[daySender]map[string]int64, get func(string) *agg,
	senders map[string]*SenderUse) error {
	ss, err := svc.areas.Senders.Costs(ctx, sc.ws)
	if err != nil {
		return err
	}
	totals, err := svc.senderTotals(ctx, sc, group, ss, shares)
	if err != nil {
		return err
	}
	last := min(sc.to, sc.today)
	days := sc.days()
	buckets, monthDays := make([]string, len(days)), make([]float64, len(days))
	for i, day := range days {
		buckets[i], monthDays[i] = sc.bucket(day), float64(daysInMonth(day))
	}
	use := func(id string) *SenderUse {
		u := senders[id]
		if u == nil {
			u = &SenderUse{}
			senders[id] = u
		}
		return u
	}
	for k, m := range shares {
		for _, n := range m {
			use(k.sender).Actions += n
		}
	}
	for _, s := range ss {
		if s.MonthlyCost == 0 {
			continue
		}
		first := max(sc.from, dayOf(s.CreatedAt, sc.loc))
		for i, day := range days {
			if day < first || day > last {
				continue
			}
			daily := s.MonthlyCost / monthDays[i]
			k := daySender{day, s.ID}
			if total := totals[k]; total > 0 {
				for g, n := range shares[k] {
					c := daily * float64(n) / float64(total)
					a := get(g)
					a.point(buckets[i]).cost += c
					a.total.cost += c
					use(s.ID).Cost += c
				}
				continue
			}
			if g, ok := sc.idleOwner(s, group); ok {
				a := get(g)
				a.point(buckets[i]).cost += daily
				a.total.cost += daily
				use(s.ID).Cost += daily
			}
		}
	}
	return nil
}

// senderTotals are the actions per day of the senders whose share the
// scope holds or whose idle days it would own: all their actions, for
// every client. A few senders are read through the sender index of the
// sender grain; many, from the client grain's per-sender rows.
func (svc *Service) senderTotals(ctx context.Context, sc *scope, group string, ss []senders.Cost, shares map[daySender]map[string]int64) (map[daySender]int64, error) {
	totals := map[daySender]int64{}
	if !sc.filtered() {
		for k, m := range shares {
			for _, n := range m {
				totals[k] += n
			}
		}
		return totals, nil
	}
	want := map[string]bool{}
	for k := range shares {
		want[k.sender] = true
	}
	for _, s := range ss {
		if _, ok := sc.idleOwner(s, group); ok && s.MonthlyCost > 0 {
			want[s.ID] = true
		}
	}
	if len(want) == 0 {
		return totals, nil
	}
	var rows []struct {
		Day    string `bun:"day"`
		Sender string `bun:"sender_id"`
		Metric string `bun:"metric"`
		Value  int64  `bun:"value"`
	}
	q := svc.db.IDB(ctx).NewSelect().Column("day").ColumnExpr("SUM(value) AS value")
	if len(want) <= 50 {
		q = q.TableExpr(svc.db.IndexedBy("report_daily", "report_daily_sender")).Column("sender_id").ColumnExpr("'' AS metric").
			Where("workspace_id = ? AND grain = ? AND sender_id IN (?) AND day >= ? AND day <= ? AND metric LIKE 'sends.%'",
				sc.ws, grainSender, bun.In(slices.Sorted(maps.Keys(want))), sc.from, sc.to).
			GroupExpr("day, sender_id")
	} else {
		q = q.Table("report_daily").ColumnExpr("'' AS sender_id").Column("metric").
			Where("workspace_id = ? AND grain = ? AND day >= ? AND day <= ? AND metric LIKE 'sender:%'", sc.ws, grainClient, sc.from, sc.to).
			GroupExpr("day, metric")
	}
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, err
	}
	for _, r := range rows {
		if sender, ok := senderOf(r.Metric); ok {
			r.Sender = sender
		}
		if want[r.Sender] {
			totals[daySender{r.Day, r.Sender}] += r.Value
		}
	}
	return totals, nil
}

// DailyCost is a monthly cost's share for one local date: the monthly cost
// over the days of that date's month.
func DailyCost(monthly float64, day string) float64 { return monthly / float64(daysInMonth(day)) }

// daysInMonth is the number of days of the month of the local date day.
func daysInMonth(day string) int {
	t, _ := time.Parse(time.DateOnly, day)
	return time.Date(t.Year(), t.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// idleOwner is the subject of group an idle day of s counts for, if the
// scope shows it.
func (sc *scope) idleOwner(s senders.Cost, group string) (string, bool) {
	client := apikit.Deref(s.ClientID)
	if sc.empty || sc.sequence != "" || (sc.clients != nil && !slices.Contains(sc.clients, client)) ||
		(sc.senders != nil && !slices.Contains(sc.senders, s.ID)) {
		return "", false
	}
	switch group {
	case "":
		return "", true
	case "sender_id":
		return s.ID, true
	case "client_id":
		return client, true
	}
	return "", false
}

// metrics computes every defined metric of c.
func metrics(c *cell) Metrics {
	m := Metrics{}
	for key := range Definitions() {
		if v, ok := c.counts[key]; ok {
			m[key] = num(float64(v))
		} else {
			m[key] = num(0)
		}
	}
	n := func(k string) int64 { return c.counts[k] }
	m["acceptance_rate"] = ratio(n(metricAcceptedBy), n("sends.invite"))
	m["reply_rate"] = ratio(n("replies"), n("leads.contacted"))
	m["positive_reply_rate"] = ratio(n("intents.interested")+n("intents.question"), n("replies"))
	m["meeting_rate"] = ratio(n("meetings.booked"), n("leads.contacted"))
	m["bounce_rate"] = ratio(n("emails.bounced"), n("sends.email"))
	m["time_to_reply"] = median(c.ttr)
	cost := math.Round(c.cost*100) / 100
	m["cost.total"] = num(cost)
	m["cost.per_reply"] = money(cost, n("replies"))
	m["cost.per_meeting"] = money(cost, n("meetings.booked"))
	return m
}

func num(v float64) *float64 { return &v }

// ratio is a/b to four decimals, nil when b is 0.
func ratio(a, b int64) *float64 {
	if b == 0 {
		return nil
	}
	return num(math.Round(float64(a)/float64(b)*10000) / 10000)
}

// money is cost/n to the cent, nil when n is 0.
func money(cost float64, n int64) *float64 {
	if n == 0 {
		return nil
	}
	return num(math.Round(cost/float64(n)*100) / 100)
}

// median of whole seconds, nil for none; the mean of the middle two for
// an even count, rounded down.
func median(xs []int64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return num(float64(s[mid]))
	}
	return num(float64((s[mid-1] + s[mid]) / 2))
}

// report turns a subject's aggregate into a Report.
func (sc *scope) report(a *agg) *Report {
	r := &Report{From: sc.from, To: sc.to, Timezone: sc.tz, Interval: sc.interval, Totals: metrics(a.total), Series: []Point{}}
	seen := ""
	for _, day := range sc.days() {
		b := sc.bucket(day)
		if b == seen {
			continue
		}
		seen = b
		c := a.points[b]
		if c == nil {
			c = newCell()
		}
		r.Series = append(r.Series, Point{Date: b, Metrics: metrics(c)})
	}
	return r
}

// whole resolves prm and reads everything in its scope as one subject.
func (svc *Service) whole(ctx context.Context, p apikit.Principal, prm Params) (*scope, *agg, error) {
	sc, err := svc.resolve(ctx, p, prm)
	if err != nil {
		return nil, nil, err
	}
	aggs, err := svc.aggregate(ctx, sc, "", true)
	if err != nil {
		return nil, nil, err
	}
	if a := aggs.groups[""]; a != nil {
		return sc, a, nil
	}
	return sc, &agg{points: map[string]*cell{}, total: newCell()}, nil
}

// Overview returns the headline metrics of the scope with a series.
func (svc *Service) Overview(ctx context.Context, p apikit.Principal, prm Params) (*Report, error) {
	sc, a, err := svc.whole(ctx, p, prm)
	if err != nil {
		return nil, err
	}
	return sc.report(a), nil
}
