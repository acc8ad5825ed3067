package senders

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// GuardSettings are what a sender's setup sets for its guards (guards.go).
// A field left out (nil) takes its default, so that a sender stored before
// guards existed, or whose setup names none, is guarded by the defaults; 0
// turns a guard off where the field says so.
type GuardSettings struct {
	Spacing           *Spacing  `json:"spacing,omitempty" yaml:"spacing" doc:"The random gap between two actions of the sender: min and max as durations (45s, 3m). Default LinkedIn 45s-3m, email 2m-6m; min 0s turns it off."`
	HourlyCap         *int      `json:"hourly_cap,omitempty" yaml:"hourly_cap" minimum:"0" doc:"Emails an hour at most (email senders); default 20, 0 turns it off."`
	Holidays          *Holidays `json:"holidays,omitempty" yaml:"holidays" doc:"Days off: a country's public holidays and dates; with the workspace's, nothing runs on them."`
	MinAcceptanceRate *float64  `json:"min_acceptance_rate,omitempty" yaml:"min_acceptance_rate" minimum:"0" maximum:"1" doc:"LinkedIn: below this share of accepted invitations (of the latest 50 at least 7 days old) invitations pause; default 0.15, 0 turns it off."`
	MaxBounceRate     *float64  `json:"max_bounce_rate,omitempty" yaml:"max_bounce_rate" minimum:"0" maximum:"1" doc:"Email: above this share of hard bounces (of the latest 100 sends, at least 30) sending stops; default 0.03, 0 turns it off."`
	WithdrawAfterDays *int      `json:"withdraw_after_days,omitempty" yaml:"withdraw_after_days" minimum:"0" doc:"LinkedIn: invitations pending this many days are withdrawn; default 21, 0 turns it off."`
	WithdrawPerDay    *int      `json:"withdraw_per_day,omitempty" yaml:"withdraw_per_day" minimum:"0" doc:"LinkedIn: invitations withdrawn a day at most; default 50."`
	NotesPerMonth     *int      `json:"notes_per_month,omitempty" yaml:"notes_per_month" minimum:"0" doc:"LinkedIn without premium: invitations a calendar month that may carry a note; default 5."`
}

// Spacing is the range of the random gap between two actions of a sender.
type Spacing struct {
	Min string `json:"min" yaml:"min" doc:"The shortest gap, a duration such as 45s or 2m."`
	Max string `json:"max" yaml:"max" doc:"The longest gap, a duration such as 3m."`
}

// Holidays are a sender's days off: the public holidays of a country and
// dates of its own, in the sender's timezone.
type Holidays struct {
	Country string   `json:"country,omitempty" yaml:"country" doc:"ISO 3166 code of the country whose public holidays are days off (DE, US, GB, …)."`
	Dates   []string `json:"dates,omitempty" yaml:"dates" doc:"More days off, YYYY-MM-DD."`
}

// Guard defaults, and where they come from (docs/GUARDS.md).
const (
	DefaultHourlyCap         = 20
	DefaultMinAcceptanceRate = 0.15
	DefaultMaxBounceRate     = 0.03
	DefaultWithdrawAfterDays = 21
	DefaultWithdrawPerDay    = 50
)

// DefaultSpacing is a channel's spacing when the setup gives none.
func DefaultSpacing(c Channel) Spacing {
	if c == Email {
		return Spacing{Min: "2m", Max: "6m"}
	}
	return Spacing{Min: "45s", Max: "3m"}
}

// Bounds returns the spacing's range; zero when it is off or unreadable
// (a stored spacing was checked when it was applied).
func (sp Spacing) Bounds() (lo, hi time.Duration) {
	lo, err1 := time.ParseDuration(sp.Min)
	hi, err2 := time.ParseDuration(sp.Max)
	if err1 != nil || err2 != nil || lo <= 0 {
		return 0, 0
	}
	return lo, max(hi, lo)
}

// SpacingOf returns s's spacing range (zero: off).
func (s *Sender) SpacingOf() (lo, hi time.Duration) {
	sp := DefaultSpacing(s.Channel)
	if s.Guards.Spacing != nil {
		sp = *s.Guards.Spacing
	}
	return sp.Bounds()
}

// HourlyCapOf returns s's emails an hour at most, 0 when unlimited.
func (s *Sender) HourlyCapOf() int {
	if s.Channel != Email {
		return 0
	}
	return valueOr(s.Guards.HourlyCap, DefaultHourlyCap)
}

// MinAcceptanceRateOf returns s's acceptance-rate bar, 0 when off.
func (s *Sender) MinAcceptanceRateOf() float64 {
	if s.Channel != LinkedIn {
		return 0
	}
	return valueOr(s.Guards.MinAcceptanceRate, DefaultMinAcceptanceRate)
}

// MaxBounceRateOf returns s's bounce-rate limit, 0 when off.
func (s *Sender) MaxBounceRateOf() float64 {
	if s.Channel != Email {
		return 0
	}
	return valueOr(s.Guards.MaxBounceRate, DefaultMaxBounceRate)
}

// WithdrawAfter returns how long s's invitations may stay pending before
// they are withdrawn, 0 when never.
func (s *Sender) WithdrawAfter() time.Duration {
	if s.Channel != LinkedIn {
		return 0
	}
	return time.Duration(valueOr(s.Guards.WithdrawAfterDays, DefaultWithdrawAfterDays)) * 24 * time.Hour
}

// WithdrawPerDayOf returns how many of s's invitations may be withdrawn a
// local day.
func (s *Sender) WithdrawPerDayOf() int {
	return valueOr(s.Guards.WithdrawPerDay, DefaultWithdrawPerDay)
}

// NotesPerMonthOf returns how many invitations a month may carry a note
// for s; -1 for no limit (a premium account).
func (s *Sender) NotesPerMonthOf() int {
	if s.Premium {
		return -1
	}
	return valueOr(s.Guards.NotesPerMonth, FreeNotesPerMonth)
}

func valueOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// buildGuards checks what a setup gives for a sender's guards, with the
// workspace's days off, and returns them with every default filled in, so
// that the sender view shows what applies.
func buildGuards(in GuardSettings, c Channel, workspace *Holidays) (GuardSettings, error) {
	out := GuardSettings{}
	sp := DefaultSpacing(c)
	if in.Spacing != nil {
		sp = *in.Spacing
	}
	{
		lo, err1 := time.ParseDuration(strings.TrimSpace(sp.Min))
		hi, err2 := time.ParseDuration(strings.TrimSpace(sp.Max))
		if err1 != nil || err2 != nil {
			return out, fmt.Errorf("spacing: min %q and max %q must be durations such as 45s or 3m", sp.Min, sp.Max)
		}
		if lo < 0 || hi < lo || hi > 24*time.Hour {
			return out, fmt.Errorf("spacing: min must be 0s or more and max at least min and at most 24h")
		}
		if lo > 0 && lo < time.Second {
			return out, fmt.Errorf("spacing: min below one second is not a gap; use 0s to turn spacing off")
		}
		sp = Spacing{Min: lo.String(), Max: hi.String()}
	}
	out.Spacing = &sp
	only := func(name string, set bool, want Channel) error {
		if set && c != want {
			return fmt.Errorf("%s is a %s setting", name, want)
		}
		return nil
	}
	if err := errorsJoin(only("hourly_cap", in.HourlyCap != nil, Email), only("max_bounce_rate", in.MaxBounceRate != nil, Email),
		only("min_acceptance_rate", in.MinAcceptanceRate != nil, LinkedIn), only("withdraw_after_days", in.WithdrawAfterDays != nil, LinkedIn),
		only("withdraw_per_day", in.WithdrawPerDay != nil, LinkedIn), only("notes_per_month", in.NotesPerMonth != nil, LinkedIn)); err != nil {
		return out, err
	}
	nonNeg := func(name string, p *int, def, ceiling int) (*int, error) {
		v := valueOr(p, def)
		if v < 0 || v > ceiling {
			return nil, fmt.Errorf("%s %d must be between 0 and %d", name, v, ceiling)
		}
		return &v, nil
	}
	rate := func(name string, p *float64, def float64) (*float64, error) {
		v := valueOr(p, def)
		if math.IsNaN(v) || v < 0 || v > 1 {
			return nil, fmt.Errorf("%s must be a share between 0 and 1 (0.15 is 15%%)", name)
		}
		return &v, nil
	}
	var err error
	switch c {
	case Email:
		if out.HourlyCap, err = nonNeg("hourly_cap", in.HourlyCap, DefaultHourlyCap, Ceilings[SendEmail]); err != nil {
			return out, err
		}
		if out.MaxBounceRate, err = rate("max_bounce_rate", in.MaxBounceRate, DefaultMaxBounceRate); err != nil {
			return out, err
		}
	case LinkedIn:
		if out.MinAcceptanceRate, err = rate("min_acceptance_rate", in.MinAcceptanceRate, DefaultMinAcceptanceRate); err != nil {
			return out, err
		}
		if out.WithdrawAfterDays, err = nonNeg("withdraw_after_days", in.WithdrawAfterDays, DefaultWithdrawAfterDays, 365); err != nil {
			return out, err
		}
		if out.WithdrawPerDay, err = nonNeg("withdraw_per_day", in.WithdrawPerDay, DefaultWithdrawPerDay, 500); err != nil {
			return out, err
		}
		if out.NotesPerMonth, err = nonNeg("notes_per_month", in.NotesPerMonth, FreeNotesPerMonth, 1000); err != nil {
			return out, err
		}
	}
	h := Holidays{}
	for _, part := range []*Holidays{workspace, in.Holidays} {
		if part == nil {
			continue
		}
		if part.Country != "" {
			cc := strings.ToUpper(strings.TrimSpace(part.Country))
			if _, ok := countryHolidays[cc]; !ok {
				return out, fmt.Errorf("holidays: country %q has no public holiday calendar here; the countries are %s", part.Country, strings.Join(Countries(), ", "))
			}
			if h.Country != "" && h.Country != cc {
				return out, fmt.Errorf("holidays: the workspace's country is %s and the sender's %s; a sender follows one country's public holidays, so name the other's days under dates", h.Country, cc)
			}
			h.Country = cc
		}
		for _, d := range part.Dates {
			if _, err := time.Parse(time.DateOnly, strings.TrimSpace(d)); err != nil {
				return out, fmt.Errorf("holidays: %q is not a date (YYYY-MM-DD)", d)
			}
			if !slices.Contains(h.Dates, strings.TrimSpace(d)) {
				h.Dates = append(h.Dates, strings.TrimSpace(d))
			}
		}
	}
	slices.Sort(h.Dates)
	if h.Country != "" || len(h.Dates) > 0 {
		out.Holidays = &h
	}
	return out, nil
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
