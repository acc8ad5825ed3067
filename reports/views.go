package reports

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// Period is a report's period, as every report states it.
type Period struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Timezone string `json:"timezone"`
}

func (sc *scope) period() Period { return Period{From: sc.from, To: sc.to, Timezone: sc.tz} }

// Stage is one stage of the funnel.
type Stage struct {
	Stage      string   `json:"stage" enum:"enrolled,contacted,accepted,replied,interested,meeting_booked"`
	Metric     string   `json:"metric" doc:"The metric the stage counts."`
	Count      int64    `json:"count"`
	Conversion *float64 `json:"conversion" doc:"count / the previous stage's count; null for the first stage and after a stage of 0."`
}

// Funnel is the ordered stages from enrolment to a booked meeting.
type Funnel struct {
	Period
	Stages []Stage `json:"stages"`
}

// funnelStages are the funnel's stages and the metrics they count.
var funnelStages = [][2]string{
	{"enrolled", "enrollments.started"}, {"contacted", "leads.contacted"}, {"accepted", "invites.accepted"},
	{"replied", "replies"}, {"interested", "intents.interested"}, {"meeting_booked", "meetings.booked"},
}

func (svc *Service) totals(ctx context.Context, p apikit.Principal, prm Params) (*scope, *cell, error) {
	sc, a, err := svc.whole(ctx, p, prm)
	if err != nil {
		return nil, nil, err
	}
	return sc, a.total, nil
}

// Funnel returns the scope's funnel over the period.
func (svc *Service) Funnel(ctx context.Context, p apikit.Principal, prm Params) (*Funnel, error) {
	sc, c, err := svc.totals(ctx, p, prm)
	if err != nil {
		return nil, err
	}
	return sc.funnel(c), nil
}

func (sc *scope) funnel(c *cell) *Funnel {
	f := &Funnel{Period: sc.period()}
	for i, st := range funnelStages {
		s := Stage{Stage: st[0], Metric: st[1], Count: c.counts[st[1]]}
		if i > 0 {
			s.Conversion = ratio(s.Count, f.Stages[i-1].Count)
		}
		f.Stages = append(f.Stages, s)
	}
	return f
}

// IntentCount is the replies of one intent.
type IntentCount struct {
	Intent string   `json:"intent" enum:"interested,question,not_now,not_interested,ooo,wrong_person,unclear"`
	Metric string   `json:"metric"`
	Count  int64    `json:"count"`
	Share  *float64 `json:"share" doc:"count / replies; null when there were no replies."`
}

// Intents is the period's replies per intent.
type Intents struct {
	Period
	Replies int64         `json:"replies"`
	Intents []IntentCount `json:"intents"`
}

// Intents returns the scope's replies per intent.
func (svc *Service) Intents(ctx context.Context, p apikit.Principal, prm Params) (*Intents, error) {
	sc, c, err := svc.totals(ctx, p, prm)
	if err != nil {
		return nil, err
	}
	return sc.intents(c), nil
}

func (sc *scope) intents(c *cell) *Intents {
	out := &Intents{Period: sc.period(), Replies: c.counts["replies"]}
	for _, i := range intents {
		n := c.counts["intents."+i.key]
		out.Intents = append(out.Intents, IntentCount{Intent: i.key, Metric: "intents." + i.key, Count: n, Share: ratio(n, out.Replies)})
	}
	return out
}

// Dashboard returns what Overview, Funnel and Intents return for prm
// (the funnel and the intents are the period's totals, which do not
// depend on prm's interval), from one read of the rollups: the console's
// report page shows the three.
func (svc *Service) Dashboard(ctx context.Context, p apikit.Principal, prm Params) (*Report, *Funnel, *Intents, error) {
	sc, a, err := svc.whole(ctx, p, prm)
	if err != nil {
		return nil, nil, nil, err
	}
	return sc.report(a), sc.funnel(a.total), sc.intents(a.total), nil
}

// ReplyThread is a thread that got its first reply in the period.
type ReplyThread struct {
	ThreadID     string    `json:"thread_id" format:"uuid"`
	LeadID       string    `json:"lead_id" format:"uuid"`
	LeadName     string    `json:"lead_name"`
	SenderID     string    `json:"sender_id" format:"uuid"`
	SenderName   string    `json:"sender_name"`
	SequenceID   *string   `json:"sequence_id" format:"uuid"`
	SequenceName *string   `json:"sequence_name"`
	ClientID     *string   `json:"client_id" format:"uuid"`
	Intent       string    `json:"intent" doc:"The thread's intent now."`
	FirstReplyAt time.Time `json:"first_reply_at"`
	TimeToReply  *int64    `json:"time_to_reply" doc:"Seconds from the sequence's first contact of the lead to the first reply; null without one."`
}

// ReplyThreads lists the threads that got their first reply in the period,
// the latest first.
func (svc *Service) ReplyThreads(ctx context.Context, p apikit.Principal, prm Params, limit, offset int) (apikit.Page[ReplyThread], error) {
	sc, err := svc.resolve(ctx, p, prm)
	if err != nil {
		return apikit.Page[ReplyThread]{}, err
	}
	if err := apikit.CheckPage(&limit, offset); err != nil {
		return apikit.Page[ReplyThread]{}, err
	}
	// The report's own scope (clients, sequence, senders) applies, not the
	// key's alone: sc.subjects.
	rows, total, err := db.List[threadRow](svc.db.IDB(ctx), "", sc.ws, nil).
		Where("first_reply_at >= ? AND first_reply_at < ?", sc.start, sc.end).Apply(sc.subjects).
		Page(ctx, "first_reply_at DESC, thread_id", limit, offset)
	if err != nil {
		return apikit.Page[ReplyThread]{}, err
	}
	var ids [3][]string
	for _, r := range rows {
		ids[0], ids[1], ids[2] = append(ids[0], r.LeadID), append(ids[1], r.SenderID), append(ids[2], r.SequenceID)
	}
	names := [3]map[string]string{}
	for i, table := range []string{leadsKind, Senders, Sequences} {
		if names[i], err = svc.names(ctx, table, sc.ws, ids[i]); err != nil {
			return apikit.Page[ReplyThread]{}, err
		}
	}
	out := make([]ReplyThread, 0, len(rows))
	for _, r := range rows {
		t := ReplyThread{ThreadID: r.ThreadID, LeadID: r.LeadID, LeadName: names[0][r.LeadID], SenderID: r.SenderID, SenderName: names[1][r.SenderID],
			SequenceID: opt(r.SequenceID), ClientID: opt(r.ClientID), Intent: r.Intent, FirstReplyAt: r.FirstReplyAt.UTC(), TimeToReply: r.TimeToReply}
		if r.SequenceID != "" {
			t.SequenceName = opt(names[2][r.SequenceID])
		}
		out = append(out, t)
	}
	return apikit.NewPage(out, total, limit, offset), nil
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// names returns the names of the leads, sequences, senders or clients
// with ids, read through their areas.
func (svc *Service) names(ctx context.Context, kind, ws string, ids []string) (map[string]string, error) {
	ids = slices.DeleteFunc(slices.Compact(slices.Sorted(slices.Values(ids))), func(s string) bool { return s == "" })
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	switch kind {
	case leadsKind:
		return svc.areas.Leads.Names(ctx, ws, ids)
	case Sequences:
		refs, err := svc.areas.Sequences.Refs(ctx, ws, ids)
		for _, r := range refs {
			out[r.ID] = r.Name
		}
		return out, err
	case Senders:
		refs, err := svc.areas.Senders.Refs(ctx, ws, ids)
		for _, r := range refs {
			out[r.ID] = r.Name
		}
		return out, err
	}
	named, err := svc.areas.Workspaces.Named(ctx, ws, workspace.Clients, ids)
	for _, n := range named {
		out[n.ID] = n.Name
	}
	return out, err
}

// leadsKind names the leads to names.
const leadsKind = "leads"

// SenderCost is one sender's cost in the period.
type SenderCost struct {
	SenderID    string   `json:"sender_id" format:"uuid"`
	Name        string   `json:"name"`
	ClientID    *string  `json:"client_id" format:"uuid"`
	MonthlyCost float64  `json:"monthly_cost"`
	Actions     int64    `json:"actions" doc:"sends.total of the sender in the scope."`
	Cost        *float64 `json:"cost" doc:"cost.total of the sender in the scope."`
}

// ClientCost is one client's cost in the period; a null client is the
// workspace's own work.
type ClientCost struct {
	ClientID *string  `json:"client_id" format:"uuid"`
	Name     *string  `json:"name"`
	Cost     *float64 `json:"cost"`
}

// Cost is the period's cost, per reply and per meeting, with breakdowns.
type Cost struct {
	Period
	Totals   Metrics      `json:"totals" doc:"cost.total, cost.per_reply and cost.per_meeting."`
	BySender []SenderCost `json:"by_sender"`
	ByClient []ClientCost `json:"by_client"`
}

// Cost returns what the scope's senders cost.
func (svc *Service) Cost(ctx context.Context, p apikit.Principal, prm Params) (*Cost, error) {
	sc, err := svc.resolve(ctx, p, prm)
	if err != nil {
		return nil, err
	}
	// One pass per client gives the clients' costs, the total and each
	// sender's share.
	aggs, err := svc.aggregate(ctx, sc, "client_id", false)
	if err != nil {
		return nil, err
	}
	total := newCell()
	for _, a := range aggs.groups {
		total.cost += a.total.cost
		for _, k := range []string{"replies", "meetings.booked"} {
			total.counts[k] += a.total.counts[k]
		}
	}
	m := metrics(total)
	out := &Cost{Period: sc.period(), Totals: Metrics{"cost.total": m["cost.total"], "cost.per_reply": m["cost.per_reply"], "cost.per_meeting": m["cost.per_meeting"]},
		BySender: []SenderCost{}, ByClient: []ClientCost{}}
	ss, err := svc.areas.Senders.All(ctx, sc.ws)
	if err != nil {
		return nil, err
	}
	for _, s := range ss {
		u := aggs.senders[s.ID]
		if u == nil || !p.SeesClient(apikit.Deref(s.ClientID)) {
			continue
		}
		out.BySender = append(out.BySender, SenderCost{SenderID: s.ID, Name: s.Name, ClientID: s.ClientID, MonthlyCost: s.MonthlyCost,
			Actions: u.Actions, Cost: num(math.Round(u.Cost*100) / 100)})
	}
	var clients []string
	for id := range aggs.groups {
		clients = append(clients, id)
	}
	names, err := svc.names(ctx, Clients, sc.ws, clients)
	if err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(slices.Values(clients)) {
		c := ClientCost{ClientID: opt(id), Cost: metrics(aggs.groups[id].total)["cost.total"]}
		if id != "" {
			c.Name = opt(names[id])
		}
		out.ByClient = append(out.ByClient, c)
	}
	return out, nil
}

// Row is one subject of a list report.
type Row struct {
	ID       string  `json:"id" format:"uuid"`
	Name     string  `json:"name"`
	ClientID *string `json:"client_id,omitempty" format:"uuid"`
	Channel  string  `json:"channel,omitempty" enum:"linkedin,email"`
	Metrics  Metrics `json:"metrics"`
}

// ListParams are a list report's order and page.
type ListParams struct {
	Sort   string
	Limit  int
	Offset int
}

// DefaultSort orders a list report when sort is left out.
const DefaultSort = "-sends.total"

// Subjects a list report has rows for.
const (
	Sequences = "sequences"
	Senders   = "senders"
	Clients   = "clients"
)

var subjectColumn = map[string]string{Sequences: "sequence_id", Senders: "sender_id", Clients: "client_id"}

// List returns one row per sequence, sender or client the key sees, with
// its metrics over the period, sorted by a metric and paged.
func (svc *Service) List(ctx context.Context, p apikit.Principal, kind string, prm Params, lp ListParams) (apikit.Page[Row], error) {
	var none apikit.Page[Row]
	if lp.Sort == "" {
		lp.Sort = DefaultSort
	}
	desc := strings.HasPrefix(lp.Sort, "-")
	key := strings.TrimPrefix(lp.Sort, "-")
	if _, ok := Definitions()[key]; !ok {
		return none, apikit.Invalid(fmt.Sprintf("sort %q is not a metric.", lp.Sort),
			"Sort by a metric key of GET /v1/metrics/definitions, with - in front for the largest first (sort=-reply_rate).")
	}
	if err := apikit.CheckPage(&lp.Limit, lp.Offset); err != nil {
		return none, err
	}
	sc, err := svc.resolve(ctx, p, prm)
	if err != nil {
		return none, err
	}
	rows, err := svc.subjects(ctx, p, sc, kind)
	if err != nil {
		return none, err
	}
	aggs, err := svc.aggregate(ctx, sc, subjectColumn[kind], false)
	if err != nil {
		return none, err
	}
	for i := range rows {
		a := aggs.groups[rows[i].ID]
		if a == nil {
			a = &agg{total: newCell()}
		}
		rows[i].Metrics = metrics(a.total)
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		x, y := a.Metrics[key], b.Metrics[key]
		switch {
		case x == nil && y == nil:
			return cmp.Compare(a.Name, b.Name)
		case x == nil:
			return 1
		case y == nil:
			return -1
		}
		c := cmp.Compare(*x, *y)
		if desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	total := len(rows)
	rows = rows[min(lp.Offset, total):min(lp.Offset+lp.Limit, total)]
	return apikit.NewPage(rows, total, lp.Limit, lp.Offset), nil
}

// subjects are the sequences, senders or clients the key sees that the
// filters leave in.
func (svc *Service) subjects(ctx context.Context, p apikit.Principal, sc *scope, kind string) ([]Row, error) {
	var rows []Row
	switch kind {
	case Clients:
		named, err := svc.areas.Workspaces.Named(ctx, sc.ws, workspace.Clients, sc.clients)
		if err != nil {
			return nil, err
		}
		for _, n := range named {
			rows = append(rows, Row{ID: n.ID, Name: n.Name})
		}
		// Clients come by name; rows of one name by id, as the others.
		slices.SortStableFunc(rows, func(a, b Row) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID)) })
	case Sequences:
		var ids []string
		if sc.sequence != "" {
			ids = []string{sc.sequence}
		}
		refs, err := svc.areas.Sequences.Refs(ctx, sc.ws, ids)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			if sc.seesSubject(p, r.ClientID) {
				rows = append(rows, Row{ID: r.ID, Name: r.Name, ClientID: r.ClientID})
			}
		}
	case Senders:
		refs, err := svc.areas.Senders.Refs(ctx, sc.ws, sc.senders)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			if sc.seesSubject(p, r.ClientID) {
				rows = append(rows, Row{ID: r.ID, Name: r.Name, ClientID: r.ClientID, Channel: string(r.Channel)})
			}
		}
	}
	return rows, nil
}

// seesSubject reports whether a sequence or sender of client is in the
// scope's clients and visible to p.
func (sc *scope) seesSubject(p apikit.Principal, client *string) bool {
	if sc.clients != nil && (client == nil || !slices.Contains(sc.clients, *client)) {
		return false
	}
	return p.SeesClient(apikit.Deref(client))
}

// StepNumbers is what one step of a sequence did in the period.
type StepNumbers struct {
	StepID  string `json:"step_id"`
	Type    string `json:"type"`
	Sent    int64  `json:"sent" doc:"Actions the step performed (action.sent)."`
	Replied int64  `json:"replied" doc:"Enrollments that stopped on a reply while at the step (enrollment.replied)."`
	Failed  int64  `json:"failed" doc:"Enrollments that failed at the step (enrollment.failed)."`
	// Variants are the numbers of a step with variants over the period.
	Variants []sequences.VariantStats `json:"variants,omitempty" doc:"A step with variants: each variant's numbers over the enrollments first sent it in the period (sent, accepted, replied, positive replies, meetings, their rates, its share, whether it won now); probability_best is null here, the test's evidence being the whole run's (GET /v1/sequences/{id}/stats)."`
}

// ActionUse is one action's use on one day against its effective cap.
type ActionUse struct {
	Action       string `json:"action"`
	Used         int    `json:"used"`
	EffectiveCap int    `json:"effective_cap" doc:"min(cap, ceiling, warm-up ramp); today it also holds the health limit, which past days do not keep."`
}

// DayUse is a sender's use of its caps on one of its local days.
type DayUse struct {
	Date    string      `json:"date"`
	Actions []ActionUse `json:"actions"`
}

// Subject is one sequence's, sender's or client's report.
type Subject struct {
	Report
	ID    string        `json:"id" format:"uuid"`
	Name  string        `json:"name"`
	Steps []StepNumbers `json:"steps,omitempty" doc:"Sequences: per-step numbers over the period, in step order."`
	Usage []DayUse      `json:"usage,omitempty" doc:"Senders: each action's daily use against its effective cap, per local day of the sender (in its timezone)."`
}

// Subject returns one sequence's, sender's or client's totals and series.
// An id the key may not see is E_NOT_FOUND.
func (svc *Service) Subject(ctx context.Context, p apikit.Principal, kind, id string, prm Params) (*Subject, error) {
	var q *sequences.Sequence
	var s *senders.Sender
	var err error
	switch kind {
	case Sequences:
		if q, err = svc.visibleSequence(ctx, p, id); err != nil {
			return nil, err
		}
		prm.SequenceID = id
	case Senders:
		if s, err = svc.visibleSender(ctx, p, id); err != nil {
			return nil, err
		}
		prm.SenderID = id
	case Clients:
		if !apikit.ValidID(id) || !p.SeesClient(id) {
			return nil, apikit.NotFound("Client")
		}
		prm.ClientID = id
	}
	sc, a, err := svc.whole(ctx, p, prm)
	if err != nil {
		return nil, err
	}
	names, err := svc.names(ctx, kind, sc.ws, []string{id})
	if err != nil {
		return nil, err
	}
	out := &Subject{Report: *sc.report(a), ID: id, Name: names[id]}
	switch kind {
	case Sequences:
		out.Steps, err = svc.steps(ctx, sc, q)
	case Senders:
		out.Usage, err = svc.usage(ctx, sc, s)
	}
	return out, err
}

func (svc *Service) steps(ctx context.Context, sc *scope, q *sequences.Sequence) ([]StepNumbers, error) {
	id := q.ID
	var rows []struct {
		Metric string `bun:"metric"`
		Value  int64  `bun:"value"`
	}
	if err := svc.db.IDB(ctx).NewSelect().TableExpr(svc.db.IndexedBy("report_daily", "report_daily_sequence")).Column("metric").ColumnExpr("SUM(value) AS value").
		Where("workspace_id = ? AND grain = ? AND sequence_id = ? AND day >= ? AND day <= ? AND metric LIKE 'step:%'", sc.ws, grainSubject, id, sc.from, sc.to).
		GroupExpr("metric").Scan(ctx, &rows); err != nil {
		return nil, err
	}
	variants, err := svc.areas.Sequences.VariantCountsSent(ctx, id, sc.start, sc.end)
	if err != nil {
		return nil, err
	}
	out := make([]StepNumbers, 0, len(q.Steps))
	for _, st := range q.Steps {
		n := StepNumbers{StepID: st.ID, Type: st.Type, Variants: sequences.StepVariants(q, st, variants[st.ID])}
		for i := range n.Variants {
			n.Variants[i].ProbabilityBest = nil
		}
		for _, r := range rows {
			switch r.Metric {
			case StepMetric(st.ID, "sent"):
				n.Sent = r.Value
			case StepMetric(st.ID, "replied"):
				n.Replied = r.Value
			case StepMetric(st.ID, "failed"):
				n.Failed = r.Value
			}
		}
		out = append(out, n)
	}
	return out, nil
}

func (svc *Service) usage(ctx context.Context, sc *scope, s *senders.Sender) ([]DayUse, error) {
	rows, err := svc.areas.Senders.Usage(ctx, s.ID, sc.from, sc.to)
	if err != nil {
		return nil, err
	}
	used := map[string]int{}
	for _, r := range rows {
		used[r.Day+"/"+r.Action] = r.Used
	}
	today := senders.LocalDate(svc.clock.Now(), s.Location())
	past := *s
	past.Health = senders.Healthy
	var out []DayUse
	for _, day := range sc.days() {
		if day > today {
			break
		}
		d := DayUse{Date: day}
		for _, a := range senders.ActionsOf(s.Channel) {
			lim := past.Limits(a, day)
			if day == today {
				lim = s.Limits(a, day)
			}
			d.Actions = append(d.Actions, ActionUse{Action: string(a), Used: used[day+"/"+string(a)], EffectiveCap: lim.EffectiveCap})
		}
		out = append(out, d)
	}
	return out, nil
}
