package console

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
)

// guardForm is a sender's guards in the form (docs/GUARDS.md), each as
// typed; an empty field takes the guard's default, as a setup file that
// leaves it out.
type guardForm struct {
	SpacingMin, SpacingMax     string
	HourlyCap                  string
	HolidayCountry, Holidays   string
	MinAcceptance, MaxBounce   string
	WithdrawAfter, WithdrawDay string
	NotesPerMonth              string
	// The defaults, shown beside the fields.
	DefaultSpacing senders.Spacing
}

// guardFields are the form's fields by name, and where each is typed.
func (g *guardForm) fields() map[string]*string {
	return map[string]*string{"guard.spacing_min": &g.SpacingMin, "guard.spacing_max": &g.SpacingMax, "guard.hourly_cap": &g.HourlyCap,
		"guard.holiday_country": &g.HolidayCountry, "guard.holidays": &g.Holidays, "guard.min_acceptance_rate": &g.MinAcceptance,
		"guard.max_bounce_rate": &g.MaxBounce, "guard.withdraw_after_days": &g.WithdrawAfter, "guard.withdraw_per_day": &g.WithdrawDay,
		"guard.notes_per_month": &g.NotesPerMonth}
}

// guardsOf is the form of a stored sender's guards.
func guardsOf(ch senders.Channel, gs senders.GuardSettings) guardForm {
	g := guardForm{DefaultSpacing: senders.DefaultSpacing(ch)}
	num := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	rate := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	if sp := gs.Spacing; sp != nil {
		g.SpacingMin, g.SpacingMax = sp.Min, sp.Max
	}
	if h := gs.Holidays; h != nil {
		g.HolidayCountry, g.Holidays = h.Country, strings.Join(h.Dates, ", ")
	}
	g.HourlyCap, g.WithdrawAfter, g.WithdrawDay, g.NotesPerMonth = num(gs.HourlyCap), num(gs.WithdrawAfterDays), num(gs.WithdrawPerDay), num(gs.NotesPerMonth)
	g.MinAcceptance, g.MaxBounce = rate(gs.MinAcceptanceRate), rate(gs.MaxBounceRate)
	return g
}

// readGuards reads the guards' fields of a posted form.
func readGuards(ch senders.Channel, v url.Values) guardForm {
	g := guardForm{DefaultSpacing: senders.DefaultSpacing(ch)}
	for name, dst := range g.fields() {
		*dst = strings.TrimSpace(v.Get(name))
	}
	return g
}

// settings are the guards as a setup file's sender gives them, or an
// error naming the field that is not a number. Their ranges are the
// senders area's to check (senders.Apply), as for a setup file.
func (g guardForm) settings(sender string) (senders.GuardSettings, error) {
	var gs senders.GuardSettings
	bad := func(field, v string) error {
		return apikit.Invalid(fmt.Sprintf("Sender %q: %s %q is not a number.", sender, field, v), "Type a number, or leave it empty for the default.")
	}
	whole := func(field, v string) (*int, error) {
		if v == "" {
			return nil, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, bad(field, v)
		}
		return &n, nil
	}
	share := func(field, v string) (*float64, error) {
		if v == "" {
			return nil, nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, bad(field, v)
		}
		return &f, nil
	}
	var err error
	if g.SpacingMin != "" || g.SpacingMax != "" {
		sp := g.DefaultSpacing
		if g.SpacingMin != "" {
			sp.Min = g.SpacingMin
		}
		if g.SpacingMax != "" {
			sp.Max = g.SpacingMax
		}
		gs.Spacing = &sp
	}
	if g.HolidayCountry != "" || g.Holidays != "" {
		h := &senders.Holidays{Country: strings.ToUpper(g.HolidayCountry)}
		for d := range strings.FieldsFuncSeq(g.Holidays, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' }) {
			h.Dates = append(h.Dates, d)
		}
		gs.Holidays = h
	}
	for _, f := range []struct {
		name, v string
		dst     **int
	}{{"hourly cap", g.HourlyCap, &gs.HourlyCap}, {"withdraw after days", g.WithdrawAfter, &gs.WithdrawAfterDays},
		{"withdrawals a day", g.WithdrawDay, &gs.WithdrawPerDay}, {"notes a month", g.NotesPerMonth, &gs.NotesPerMonth}} {
		if *f.dst, err = whole(f.name, f.v); err != nil {
			return gs, err
		}
	}
	if gs.MinAcceptanceRate, err = share("minimum acceptance rate", g.MinAcceptance); err != nil {
		return gs, err
	}
	if gs.MaxBounceRate, err = share("maximum bounce rate", g.MaxBounce); err != nil {
		return gs, err
	}
	return gs, nil
}
