// Package senders holds sender accounts (LinkedIn accounts and mailboxes):
// their working-hours schedules, daily caps, warm-up ramps and health, the
// budgets that count what each sender used today, and the Transport that
// performs actions for them.
package senders

import (
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// Channel is how a sender reaches people.
type Channel string

// The channels.
const (
	LinkedIn Channel = "linkedin"
	Email    Channel = "email"
)

// Action is something a sender does that counts against a daily cap.
type Action string

// The capped actions.
const (
	ProfileView Action = "profile_view"
	Invite      Action = "invite"
	Message     Action = "message"
	InMail      Action = "inmail"
	Follow      Action = "follow"
	Like        Action = "like"
	SendEmail   Action = "email"
)

// Actions lists every capped action in a stable order (Specs' order).
var Actions = actionList()

// Channel returns the channel an action is performed on.
func (a Action) Channel() Channel {
	s, _ := a.Spec()
	return s.Channel
}

// Contacts reports whether a reaches the lead with words: an invitation,
// a message, an InMail or an email (a profile view, a follow or a like
// does not).
func (a Action) Contacts() bool {
	s, _ := a.Spec()
	return s.Contacts
}

// Valid reports whether a is one of the capped actions.
func (a Action) Valid() bool {
	_, ok := Ceilings[a]
	return ok
}

// InviteWeek is the key of the rolling 7-day invitation cap in Caps.
const InviteWeek = "invite_week"

// Ceilings are the platform's hard daily limits (and, under InviteWeek, the
// 7-day invitation limit). They are LinkedIn-safe: no configuration can go
// above them.
var Ceilings = actionLimits(true)

// CeilingInviteWeek is the platform's limit on invitations in any 7 local days.
const CeilingInviteWeek = 200

// Defaults are the conservative daily caps a sender gets for an action its
// configuration leaves out.
var Defaults = actionLimits(false)

// DefaultInviteWeek is the 7-day invitation cap when none is configured.
const DefaultInviteWeek = 100

// FreeNotesPerMonth is how many invitations a month a LinkedIn account
// without premium may send with a personal note.
const FreeNotesPerMonth = 5

// Status is whether a sender may be used.
type Status string

// The statuses a setup file can set.
const (
	Active Status = "active"
	Paused Status = "paused"
)

// Health is a sender's standing with its provider.
type Health string

// The health states, best first.
const (
	Healthy      Health = "healthy"
	Warning      Health = "warning"
	Restricted   Health = "restricted"
	Disconnected Health = "disconnected"
)

// Sender is a LinkedIn account or a mailbox that sequences send through.
type Sender struct {
	bun.BaseModel `bun:"table:senders,alias:s"`

	ID          string   `bun:"id,pk" json:"id" format:"uuid"`
	WorkspaceID string   `bun:"workspace_id" json:"-"`
	ClientID    *string  `bun:"client_id" json:"client_id" format:"uuid" doc:"The client this sender works for; null for a workspace-wide sender."`
	Name        string   `bun:"name" json:"name"`
	Channel     Channel  `bun:"channel" json:"channel" enum:"linkedin,email"`
	Address     *string  `bun:"address" json:"address" doc:"The mailbox address of an email sender; null for LinkedIn."`
	Timezone    string   `bun:"timezone" json:"timezone" doc:"IANA timezone of the schedule, the daily caps and the warm-up days."`
	Transport   string   `bun:"transport" json:"transport" enum:"sandbox,smtp,unipile"`
	Status      Status   `bun:"status" json:"status" enum:"active,paused"`
	Premium     bool     `bun:"premium" json:"premium" doc:"LinkedIn premium: without it, 5 invitations a calendar month may carry a note."`
	MonthlyCost float64  `bun:"monthly_cost" json:"monthly_cost" doc:"What the sender costs a month, in the workspace's currency; spread over its days and work by the cost reports."`
	Schedule    Schedule `bun:"schedule,type:jsonb" json:"schedule" doc:"Working windows per weekday (mon..sun), local to timezone, as HH:MM-HH:MM."`
	Caps        Caps     `bun:"caps,type:jsonb" json:"caps" doc:"Configured daily cap per action, with defaults filled in, and invite_week (any 7 local days)."`
	Warmup      *Warmup  `bun:"warmup,type:jsonb" json:"warmup" doc:"The warm-up ramp; null when the sender is not warming up."`
	// Settings are how its transport connects (no secrets: those are
	// named, and read when the transport connects).
	Settings Settings `bun:"settings,type:jsonb" json:"-"`
	// Guards are what its setup sets for its guards (guards.go).
	Guards GuardSettings `bun:"guards,type:jsonb" json:"guards" doc:"The sender's guards: spacing, hourly_cap, holidays, min_acceptance_rate, max_bounce_rate, withdraw_after_days, withdraw_per_day, notes_per_month (each by channel), defaults filled in."`
	// GuardsResumed is when a manager last resumed each guard that stops
	// the sender (by code): its window starts again there.
	GuardsResumed map[string]time.Time `bun:"guards_resumed,type:jsonb" json:"-"`
	Health        Health               `bun:"health" json:"health" enum:"healthy,warning,restricted,disconnected"`
	CreatedAt     time.Time            `bun:"created_at" json:"created_at"`
	UpdatedAt     time.Time            `bun:"updated_at" json:"updated_at"`

	// The health detail, shown by the health view.
	HealthReasons   []HealthReason `bun:"health_reasons,type:jsonb" json:"-"`
	LastError       *string        `bun:"last_error" json:"-"`
	HealthCheckedAt *time.Time     `bun:"health_checked_at" json:"-"`
}

// Location returns the sender's timezone. A stored timezone always loads;
// UTC stands in should it ever not.
func (s *Sender) Location() *time.Location {
	if loc, ok := locations.Load(s.Timezone); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(s.Timezone)
	if err != nil {
		return time.UTC
	}
	locations.Store(s.Timezone, loc)
	return loc
}

// locations caches loaded timezones: loading one reads the zone database.
var locations sync.Map

// Caps are configured daily caps per action plus the 7-day invitation cap.
type Caps map[string]int

// Daily returns the configured cap of a, or its default.
func (c Caps) Daily(a Action) int {
	if v, ok := c[string(a)]; ok {
		return v
	}
	return Defaults[a]
}

// Week returns the configured 7-day invitation cap, or its default.
func (c Caps) Week() int {
	if v, ok := c[InviteWeek]; ok {
		return v
	}
	return DefaultInviteWeek
}

// Warmup ramps a new sender's caps: on local day n after Start (n = 0, 1,
// …) every cap is at most From + n·Step.
type Warmup struct {
	Start string `json:"start" yaml:"start" format:"date" doc:"The first local day of the ramp, YYYY-MM-DD."`
	From  int    `json:"from" yaml:"from" minimum:"0" doc:"The cap on the first day."`
	Step  int    `json:"step" yaml:"step" minimum:"0" doc:"What the cap grows by each day."`
}

// Cap returns the ramp's cap on the local date day (YYYY-MM-DD). Days
// before the start count as the first day.
func (w *Warmup) Cap(day string) int {
	start, err1 := time.Parse(time.DateOnly, w.Start)
	d, err2 := time.Parse(time.DateOnly, day)
	if err1 != nil || err2 != nil {
		return w.From
	}
	n := int(d.Sub(start).Hours() / 24)
	if n < 0 {
		n = 0
	}
	// Past the point where the ramp exceeds every ceiling it no longer limits.
	if w.Step > 0 && n > 1000 {
		return 1 << 30
	}
	return w.From + n*w.Step
}

// HealthReason is one cause of a sender's health state.
type HealthReason struct {
	Code    string     `json:"code" enum:"auth_failed,restriction_notice,limit_notice,connection_failed,credentials_missing,account_disconnected,account_not_found,provider_rate_limited,low_acceptance_rate,high_bounce_rate,too_many_pending,domain_check_failed"`
	Message string     `json:"message"`
	Remedy  string     `json:"remedy,omitempty" doc:"What to do, for a guard's stop."`
	Until   *time.Time `json:"until,omitempty" doc:"When the reason lapses by itself (a limit notice lasts until the sender's local midnight)."`
}
