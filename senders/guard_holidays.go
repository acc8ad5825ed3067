package senders

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rickar/cal/v2"
	"github.com/rickar/cal/v2/at"
	"github.com/rickar/cal/v2/be"
	"github.com/rickar/cal/v2/br"
	"github.com/rickar/cal/v2/ca"
	"github.com/rickar/cal/v2/ch"
	"github.com/rickar/cal/v2/cz"
	"github.com/rickar/cal/v2/de"
	"github.com/rickar/cal/v2/dk"
	"github.com/rickar/cal/v2/es"
	"github.com/rickar/cal/v2/fr"
	"github.com/rickar/cal/v2/gb"
	"github.com/rickar/cal/v2/ie"
	"github.com/rickar/cal/v2/it"
	"github.com/rickar/cal/v2/jp"
	"github.com/rickar/cal/v2/nl"
	"github.com/rickar/cal/v2/no"
	"github.com/rickar/cal/v2/nz"
	"github.com/rickar/cal/v2/pl"
	"github.com/rickar/cal/v2/ro"
	"github.com/rickar/cal/v2/se"
	"github.com/rickar/cal/v2/us"
	"github.com/rickar/cal/v2/za"
)

// holidayGuard keeps a sender from working on its days off: the public
// holidays of its country and the dates its setup and its workspace's
// name, in its timezone. Nothing of any channel runs on them; the wait
// ends at the first local midnight that is no day off.
type holidayGuard struct{ noStop }

func (holidayGuard) Code() string { return GuardHoliday }

func (holidayGuard) Check(_ context.Context, _ *Service, s *Sender, _ Action, now, _ time.Time) (*Blocked, func(context.Context) error, error) {
	loc := s.Location()
	if !s.Holiday(LocalDate(now, loc)) {
		return nil, nil, nil
	}
	return &Blocked{Code: GuardHoliday, Until: s.HolidayEnds(now)}, nil, nil
}

func (holidayGuard) DayCap(s *Sender, _ Action, day string) (int, bool) {
	if s.Holiday(day) {
		return 0, true
	}
	return 0, false
}

func (holidayGuard) Text() (string, string) {
	return "%d enrollments wait for the end of their sender's holiday.",
		"Nothing to do: they go on the day after; the sender's holidays (country and dates) are set in the setup file."
}

// Holiday reports whether the local date day (YYYY-MM-DD) is one of s's
// days off.
func (s *Sender) Holiday(day string) bool {
	h := s.Guards.Holidays
	if h == nil {
		return false
	}
	if slices.Contains(h.Dates, day) {
		return true
	}
	if h.Country == "" || len(day) < 4 {
		return false
	}
	var year int
	if _, err := fmt.Sscanf(day[:4], "%d", &year); err != nil {
		return false
	}
	return publicHolidays(h.Country, year)[day]
}

// HolidayEnds returns the first local midnight after t that begins a day
// that is not one of s's days off.
func (s *Sender) HolidayEnds(t time.Time) time.Time {
	loc := s.Location()
	end := NextMidnight(t, loc)
	for range 366 {
		if !s.Holiday(LocalDate(end, loc)) {
			break
		}
		end = NextMidnight(end, loc)
	}
	return end
}

// countryHolidays are the national public holidays leadline knows, from
// github.com/rickar/cal (each country's nationwide holidays; regional ones
// go under dates).
var countryHolidays = map[string][]*cal.Holiday{
	"AT": at.Holidays, "BE": be.Holidays, "BR": br.Holidays, "CA": ca.Holidays, "CH": ch.Holidays, "CZ": cz.Holidays,
	"DE": de.Holidays, "DK": dk.Holidays, "ES": es.Holidays, "FR": fr.Holidays, "GB": gb.Holidays, "IE": ie.Holidays,
	"IT": it.Holidays, "JP": jp.Holidays, "NL": nl.Holidays, "NO": no.Holidays, "NZ": nz.Holidays, "PL": pl.Holidays,
	"RO": ro.Holidays, "SE": se.Holidays, "US": us.Holidays, "ZA": za.Holidays,
}

// Countries lists the countries whose public holidays leadline knows.
func Countries() []string {
	out := make([]string, 0, len(countryHolidays))
	for c := range countryHolidays {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// holidayYears caches each country's holidays of a year, by date: the
// runner asks at every action.
var holidayYears sync.Map

func publicHolidays(country string, year int) map[string]bool {
	key := fmt.Sprintf("%s/%d", country, year)
	if v, ok := holidayYears.Load(key); ok {
		return v.(map[string]bool)
	}
	days := map[string]bool{}
	for _, h := range countryHolidays[country] {
		actual, observed := h.Calc(year)
		// A holiday's day and the day it is observed on (a weekday when it
		// falls on a weekend) are both off.
		for _, d := range []time.Time{actual, observed} {
			if !d.IsZero() {
				days[d.Format(time.DateOnly)] = true
			}
		}
	}
	holidayYears.Store(key, days)
	return days
}
