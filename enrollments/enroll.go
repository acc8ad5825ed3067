package enrollments

// Enrolling: the preview of what enrolling leads in a sequence would do
// (who is eligible, who is excluded and why, which sender each gets, when
// the first actions would happen) and the commit that enrols them.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// EnrollInput is the body of a preview or a commit.
type EnrollInput struct {
	SequenceID string   `json:"sequence_id" format:"uuid" required:"true"`
	LeadIDs    []string `json:"lead_ids" required:"true" minItems:"1" maxItems:"10000" format:"uuid" doc:"1 to 10,000 lead ids (more gives E_TOO_MANY); a repeated id counts once."`
	Confirm    bool     `json:"confirm,omitempty" doc:"Commit only: must be true."`
}

// Exclusion is a listed lead that will not be (or was not) enrolled.
type Exclusion struct {
	LeadID string `json:"lead_id"`
	Reason string `json:"reason" enum:"not_found,do_not_contact,blacklisted,already_enrolled,already_in_sequence,client_mismatch,missing_linkedin,missing_email,missing_variable"`
	Detail string `json:"detail"`
}

// Assignment is the sender a lead gets.
type Assignment struct {
	LeadID        string  `json:"lead_id" format:"uuid"`
	SenderID      string  `json:"sender_id" format:"uuid"`
	EmailSenderID *string `json:"email_sender_id,omitempty" format:"uuid" doc:"For a sequence with LinkedIn and email steps: the sender of the email steps."`
}

// Warning is something to know before committing.
type Warning struct {
	Code    string `json:"code" enum:"sequence_not_active,sender_paused,sender_unhealthy,no_usable_sender"`
	Message string `json:"message"`
	Count   int    `json:"count" doc:"How many leads or senders it concerns."`
}

// Estimate is when the first action of the eligible leads would happen.
type Estimate struct {
	FirstActionAt *time.Time `json:"first_action_at" doc:"When the first of the leads gets the sequence's first action."`
	LastActionAt  *time.Time `json:"last_action_at" doc:"When the last of them has had it, at the senders' effective caps and within their schedules."`
	Days          int        `json:"days" doc:"Calendar days from the first to the last."`
}

// Preview is what enrolling the listed leads would do.
type Preview struct {
	SequenceID  string       `json:"sequence_id" format:"uuid"`
	EligibleIDs []string     `json:"eligible_ids"`
	Excluded    []Exclusion  `json:"excluded"`
	Assignments []Assignment `json:"assignments"`
	Warnings    []Warning    `json:"warnings"`
	Estimate    Estimate     `json:"estimate"`
}

// CommitResult is what a commit enrolled.
type CommitResult struct {
	Enrolled      int         `json:"enrolled"`
	EnrollmentIDs []string    `json:"enrollment_ids"`
	Excluded      []Exclusion `json:"excluded"`
	Warnings      []Warning   `json:"warnings"`
}

func checkInput(in EnrollInput) ([]string, error) {
	if len(in.LeadIDs) == 0 {
		return nil, apikit.Invalid("lead_ids is empty.", "Send 1 to 10,000 lead ids.")
	}
	if len(in.LeadIDs) > MaxLeadIDs {
		return nil, apikit.TooMany(fmt.Sprintf("%d lead ids were sent; one call takes at most %d.", len(in.LeadIDs), MaxLeadIDs), "Split the ids over several calls.")
	}
	var ids []string
	seen := make(map[string]bool, len(in.LeadIDs))
	for _, id := range in.LeadIDs {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// plan is the outcome of checking every rule for a list of leads.
type plan struct {
	q           *sequences.Sequence
	eligible    []leads.Lead
	excluded    []Exclusion
	assignments []Assignment
	warnings    []Warning
	senders     []senders.Sender
}

// check applies every enrollment rule to the leads, at this moment.
func (svc *Service) check(ctx context.Context, p apikit.Principal, q *sequences.Sequence, ids []string) (*plan, error) {
	pl := &plan{q: q, excluded: []Exclusion{}, assignments: []Assignment{}, warnings: []Warning{}}
	exclude := func(id, reason, detail string) {
		pl.excluded = append(pl.excluded, Exclusion{LeadID: id, Reason: reason, Detail: detail})
	}
	var valid []string
	for _, id := range ids {
		if apikit.ValidID(id) {
			valid = append(valid, id)
		}
	}
	found, err := svc.leads.ByIDs(ctx, p.WorkspaceID, valid)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*leads.Lead, len(found))
	for i := range found {
		if p.SeesClient(deref(found[i].ClientID)) {
			byID[found[i].ID] = &found[i]
		}
	}
	var people []workspace.Person
	var candidates []*leads.Lead
	for _, id := range ids {
		if l := byID[id]; l != nil {
			candidates = append(candidates, l)
			people = append(people, l.Person())
		} else {
			exclude(id, "not_found", "No lead with this id is visible to this key.")
		}
	}
	hits, err := svc.catalog.BlacklistHits(ctx, p.WorkspaceID, people)
	if err != nil {
		return nil, err
	}
	candIDs := make([]string, len(candidates))
	for i, l := range candidates {
		candIDs[i] = l.ID
	}
	inSeq, err := svc.store.InSequence(ctx, q.ID, candIDs)
	if err != nil {
		return nil, err
	}
	live, err := svc.store.Live(ctx, p.WorkspaceID, candIDs)
	if err != nil {
		return nil, err
	}
	liveIn := map[string]string{}
	for _, e := range live {
		liveIn[e.LeadID] = e.SequenceID
	}
	seqNames := map[string]string{}
	needLI, needEmail := sequences.Needs(q)
	for i, l := range candidates {
		switch {
		case q.ClientID != nil && deref(l.ClientID) != *q.ClientID:
			exclude(l.ID, "client_mismatch", "The lead belongs to another client than the sequence (or to none).")
		case hits[i] != "":
			exclude(l.ID, "blacklisted", "The lead matches the workspace blacklist entry "+hits[i]+".")
		case l.DoNotContact:
			exclude(l.ID, "do_not_contact", "The lead is marked do-not-contact.")
		case inSeq[l.ID]:
			exclude(l.ID, "already_in_sequence", "The lead is or was enrolled in this sequence.")
		case liveIn[l.ID] != "":
			name, ok := seqNames[liveIn[l.ID]]
			if !ok {
				if other, err := svc.sequences.ByID(ctx, p.WorkspaceID, liveIn[l.ID]); err == nil {
					name = other.Name
				}
				seqNames[liveIn[l.ID]] = name
			}
			exclude(l.ID, "already_enrolled", fmt.Sprintf("The lead is live in sequence %q (%s); a lead has one live enrollment at a time.", name, liveIn[l.ID]))
		case needLI && !HasLinkedIn(l):
			exclude(l.ID, "missing_linkedin", "The sequence has LinkedIn steps and the lead has no LinkedIn id, provider id or public identifier.")
		case needEmail && !HasEmail(l):
			exclude(l.ID, "missing_email", "The sequence has email steps and the lead has no email address; put them behind a has_email condition to enrol such leads.")
		default:
			if step, name := missingVariable(q, l); name != "" {
				exclude(l.ID, "missing_variable", fmt.Sprintf("Step %q needs {{%s}}, which the lead does not have, and the template gives no fallback.", step, name))
				continue
			}
			pl.eligible = append(pl.eligible, *l)
		}
	}
	if q.Status != sequences.Active {
		pl.warnings = append(pl.warnings, Warning{Code: "sequence_not_active",
			Message: fmt.Sprintf("The sequence is %s: enrolled leads wait until it is activated.", q.Status), Count: len(pl.eligible)})
	}
	if pl.senders, err = svc.sequences.SendersOf(ctx, q); err != nil {
		return nil, err
	}
	if err := svc.assign(ctx, pl); err != nil {
		return nil, err
	}
	return pl, nil
}

// HasLinkedIn reports whether a LinkedIn action can reach the lead.
func HasLinkedIn(l *leads.Lead) bool {
	return deref(l.LinkedInID) != "" || deref(l.ProviderID) != "" || deref(l.PublicIdentifier) != ""
}

// HasEmail reports whether the lead has an email address.
func HasEmail(l *leads.Lead) bool { return deref(l.EmailWork) != "" || deref(l.EmailPersonal) != "" }

// VarsOf returns the template variables of a lead.
func VarsOf(l *leads.Lead) sequences.Vars {
	return func(name string) (string, bool) {
		switch name {
		case "first_name":
			f, _, _ := strings.Cut(strings.TrimSpace(deref(l.Name)), " ")
			return f, f != ""
		case "name":
			return deref(l.Name), l.Name != nil
		case "company":
			return deref(l.Company), l.Company != nil
		case "headline":
			return deref(l.Headline), l.Headline != nil
		}
		if key, ok := strings.CutPrefix(name, "custom."); ok {
			switch v := l.Custom[key].(type) {
			case string:
				return v, true
			case nil:
				return "", false
			case map[string]any, []any:
				return "", false
			default:
				return fmt.Sprint(v), true
			}
		}
		return "", false
	}
}

// missingVariable returns the first step and variable whose template the
// lead cannot fill.
func missingVariable(q *sequences.Sequence, l *leads.Lead) (string, string) {
	vars := VarsOf(l)
	for _, s := range q.Steps {
		for _, t := range []string{s.Note, s.Subject, s.Body} {
			if t == "" {
				continue
			}
			if _, missing, err := sequences.Render(t, vars); err == nil && len(missing) > 0 {
				return s.ID, missing[0]
			}
		}
	}
	return "", ""
}

func nonEmpty(vals ...string) []string {
	var out []string
	for _, v := range vals {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// deref is the value of an optional text field.
var deref = apikit.Deref

// mainAction is the action whose cap paces a channel's senders in q: its
// first action step of that channel.
func mainAction(q *sequences.Sequence, c senders.Channel) senders.Action {
	for _, s := range q.Steps {
		if a, ok := s.Action(); ok && a.Channel() == c {
			return a
		}
	}
	if c == senders.Email {
		return senders.SendEmail
	}
	return senders.Invite
}

// usable reports whether a sender can send now.
func usable(s *senders.Sender) bool {
	return s.Status == senders.Active && s.Health != senders.Restricted && s.Health != senders.Disconnected
}

// assign gives each eligible lead a sender per channel the sequence uses.
// A lead one of the senders already contacted keeps that sender; the
// others go to the usable sender with the most free capacity: the lowest
// live load per unit of today's effective cap.
func (svc *Service) assign(ctx context.Context, pl *plan) error {
	needLI, needEmail := false, false
	for _, s := range pl.q.Steps {
		switch s.Channel() {
		case senders.LinkedIn:
			needLI = true
		case senders.Email:
			needEmail = true
		}
	}
	ids := make([]string, len(pl.eligible))
	for i, l := range pl.eligible {
		ids[i] = l.ID
	}
	now := db.Now(ctx, svc.clock)
	pick := func(c senders.Channel) (func(leadID string) string, error) {
		var pool []senders.Sender
		for _, s := range pl.senders {
			if s.Channel == c {
				pool = append(pool, s)
			}
		}
		var ok []senders.Sender
		for _, s := range pool {
			if usable(&s) {
				ok = append(ok, s)
			} else if len(pl.eligible) > 0 {
				code, msg := "sender_unhealthy", fmt.Sprintf("Sender %s is %s: its leads wait until it recovers.", s.Name, s.Health)
				if s.Status == senders.Paused {
					code, msg = "sender_paused", fmt.Sprintf("Sender %s is paused: leads assigned to it wait until it is active.", s.Name)
				}
				pl.warnings = append(pl.warnings, Warning{Code: code, Message: msg, Count: 1})
			}
		}
		if len(ok) == 0 {
			if len(pool) > 0 && len(pl.eligible) > 0 {
				pl.warnings = append(pl.warnings, Warning{Code: "no_usable_sender",
					Message: fmt.Sprintf("No %s sender of the sequence can send now; the leads are spread over the others and wait.", c), Count: len(pl.eligible)})
			}
			ok = pool
		}
		if len(ok) == 0 {
			return func(string) string { return "" }, nil
		}
		sids := make([]string, len(ok))
		for i, s := range ok {
			sids[i] = s.ID
		}
		contacted, err := svc.store.ContactedBy(ctx, ids, sids)
		if err != nil {
			return nil, err
		}
		load, err := svc.store.LiveLoad(ctx, sids)
		if err != nil {
			return nil, err
		}
		action := mainAction(pl.q, c)
		caps := map[string]int{}
		for _, s := range ok {
			caps[s.ID] = max(s.Limits(action, senders.LocalDate(now, s.Location())).EffectiveCap, 1)
		}
		return func(leadID string) string {
			if sid, ok := contacted[leadID]; ok {
				load[sid]++
				return sid
			}
			best := ""
			for _, sid := range sids {
				if best == "" || load[sid]*caps[best] < load[best]*caps[sid] {
					best = sid
				}
			}
			load[best]++
			return best
		}, nil
	}
	var liPick, emailPick func(string) string
	var err error
	if needLI {
		if liPick, err = pick(senders.LinkedIn); err != nil {
			return err
		}
	}
	if needEmail {
		if emailPick, err = pick(senders.Email); err != nil {
			return err
		}
	}
	for _, l := range pl.eligible {
		a := Assignment{LeadID: l.ID}
		switch {
		case needLI && needEmail:
			a.SenderID = liPick(l.ID)
			e := emailPick(l.ID)
			a.EmailSenderID = &e
		case needLI:
			a.SenderID = liPick(l.ID)
		case needEmail:
			a.SenderID = emailPick(l.ID)
		}
		pl.assignments = append(pl.assignments, a)
	}
	return nil
}

// Preview says what enrolling the leads in the sequence would do, and
// changes nothing.
// Returns E_NOT_FOUND if the sequence is not visible to the principal,
// E_TOO_MANY for more than 10,000 ids and E_PAYLOAD_INVALID for none.
func (svc *Service) Preview(ctx context.Context, p apikit.Principal, in EnrollInput) (*Preview, error) {
	ids, err := checkInput(in)
	if err != nil {
		return nil, err
	}
	q, err := svc.sequences.Visible(ctx, p, in.SequenceID)
	if err != nil {
		return nil, err
	}
	pl, err := svc.check(ctx, p, q, ids)
	if err != nil {
		return nil, err
	}
	out := &Preview{SequenceID: q.ID, EligibleIDs: []string{}, Excluded: pl.excluded, Assignments: pl.assignments, Warnings: pl.warnings}
	for _, l := range pl.eligible {
		out.EligibleIDs = append(out.EligibleIDs, l.ID)
	}
	out.Estimate = svc.estimate(pl)
	return out, nil
}

// estimate walks the senders' local days from now: each working day a
// sender starts as many leads as its effective cap of the sequence's first
// action allows (today: what is left of it is not known here, so the cap).
func (svc *Service) estimate(pl *plan) Estimate {
	var est Estimate
	if len(pl.assignments) == 0 {
		return est
	}
	first := senders.Invite
	for _, s := range pl.q.Steps {
		if a, ok := s.Action(); ok {
			first = a
			break
		}
	}
	perSender := map[string]int{}
	for _, a := range pl.assignments {
		sid := a.SenderID
		if first.Channel() == senders.Email && a.EmailSenderID != nil {
			sid = *a.EmailSenderID
		}
		perSender[sid]++
	}
	now := svc.clock.Now()
	for _, s := range pl.senders {
		n := perSender[s.ID]
		if n == 0 {
			continue
		}
		loc := s.Location()
		start, _, ok := s.Schedule.Window(now, loc)
		if !ok {
			continue
		}
		if start.Before(now) {
			start = now
		}
		if est.FirstActionAt == nil || start.Before(*est.FirstActionAt) {
			est.FirstActionAt = &start
		}
		t := start
		var last time.Time
		for day := 0; day < 366 && n > 0; day++ {
			ws, we, ok := s.Schedule.Window(t, loc)
			if !ok {
				break
			}
			date := senders.LocalDate(ws, loc)
			n -= s.Limits(first, date).EffectiveCap
			// The last window of that local day.
			last = we
			for {
				_, e2, ok := s.Schedule.Window(last, loc)
				if !ok || senders.LocalDate(e2, loc) != date || !e2.After(last) {
					break
				}
				last = e2
			}
			t = senders.NextMidnight(ws, loc)
		}
		if n > 0 {
			continue // more than a year: no estimate for this sender
		}
		if est.LastActionAt == nil || last.After(*est.LastActionAt) {
			est.LastActionAt = &last
		}
	}
	if est.FirstActionAt != nil && est.LastActionAt != nil {
		est.Days = int(est.LastActionAt.Sub(*est.FirstActionAt).Hours()/24) + 1
	}
	return est
}

// WaitStartsLater is the wait of an enrolment a sequence's rule starts
// later (after_days): its first step runs at the wait's end.
const WaitStartsLater = "starts_later"

// CommitOptions are what a sequence's rule adds to a commit (the API's
// commit sets none of them).
type CommitOptions struct {
	// RuleOf is the sequence whose rule enrols the leads (Enrollment.RuleOf).
	RuleOf string
	// StartAt, when after now, is when the enrolments start: until then
	// they wait (WaitStartsLater).
	StartAt time.Time
}

// Commit enrols the listed leads that every rule allows at this moment.
// Returns E_PAYLOAD_INVALID without confirm: true, E_NOT_FOUND if the
// sequence is not visible to the principal, E_GRAPH_INVALID if its graph
// cannot run and E_TOO_MANY for more than 10,000 ids.
func (svc *Service) Commit(ctx context.Context, p apikit.Principal, in EnrollInput) (*CommitResult, error) {
	return svc.CommitWith(ctx, p, in, CommitOptions{})
}

// CommitWith is Commit with a rule's options: the same checks, the same
// errors.
func (svc *Service) CommitWith(ctx context.Context, p apikit.Principal, in EnrollInput, opt CommitOptions) (*CommitResult, error) {
	if !in.Confirm {
		return nil, apikit.Invalid("confirm must be true to enrol leads.",
			`Preview first with POST /v1/enrollments/preview, then send the same sequence_id and the chosen lead_ids with "confirm": true.`)
	}
	ids, err := checkInput(in)
	if err != nil {
		return nil, err
	}
	var out *CommitResult
	err = svc.db.InTx(ctx, func(ctx context.Context) error {
		q, err := svc.sequences.Visible(ctx, p, in.SequenceID)
		if err != nil {
			return err
		}
		ps, err := svc.sequences.Problems(ctx, q)
		if err != nil {
			return err
		}
		if len(ps) > 0 {
			return sequences.GraphInvalid(q.Name, ps)
		}
		pl, err := svc.check(ctx, p, q, ids)
		if err != nil {
			return err
		}
		now := db.Now(ctx, svc.clock)
		out = &CommitResult{EnrollmentIDs: []string{}, Excluded: pl.excluded, Warnings: pl.warnings}
		es := make([]Enrollment, 0, len(pl.eligible))
		evs := make([]events.Event, 0, len(pl.eligible))
		closed, closedChannel := closedSenders(pl.senders, q, now)
		for i, l := range pl.eligible {
			a := pl.assignments[i]
			e := Enrollment{ID: apikit.NewID(), WorkspaceID: p.WorkspaceID, SequenceID: q.ID, LeadID: l.ID, ClientID: q.ClientID,
				SenderID: nilIfEmpty(a.SenderID), EmailSenderID: a.EmailSenderID, Status: Active, StepID: q.First(), StepStartedAt: now,
				NextRunAt: &now, Held: q.Status != sequences.Active, RuleOf: nilIfEmpty(opt.RuleOf), CreatedAt: now, UpdatedAt: now}
			data := map[string]any{"sequence_id": q.ID, "sequence_name": q.Name, "sender_id": a.SenderID}
			if e.RuleOf != nil {
				data["rule_of"] = *e.RuleOf
			}
			// The first step's sender, as the runner picks it. A lead the
			// runner would stop on its first look (one who replied) is left
			// for that look.
			id := a.SenderID
			if a.EmailSenderID != nil && closedChannel == senders.Email {
				id = *a.EmailSenderID
			}
			if start := opt.StartAt; start.After(now) {
				e.Wait(WaitStartsLater, &start)
				data["starts_at"] = start
			} else if w, ok := closed[id]; ok && (!l.Replied || e.AfterReply()) && !l.DoNotContact {
				e.WaitOn(w.senderID, w.action, "outside_schedule", &w.until)
			}
			es = append(es, e)
			out.EnrollmentIDs = append(out.EnrollmentIDs, e.ID)
			evs = append(evs, events.Event{WorkspaceID: p.WorkspaceID, LeadID: l.ID, SequenceID: q.ID, EnrollmentID: e.ID,
				SenderID: a.SenderID, ClientID: deref(q.ClientID), StepID: e.StepID, Kind: EventCreated, Data: data})
		}
		if err := svc.store.Insert(ctx, es); err != nil {
			return db.Conflict(err, "Another call enrolled some of these leads at the same moment.", "Preview again and commit the leads that are still eligible.")
		}
		if len(es) > 0 {
			if err := svc.store.CountStep(ctx, q.ID, q.First(), "entered", len(es)); err != nil {
				return err
			}
		}
		out.Enrolled = len(es)
		return svc.log.EmitMany(ctx, evs)
	})
	return out, err
}

// scheduleWait is the wait of a new enrollment whose first step is an
// action of a sender outside its working hours.
type scheduleWait struct {
	senderID string
	action   senders.Action
	until    time.Time
}

// closedSenders returns, when the sequence's first step is an action, that
// action's channel and the wait of each of the sequence's senders of that
// channel that is active, neither restricted nor disconnected, and outside
// its schedule at now: a new enrollment of such a sender would run only to
// learn that, as the runner finds on its first look, so it waits from the
// start. So does one held by a sequence not yet active, as the enrollments
// of a paused sequence keep their waits: activated before the window, it
// runs when the window opens.
func closedSenders(ss []senders.Sender, q *sequences.Sequence, now time.Time) (map[string]scheduleWait, senders.Channel) {
	step, ok := q.StepByID(q.First())
	if !ok {
		return nil, ""
	}
	action, isAction := step.Action()
	if !isAction {
		return nil, ""
	}
	out := map[string]scheduleWait{}
	for _, s := range ss {
		if s.Channel != action.Channel() || s.Status != senders.Active || s.Health == senders.Restricted || s.Health == senders.Disconnected {
			continue
		}
		loc := s.Location()
		if s.Schedule.Open(now, loc) {
			continue
		}
		if next, ok := s.Schedule.NextOpen(now, loc); ok {
			out[s.ID] = scheduleWait{senderID: s.ID, action: action, until: next}
		}
	}
	return out, action.Channel()
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
