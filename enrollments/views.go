package enrollments

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

// StepStats are one step's numbers.
type StepStats struct {
	StepID  string `json:"step_id"`
	Type    string `json:"type"`
	Entered int    `json:"entered" doc:"Enrollments that reached the step."`
	Done    int    `json:"done" doc:"Enrollments that completed it."`
	Failed  int    `json:"failed" doc:"Enrollments that failed at it."`
	Waiting int    `json:"waiting" doc:"Live enrollments at the step now."`
	// Variants are the numbers of a step with variants.
	Variants []sequences.VariantStats `json:"variants,omitempty" doc:"A step with variants: each variant's numbers (sent, accepted, replied, positive replies, meetings, their rates, its share of the step's sends, its probability of being the best once pick_winner's min_sends are in, whether it won), then retired variants'."`
}

// SequenceStats are a sequence's numbers.
type SequenceStats struct {
	SequenceID      string         `json:"sequence_id" format:"uuid"`
	Steps           []StepStats    `json:"steps"`
	Statuses        map[string]int `json:"statuses" doc:"Enrollments per status; every status is present."`
	InvitesSent     int            `json:"invites_sent"`
	InvitesAccepted int            `json:"invites_accepted"`
	AcceptanceRate  *float64       `json:"acceptance_rate" doc:"invites_accepted / invites_sent; null before any invite."`
	Contacted       int            `json:"contacted" doc:"Enrollments that had at least one action sent."`
	RepliedCount    int            `json:"replied"`
	ReplyRate       *float64       `json:"reply_rate" doc:"replied / contacted; null before any contact."`
}

func ratio(a, b int) *float64 {
	if b == 0 {
		return nil
	}
	r := float64(a) / float64(b)
	return &r
}

// Stats returns a sequence's numbers.
// Returns E_NOT_FOUND if the sequence is not visible to the principal.
func (svc *Service) Stats(ctx context.Context, p apikit.Principal, id string) (*SequenceStats, error) {
	q, err := svc.sequences.Visible(ctx, p, id)
	if err != nil {
		return nil, err
	}
	out, err := svc.stats(ctx, []sequences.Sequence{*q})
	if err != nil {
		return nil, err
	}
	return out[q.ID], nil
}

// StatsOf returns the numbers of qs, sequences the principal's list of
// sequences returned (a list page: the same numbers as Stats of each, in
// a few statements for them all), by sequence id.
func (svc *Service) StatsOf(ctx context.Context, p apikit.Principal, qs []sequences.Sequence) (map[string]*SequenceStats, error) {
	for _, q := range qs {
		if q.WorkspaceID != p.WorkspaceID {
			return nil, apikit.NotFound("Sequence " + q.ID)
		}
	}
	return svc.stats(ctx, qs)
}

func (svc *Service) stats(ctx context.Context, qs []sequences.Sequence) (map[string]*SequenceStats, error) {
	out := make(map[string]*SequenceStats, len(qs))
	if len(qs) == 0 {
		return out, nil
	}
	ids := make([]string, 0, len(qs))
	for _, q := range qs {
		ids = append(ids, q.ID)
	}
	// Two statements for all of qs, each reading indexes only: the step
	// counters with the enrolments per status and step
	// (enrollments_sequence_steps), then the sent actions
	// (actions_sequence_sent) with their accepted invitations
	// (invitations_accepted). A counter's row has no status.
	idb := svc.db.IDB(ctx)
	var rows []struct {
		SequenceID string `bun:"sequence_id"`
		StepID     string `bun:"step_id"`
		Status     string `bun:"status"`
		Entered    int    `bun:"entered"`
		Done       int    `bun:"done"`
		Failed     int    `bun:"failed"`
		N          int    `bun:"n"`
	}
	if err := idb.NewRaw(`SELECT s.sequence_id, s.step_id, '' AS status, sum(s.entered) AS entered, sum(s.done) AS done, sum(s.failed) AS failed, 0 AS n
		FROM step_stats AS s WHERE s.sequence_id IN (?) GROUP BY s.sequence_id, s.step_id
		UNION ALL
		SELECT e.sequence_id, e.step_id, e.status, 0, 0, 0, count(*) FROM enrollments AS e WHERE e.sequence_id IN (?) GROUP BY e.sequence_id, e.status, e.step_id`,
		bun.In(ids), bun.In(ids)).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	// Invitations sent, those accepted (the invitation of the action's
	// sender to its lead, looked up for invitations alone), and the
	// enrolments with any action sent.
	var acts []struct {
		SequenceID string `bun:"sequence_id"`
		Sent       int    `bun:"sent"`
		Accepted   int    `bun:"accepted"`
		Contacted  int    `bun:"contacted"`
	}
	if err := idb.NewSelect().Model((*ActionRecord)(nil)).Column("a.sequence_id").
		ColumnExpr("count(CASE WHEN a.action = 'invite' THEN 1 END) AS sent, count(i.lead_id) AS accepted, count(DISTINCT a.enrollment_id) AS contacted").
		Join("LEFT "+senders.JoinAcceptedInvitations("i", "a.sender_id", "a.lead_id")+" AND a.action = 'invite'").
		Where("a.sequence_id IN (?) AND a.status = 'sent'", bun.In(ids)).Group("a.sequence_id").Scan(ctx, &acts); err != nil {
		return nil, err
	}
	// The variants' numbers, for the sequences with a step that has
	// variants (a third statement only then).
	var tested []string
	for _, q := range qs {
		if slices.ContainsFunc(q.Steps, func(s sequences.Step) bool { return len(s.Variants) > 0 }) {
			tested = append(tested, q.ID)
		}
	}
	variants, err := svc.sequences.VariantCountsOf(ctx, tested)
	if err != nil {
		return nil, err
	}
	steps := map[[2]string]StepStats{}
	for _, q := range qs {
		st := &SequenceStats{SequenceID: q.ID, Steps: []StepStats{}, Statuses: map[string]int{}}
		for _, s := range []Status{Active, Paused, Finished, Exited, Replied, Stopped, Failed} {
			st.Statuses[string(s)] = 0
		}
		out[q.ID] = st
	}
	for _, r := range rows {
		st, k := out[r.SequenceID], [2]string{r.SequenceID, r.StepID}
		ss := steps[k]
		switch {
		case r.Status == "":
			ss.Entered, ss.Done, ss.Failed = r.Entered, r.Done, r.Failed
		case Status(r.Status).Live():
			ss.Waiting += r.N
			fallthrough
		default:
			st.Statuses[r.Status] += r.N
		}
		steps[k] = ss
	}
	for _, a := range acts {
		st := out[a.SequenceID]
		st.InvitesSent, st.InvitesAccepted, st.Contacted = a.Sent, a.Accepted, a.Contacted
	}
	for _, q := range qs {
		st := out[q.ID]
		if st.RepliedCount != 0 || len(st.Steps) > 0 {
			continue // named twice in qs
		}
		for _, s := range q.Steps {
			ss := steps[[2]string{q.ID, s.ID}]
			ss.StepID, ss.Type = s.ID, s.Type
			ss.Variants = sequences.StepVariants(&q, s, variants[[2]string{q.ID, s.ID}])
			st.Steps = append(st.Steps, ss)
		}
		st.RepliedCount = st.Statuses[string(Replied)]
		st.AcceptanceRate = ratio(st.InvitesAccepted, st.InvitesSent)
		st.ReplyRate = ratio(st.RepliedCount, st.Contacted)
	}
	return out, nil
}

// FailedEnrollment is a failed enrollment with why it failed.
type FailedEnrollment struct {
	EnrollmentID string    `json:"enrollment_id" format:"uuid"`
	LeadID       string    `json:"lead_id" format:"uuid"`
	SenderID     *string   `json:"sender_id" format:"uuid"`
	StepID       string    `json:"step_id"`
	Code         string    `json:"code" doc:"e.g. missing_variable, step_removed, email_bounced, or the transport's code."`
	Message      string    `json:"message"`
	FailedAt     time.Time `json:"failed_at"`
}

// FailedPage returns one page of a sequence's failed enrollments, newest first.
// Returns E_NOT_FOUND if the sequence is not visible to the principal.
func (svc *Service) FailedPage(ctx context.Context, p apikit.Principal, id string, limit, offset int) (apikit.Page[FailedEnrollment], error) {
	if err := apikit.CheckPage(&limit, offset); err != nil {
		return apikit.Page[FailedEnrollment]{}, err
	}
	q, err := svc.sequences.Visible(ctx, p, id)
	if err != nil {
		return apikit.Page[FailedEnrollment]{}, err
	}
	es, total, err := svc.store.List(ctx, p.WorkspaceID, nil, Filter{SequenceID: q.ID, Status: Failed, Limit: limit, Offset: offset})
	if err != nil {
		return apikit.Page[FailedEnrollment]{}, err
	}
	out := make([]FailedEnrollment, 0, len(es))
	for _, e := range es {
		f := FailedEnrollment{EnrollmentID: e.ID, LeadID: e.LeadID, SenderID: e.SenderID, StepID: e.StepID, Code: deref(e.LastErrorCode), Message: deref(e.LastError)}
		if e.FailedAt != nil {
			f.FailedAt = *e.FailedAt
		}
		out = append(out, f)
	}
	return apikit.NewPage(out, total, limit, offset), nil
}

// StallReason is one cause of a sequence not sending, with its remedy.
type StallReason struct {
	Code     string     `json:"code"`
	Message  string     `json:"message"`
	Remedy   string     `json:"remedy"`
	SenderID *string    `json:"sender_id,omitempty" format:"uuid"`
	Action   string     `json:"action,omitempty"`
	Count    *int       `json:"count,omitempty" doc:"How many live enrollments it holds."`
	Until    *time.Time `json:"until,omitempty" doc:"When it lifts by itself: always a time ahead, and only on an active sequence."`
}

// WhyNotSending is the answer of why-not-sending.
type WhyNotSending struct {
	Sending      bool          `json:"sending" doc:"Whether the sequence is sending now or will as its waits end, without anyone acting."`
	NextActionAt *time.Time    `json:"next_action_at" doc:"When the runner next looks at one of its enrollments."`
	Reasons      []StallReason `json:"reasons" doc:"Every cause that holds enrollments back, the blocking ones first."`
}

// blocking are waits that need someone to act, or a limit that lifts only
// at a set time.
var reasonText = map[string][2]string{
	"outside_schedule":          {"%d enrollments wait for their sender's working hours.", "Nothing to do: they run when the window opens; widen the sender's schedule to send more hours."},
	"daily_cap_reached":         {"%d enrollments wait: the sender used today's %s budget.", "Nothing to do: budgets reset at the sender's local midnight; add senders to the sequence to send more a day."},
	"weekly_invite_cap_reached": {"%d enrollments wait: the sender reached its 7-day invitation cap.", "Nothing to do: the window frees invitations day by day; add LinkedIn senders to invite more."},
	"warmup_limit":              {"%d enrollments wait: the sender's warm-up ramp limits today's %s.", "Nothing to do: the ramp grows every day; it protects a new account."},
	"sender_paused":             {"%d enrollments wait for a paused sender.", "Set the sender to status: active in the setup file and apply it."},
	"sender_disconnected":       {"%d enrollments wait: the sender's account is disconnected.", "Reconnect the account with its provider; enrollments go on when it reports the account usable."},
	"sender_restricted":         {"%d enrollments wait: the provider restricted the sender's account.", "Let the restriction end (usually days); the sender is rechecked every local midnight."},
	"auth_failed":               {"%d enrollments wait: the provider refused the sender's credentials.", "Fix the username or the secret (GET /v1/senders/{id}/health names the variable), then run leadline senders check; enrollments go on when the account connects again."},
	"connection_failed":         {"%d enrollments wait: the sender's mail or provider server could not be reached.", "Check the host, port and security in the sender's settings (GET /v1/senders/{id}/health says what failed), then run leadline senders check."},
	"credentials_missing":       {"%d enrollments wait: the sender's secret is not set in the server's environment.", "Set the environment variable GET /v1/senders/{id}/health names and restart the server."},
	"account_disconnected":      {"%d enrollments wait: the provider reports the sender's account disconnected.", "Reconnect the account in the provider's dashboard; enrollments go on when it reports the account usable."},
	"account_not_found":         {"%d enrollments wait: the provider has no account under the id the sender's settings name.", "Correct the account id in the sender's settings (leadline senders check names it) and apply the setup file; enrollments go on when the account is found."},
	"provider_rate_limited":     {"%d enrollments wait: the provider asked the sender to slow down.", "Nothing to do: they go on at the provider's retry hint; lower the sender's caps if it happens daily."},
	"note_quota":                {"%d enrollments wait: the sender used this month's 5 invitation notes.", "Use note_fallback: without_note on the invite step, a premium account, or wait for the next month."},
	"tasks_pending":             {"%d enrollments wait for manual tasks that are past their due time.", "Complete the tasks with POST /v1/tasks/{id}/complete; GET /v1/tasks?status=open lists them, the earliest due first."},
	"workspace_suspended":       {"%d enrollments wait: the workspace is suspended.", "Ask the workspace owner to settle the plan."},
}

// ordinary are waits that end by themselves as designed.
var ordinary = map[string]bool{"wait_step": true, WaitTaskDue: true, "awaiting_acceptance": true, "out_of_office": true, "retrying": true, WaitSending: true,
	WaitStartsLater: true}

// selfLifting are limits that lift by themselves within days: a sequence
// held only by them is still sending.
var selfLifting = map[string]bool{"outside_schedule": true, "daily_cap_reached": true, "warmup_limit": true, "weekly_invite_cap_reached": true,
	senders.GuardSpacing: true, senders.GuardHourlyCap: true, senders.GuardHoliday: true}

// WhyNotSending explains what holds a sequence back.
// Returns E_NOT_FOUND if the sequence is not visible to the principal.
func (svc *Service) WhyNotSending(ctx context.Context, p apikit.Principal, id string) (*WhyNotSending, error) {
	q, err := svc.sequences.Visible(ctx, p, id)
	if err != nil {
		return nil, err
	}
	out := &WhyNotSending{Reasons: []StallReason{}}
	add := func(r StallReason) { out.Reasons = append(out.Reasons, r) }
	ws, err := svc.catalog.WorkspaceByID(ctx, q.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if ws.Suspended {
		add(StallReason{Code: "workspace_suspended", Message: "The workspace is suspended: nothing is sent.", Remedy: "Ask the workspace owner to settle the plan."})
	}
	now, active := svc.clock.Now(), q.Status == sequences.Active
	notActive := -1 // the sequence_not_active reason, which counts what it holds
	if !active {
		notActive = len(out.Reasons)
		add(StallReason{Code: "sequence_not_active", Message: fmt.Sprintf("The sequence is %s.", q.Status), Remedy: "Activate it with POST /v1/sequences/{id}/activate (manager role)."})
	}
	ps, err := svc.sequences.Problems(ctx, q)
	if err != nil {
		return nil, err
	}
	if len(ps) > 0 {
		add(StallReason{Code: "sequence_invalid", Message: sequences.GraphInvalid(q.Name, ps).Message, Remedy: "Fix the problems in the setup file and apply it; GET /v1/sequences/{id} lists them."})
	}
	ss, err := svc.sequences.SendersOf(ctx, q)
	if err != nil {
		return nil, err
	}
	usableN := 0
	for _, s := range ss {
		if usable(&s) {
			usableN++
		}
	}
	if len(ss) > 0 && usableN == 0 {
		add(StallReason{Code: "no_usable_sender", Message: "None of the sequence's senders can send: each is paused, restricted or disconnected.", Remedy: "Activate or reconnect a sender, or add another to the sequence."})
	}
	var groups []struct {
		Status     string     `bun:"status"`
		WaitingFor *string    `bun:"waiting_for"`
		SenderID   *string    `bun:"waiting_sender_id"`
		Action     *string    `bun:"waiting_action"`
		N          int        `bun:"n"`
		Next       *time.Time `bun:"next"`
	}
	idb := svc.db.IDB(ctx)
	if err := idb.NewSelect().Model((*Enrollment)(nil)).Column("status", "waiting_for", "waiting_sender_id", "waiting_action").ColumnExpr("count(*) AS n").ColumnExpr("min(next_run_at) AS next").
		Where("e.sequence_id = ? AND e.status IN (?)", q.ID, bun.In([]Status{Active, Paused, Failed})).
		Group("status", "waiting_for", "waiting_sender_id", "waiting_action").Scan(ctx, &groups); err != nil {
		return nil, err
	}
	live, held, failed, moving, due := 0, 0, 0, 0, 0
	var next *time.Time
	blocked := map[string]*StallReason{}
	var order []string
	for _, g := range groups {
		switch Status(g.Status) {
		case Failed:
			failed += g.N
			continue
		case Paused:
			live += g.N
			continue
		}
		live += g.N
		held += g.N
		if g.Next != nil && (next == nil || g.Next.Before(*next)) {
			n := *g.Next
			next = &n
		}
		code := deref(g.WaitingFor)
		// A wait and its time are what the runner found when it last
		// looked. A wait that ends by itself means nothing while the
		// sequence is not active (activation sets them going again), and
		// one whose time has passed is due: the runner looks again at its
		// next tick.
		if (ordinary[code] || selfLifting[code]) && (!active || g.Next != nil && !g.Next.After(now)) {
			code = ""
		}
		if code == "" || ordinary[code] || selfLifting[code] {
			moving += g.N
		}
		if code == "" || ordinary[code] {
			if code == "" {
				due += g.N
			}
			continue
		}
		key := code + "|" + deref(g.SenderID) + "|" + deref(g.Action)
		r, ok := blocked[key]
		if !ok {
			r = &StallReason{Code: code, SenderID: g.SenderID, Action: deref(g.Action), Count: new(int)}
			blocked[key] = r
			order = append(order, key)
		}
		*r.Count += g.N
		// Until is when a limit lifts by itself: a time ahead, on a
		// sequence that runs.
		if active && g.Next != nil && g.Next.After(now) && (r.Until == nil || g.Next.Before(*r.Until)) {
			u := *g.Next
			r.Until = &u
		}
	}
	sort.Strings(order)
	for _, key := range order {
		r := blocked[key]
		text, ok := reasonText[r.Code]
		if m, remedy, guard := senders.GuardText(r.Code); !ok && guard {
			// A guard's wait reads as the guard words it.
			text, ok = [2]string{m, remedy}, true
		}
		if !ok {
			text = [2]string{"%d enrollments wait (" + r.Code + ").", "Nothing to do: they go on by themselves."}
		}
		if r.Code == "daily_cap_reached" || r.Code == "warmup_limit" {
			r.Message = fmt.Sprintf(text[0], *r.Count, r.Action)
		} else {
			r.Message = fmt.Sprintf(text[0], *r.Count)
		}
		r.Remedy = text[1]
		add(*r)
	}
	if failed > 0 {
		add(StallReason{Code: "failed_enrollments", Count: &failed, Message: fmt.Sprintf("%d enrollments failed at a step.", failed),
			Remedy: "See GET /v1/sequences/{id}/failed, fix the cause, then POST /v1/enrollments/recover."})
	}
	// A lead that becomes do-not-contact stops its enrollments at once
	// (LeadsStopped); the runner stops any it finds so before a step.
	var dnc int
	if err := idb.NewSelect().Model((*Enrollment)(nil)).ColumnExpr("count(*)").
		Where("e.sequence_id = ? AND e.status = 'stopped' AND e.last_error_code = 'do_not_contact'", q.ID).Scan(ctx, &dnc); err != nil {
		return nil, err
	}
	if dnc > 0 {
		add(StallReason{Code: "leads_do_not_contact", Count: &dnc, Message: fmt.Sprintf("%d enrollments stopped because their lead became do-not-contact.", dnc),
			Remedy: "Nothing to do: do-not-contact leads are never sent to; enrol other leads."})
	}
	if notActive >= 0 && held > 0 {
		r := &out.Reasons[notActive]
		r.Count = &held
		r.Message = fmt.Sprintf("The sequence is %s: its %d enrollments wait for it to be activated.", q.Status, held)
	}
	if next != nil && next.Before(now) {
		next = &now // due now: the runner looks at its next tick
	}
	if live == 0 {
		add(StallReason{Code: "no_active_enrollments", Message: "The sequence has no live enrollments.", Remedy: "Enrol leads: POST /v1/enrollments/preview, then POST /v1/enrollments."})
	} else if active && moving > 0 && due == 0 && len(blocked) == 0 {
		c := moving
		add(StallReason{Code: "all_waiting", Count: &c, Until: next, Message: fmt.Sprintf("All %d active enrollments wait for a step's time (a wait, an acceptance, an out-of-office return or a retry).", moving),
			Remedy: "Nothing to do: the next one is due at next_action_at."})
	}
	out.NextActionAt = next
	out.Sending = q.Status == sequences.Active && len(ps) == 0 && !ws.Suspended && moving > 0 && (len(ss) == 0 || usableN > 0)
	if q.Status != sequences.Active {
		out.NextActionAt = nil
	}
	return out, nil
}

// DayCapacity is one local day of a sender's capacity.
type DayCapacity struct {
	Date    string           `json:"date" format:"date"`
	Actions []ActionCapacity `json:"actions"`
}

// ActionCapacity is one action's capacity on a day.
type ActionCapacity struct {
	Action       senders.Action `json:"action"`
	EffectiveCap int            `json:"effective_cap"`
	Used         int            `json:"used" doc:"Already used (today only)."`
	Planned      int            `json:"planned" doc:"Steps of this action already due that day."`
	Free         int            `json:"free" doc:"effective_cap - used - planned, at least 0."`
}

// Capacity returns a sender's capacity for its next 7 local days.
// Returns E_NOT_FOUND if the sender is not visible to the principal.
func (svc *Service) Capacity(ctx context.Context, p apikit.Principal, s *senders.Sender) ([]DayCapacity, error) {
	now := svc.clock.Now()
	loc := s.Location()
	end := now
	days := make([]string, 7)
	for i := range days {
		days[i] = senders.LocalDate(end, loc)
		end = senders.NextMidnight(end, loc)
	}
	var rows []struct {
		SequenceID string    `bun:"sequence_id"`
		StepID     string    `bun:"step_id"`
		NextRunAt  time.Time `bun:"next_run_at"`
	}
	if err := svc.db.IDB(ctx).NewSelect().Model((*Enrollment)(nil)).Column("sequence_id", "step_id", "next_run_at").
		Where("(e.sender_id = ? OR e.email_sender_id = ?) AND e.status = 'active' AND NOT e.held AND e.next_run_at < ?", s.ID, s.ID, end).
		Scan(ctx, &rows); err != nil {
		return nil, err
	}
	planned := map[string]map[senders.Action]int{}
	seqs := map[string]*sequences.Sequence{}
	for _, r := range rows {
		q, ok := seqs[r.SequenceID]
		if !ok {
			var err error
			if q, err = svc.sequences.ByID(ctx, s.WorkspaceID, r.SequenceID); err != nil {
				return nil, err
			}
			seqs[r.SequenceID] = q
		}
		step, ok := q.StepByID(r.StepID)
		a, isAction := step.Action()
		if !ok || !isAction || a.Channel() != s.Channel {
			continue
		}
		day := senders.LocalDate(r.NextRunAt, loc)
		if day < days[0] {
			day = days[0]
		}
		if planned[day] == nil {
			planned[day] = map[senders.Action]int{}
		}
		planned[day][a]++
	}
	today, err := svc.senders.Budgets(ctx, apikit.Principal{WorkspaceID: s.WorkspaceID}, s.ID)
	if err != nil {
		return nil, err
	}
	out := make([]DayCapacity, 0, 7)
	for i, day := range days {
		dc := DayCapacity{Date: day, Actions: []ActionCapacity{}}
		for _, a := range senders.ActionsOf(s.Channel) {
			ac := ActionCapacity{Action: a, EffectiveCap: s.Limits(a, day).EffectiveCap, Planned: planned[day][a]}
			if i == 0 {
				for _, b := range today.Actions {
					if b.Action == a {
						ac.Used = b.Used
					}
				}
			}
			ac.Free = max(ac.EffectiveCap-ac.Used-ac.Planned, 0)
			dc.Actions = append(dc.Actions, ac)
		}
		out = append(out, dc)
	}
	return out, nil
}
