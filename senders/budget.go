package senders

import (
	"context"
	"time"
)

// ActionBudget is one action's budget on one local day: every limit that
// applies, the lowest of them, and what was used.
type ActionBudget struct {
	Action       Action `json:"action" enum:"@actions"`
	Cap          int    `json:"cap" doc:"The configured daily cap (or the default when the setup leaves it out)."`
	Ceiling      int    `json:"ceiling" doc:"The platform's daily ceiling; no configuration goes above it."`
	WarmupCap    *int   `json:"warmup_cap" doc:"Today's warm-up ramp; null when the sender is not warming up."`
	HealthCap    *int   `json:"health_cap" doc:"The limit health sets: half for warning, 0 for restricted or disconnected; null when healthy."`
	GuardCap     *int   `json:"guard_cap" doc:"The limit the sender's guards set on the day: what spacing and the hourly cap fit in its working hours, 0 on a holiday; null when none limits it."`
	Guard        string `json:"guard,omitempty" doc:"The guard that sets guard_cap: spacing, hourly_cap or holiday."`
	EffectiveCap int    `json:"effective_cap" doc:"The lowest of cap, ceiling, warmup_cap, health_cap and guard_cap: what the sender may do today."`
	Used         int    `json:"used"`
	Remaining    int    `json:"remaining"`
}

// WeekBudget is the rolling 7-day invitation budget: today and the six
// local days before it.
type WeekBudget struct {
	Cap       int `json:"cap" doc:"The configured 7-day invitation cap, at most the ceiling of 200."`
	Used      int `json:"used"`
	Remaining int `json:"remaining"`
}

// Budgets is a sender's budget for its local today.
type Budgets struct {
	SenderID   string         `json:"sender_id" format:"uuid"`
	Date       string         `json:"date" format:"date" doc:"The sender's local date."`
	ResetsAt   time.Time      `json:"resets_at" doc:"The next local midnight, when daily budgets reset."`
	Actions    []ActionBudget `json:"actions" doc:"One entry per action of the sender's channel."`
	InviteWeek *WeekBudget    `json:"invite_week" doc:"The 7-day invitation budget; null for an email sender."`
}

// ActionsOf returns the actions a sender of channel c performs.
func ActionsOf(c Channel) []Action {
	var out []Action
	for _, a := range Actions {
		if a.Channel() == c {
			out = append(out, a)
		}
	}
	return out
}

// Limits returns action a's limits for s on the local date day, with Used
// and Remaining left at 0.
func (s *Sender) Limits(a Action, day string) ActionBudget {
	b := ActionBudget{Action: a, Cap: s.Caps.Daily(a), Ceiling: Ceilings[a]}
	eff := min(b.Cap, b.Ceiling)
	if s.Warmup != nil {
		w := s.Warmup.Cap(day)
		b.WarmupCap = &w
		eff = min(eff, w)
	}
	switch s.Health {
	case Warning:
		h := eff / 2
		b.HealthCap = &h
	case Restricted, Disconnected:
		h := 0
		b.HealthCap = &h
	}
	if b.HealthCap != nil {
		eff = min(eff, *b.HealthCap)
	}
	if g, code, ok := s.GuardCap(a, day); ok {
		b.GuardCap, b.Guard = &g, code
		eff = min(eff, g)
	}
	b.EffectiveCap = max(eff, 0)
	return b
}

// WeekCap returns the sender's 7-day invitation cap.
func (s *Sender) WeekCap() int { return min(s.Caps.Week(), CeilingInviteWeek) }

// dayOffset returns the local date n days from day (YYYY-MM-DD).
func dayOffset(day string, n int) string {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return day
	}
	return d.AddDate(0, 0, n).Format(time.DateOnly)
}

// monthKey is the usage day under which a month's invitation notes count.
func monthKey(day string) string { return day[:8] + "01" }

const noteKey = "invite_note"

// budgets computes s's budgets on its local date at t.
func (svc *Service) budgets(ctx context.Context, s *Sender, t time.Time) (*Budgets, error) {
	loc := s.Location()
	day := LocalDate(t, loc)
	usage, err := svc.store.Usage(ctx, s.ID, dayOffset(day, -6), day)
	if err != nil {
		return nil, err
	}
	used := map[string]int{}
	week := 0
	for _, u := range usage {
		if u.Day == day {
			used[u.Action] = u.Used
		}
		if u.Action == string(Invite) {
			week += u.Used
		}
	}
	out := &Budgets{SenderID: s.ID, Date: day, ResetsAt: NextMidnight(t, loc), Actions: []ActionBudget{}}
	for _, a := range ActionsOf(s.Channel) {
		b := s.Limits(a, day)
		b.Used = used[string(a)]
		b.Remaining = max(b.EffectiveCap-b.Used, 0)
		out.Actions = append(out.Actions, b)
	}
	if s.Channel == LinkedIn {
		c := s.WeekCap()
		out.InviteWeek = &WeekBudget{Cap: c, Used: week, Remaining: max(c-week, 0)}
	}
	return out, nil
}

// Blocked says why an action may not run now and when it may next.
type Blocked struct {
	// Code is daily_cap_reached, warmup_limit, weekly_invite_cap_reached,
	// sender_restricted or sender_disconnected.
	Code   string
	Action Action
	Until  time.Time
}

// Reserve takes one unit of action a's budget for s at t, inside the
// transaction ctx carries. It returns nil when the action may run, or what
// blocks it and until when. The unit is taken under the lock of the day's
// counter row, so two runners cannot pass a cap together; GiveBack returns
// it when the action does not happen.
func (svc *Service) Reserve(ctx context.Context, s *Sender, a Action, t time.Time) (*Blocked, error) {
	loc := s.Location()
	day := LocalDate(t, loc)
	lim := s.Limits(a, day)
	ok, err := svc.store.Take(ctx, s.ID, day, string(a), lim.EffectiveCap)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &Blocked{Code: limitCode(s, lim), Action: a, Until: NextMidnight(t, loc)}, nil
	}
	if a != Invite {
		return nil, nil
	}
	usage, err := svc.store.Usage(ctx, s.ID, dayOffset(day, -6), day)
	if err != nil {
		return nil, err
	}
	perDay := map[string]int{}
	week := 0
	for _, u := range usage {
		if u.Action == string(Invite) {
			perDay[u.Day] = u.Used
			week += u.Used
		}
	}
	if week <= s.WeekCap() {
		return nil, nil
	}
	if err := svc.store.GiveBack(ctx, s.ID, day, string(Invite)); err != nil {
		return nil, err
	}
	// The window frees a unit on the first later day on which the days
	// that leave it carried enough invitations.
	perDay[day]--
	week--
	until := NextMidnight(t, loc)
	for k := 1; k <= 7; k++ {
		week -= perDay[dayOffset(day, k-7)]
		if week < s.WeekCap() {
			break
		}
		until = NextMidnight(until, loc)
	}
	return &Blocked{Code: "weekly_invite_cap_reached", Action: a, Until: until}, nil
}

// limitCode names the limit that makes lim's effective cap what it is.
func limitCode(s *Sender, lim ActionBudget) string {
	switch {
	case s.Health == Disconnected:
		return "sender_disconnected"
	case s.Health == Restricted:
		return "sender_restricted"
	case lim.GuardCap != nil && *lim.GuardCap == lim.EffectiveCap && *lim.GuardCap < min(lim.Cap, lim.Ceiling):
		return lim.Guard
	case lim.WarmupCap != nil && *lim.WarmupCap == lim.EffectiveCap && *lim.WarmupCap < min(lim.Cap, lim.Ceiling):
		return "warmup_limit"
	}
	return "daily_cap_reached"
}

// GiveBack returns the unit Reserve took for action a at t.
func (svc *Service) GiveBack(ctx context.Context, s *Sender, a Action, t time.Time) error {
	return svc.store.GiveBack(ctx, s.ID, LocalDate(t, s.Location()), string(a))
}

// TakeNote takes one of the month's personal notes on invitations for s at
// t, and reports whether one was left. Premium senders and senders of no
// note limit always have one.
func (svc *Service) TakeNote(ctx context.Context, s *Sender, t time.Time) (bool, error) {
	n := s.NotesPerMonthOf()
	if n < 0 {
		return true, nil
	}
	return svc.store.Take(ctx, s.ID, monthKey(LocalDate(t, s.Location())), noteKey, n)
}

// NextMonth returns the first instant of the local month after t's: when a
// sender's invitation notes renew.
func NextMonth(t time.Time, loc *time.Location) time.Time {
	lt := t.In(loc)
	return time.Date(lt.Year(), lt.Month()+1, 1, 0, 0, 0, 0, loc).UTC()
}
