package senders

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Schedule holds a sender's working windows per weekday, in the sender's
// timezone: keys mon..sun, each a sorted list of "HH:MM-HH:MM" windows that
// do not overlap. A day that is not a key has no window.
type Schedule map[string][]string

var dayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// DefaultSchedule is a sender's schedule when its setup gives none:
// weekdays from 09:00 to 17:00.
func DefaultSchedule() Schedule {
	s := Schedule{}
	for _, d := range []string{"mon", "tue", "wed", "thu", "fri"} {
		s[d] = []string{"09:00-17:00"}
	}
	return s
}

// ParseSchedule reads a schedule whose keys are days ("sat"), ranges of days
// ("mon-fri") or lists of both ("mon,wed,fri-sun"), and whose values are
// windows "HH:MM-HH:MM" (24:00 ends a day). It returns the schedule by
// single day, or an error that names the wrong part.
func ParseSchedule(in map[string][]string) (Schedule, error) {
	out := Schedule{}
	for _, spec := range slices.Sorted(func(yield func(string) bool) {
		for k := range in {
			if !yield(k) {
				return
			}
		}
	}) {
		days, err := parseDays(spec)
		if err != nil {
			return nil, err
		}
		for _, w := range in[spec] {
			if _, _, err := parseWindow(w); err != nil {
				return nil, err
			}
		}
		for _, d := range days {
			if _, dup := out[d]; dup {
				return nil, fmt.Errorf("schedule: %s is given twice (in %q and an earlier key)", d, spec)
			}
			out[d] = slices.Clone(in[spec])
		}
	}
	total := 0
	for d, ws := range out {
		slices.SortFunc(ws, func(a, b string) int {
			sa, _, _ := parseWindow(a)
			sb, _, _ := parseWindow(b)
			return sa - sb
		})
		for i := 1; i < len(ws); i++ {
			_, prevEnd, _ := parseWindow(ws[i-1])
			start, _, _ := parseWindow(ws[i])
			if start < prevEnd {
				return nil, fmt.Errorf("schedule: on %s the windows %s and %s overlap", d, ws[i-1], ws[i])
			}
		}
		for i := range ws {
			s, e, _ := parseWindow(ws[i])
			ws[i] = fmtMinute(s) + "-" + fmtMinute(e)
		}
		if len(ws) == 0 {
			delete(out, d)
		}
		total += len(ws)
	}
	if total == 0 {
		return nil, fmt.Errorf("schedule: no working window on any day, so the sender could never send")
	}
	return out, nil
}

func parseDays(spec string) ([]string, error) {
	var days []string
	for part := range strings.SplitSeq(strings.ToLower(strings.ReplaceAll(spec, " ", "")), ",") {
		from, to, isRange := strings.Cut(part, "-")
		a, b := slices.Index(dayNames, from), slices.Index(dayNames, to)
		if !isRange {
			b = a
		}
		if a < 0 || b < 0 {
			return nil, fmt.Errorf("schedule: %q is not a day or range of days; use mon, tue, wed, thu, fri, sat, sun, ranges such as mon-fri, or lists such as mon,wed", spec)
		}
		// A range runs forward through the week and may wrap (fri-mon).
		for i := a; ; i = (i + 1) % 7 {
			if !slices.Contains(days, dayNames[i]) {
				days = append(days, dayNames[i])
			}
			if i == b {
				break
			}
		}
	}
	return days, nil
}

// parseWindow reads "HH:MM-HH:MM" into minutes of the day.
func parseWindow(w string) (start, end int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(w), "-")
	if ok {
		start, err = parseMinute(a)
		if err == nil {
			end, err = parseMinute(b)
		}
	}
	if !ok || err != nil {
		return 0, 0, fmt.Errorf("schedule: window %q is not HH:MM-HH:MM", w)
	}
	if end <= start {
		return 0, 0, fmt.Errorf("schedule: window %q ends before it starts; a window cannot cross midnight, so split it in two days", w)
	}
	return start, end, nil
}

func parseMinute(s string) (int, error) {
	hh, mm, ok := strings.Cut(strings.TrimSpace(s), ":")
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	if !ok || err1 != nil || err2 != nil || len(mm) != 2 || h < 0 || m < 0 || m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, fmt.Errorf("bad time %q", s)
	}
	return h*60 + m, nil
}

func fmtMinute(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// windowsOn returns the windows of the local date (y, m, d) as instants.
// Daylight-saving changes are taken into account: a window that starts in
// an hour the clocks skip starts when the clocks resume.
func (s Schedule) windowsOn(y int, mo time.Month, d int, loc *time.Location) [][2]time.Time {
	wd := time.Date(y, mo, d, 12, 0, 0, 0, loc).Weekday()
	var out [][2]time.Time
	for _, w := range s[dayNames[wd]] {
		a, b, err := parseWindow(w)
		if err != nil {
			continue
		}
		start := time.Date(y, mo, d, a/60, a%60, 0, 0, loc)
		end := time.Date(y, mo, d, b/60, b%60, 0, 0, loc)
		if end.After(start) {
			out = append(out, [2]time.Time{start.UTC(), end.UTC()})
		}
	}
	return out
}

// Window returns the window t falls in, or else the next window after t:
// its start and end. ok is false only for a schedule with no window.
func (s Schedule) Window(t time.Time, loc *time.Location) (start, end time.Time, ok bool) {
	lt := t.In(loc)
	for i := 0; i <= 8; i++ {
		day := time.Date(lt.Year(), lt.Month(), lt.Day()+i, 12, 0, 0, 0, loc)
		for _, w := range s.windowsOn(day.Year(), day.Month(), day.Day(), loc) {
			if !w[1].After(t) {
				continue
			}
			return w[0], w[1], true
		}
	}
	return time.Time{}, time.Time{}, false
}

// Open reports whether t falls inside a working window.
func (s Schedule) Open(t time.Time, loc *time.Location) bool {
	start, _, ok := s.Window(t, loc)
	return ok && !start.After(t)
}

// NextOpen returns t when t is inside a window, else the start of the next
// window.
func (s Schedule) NextOpen(t time.Time, loc *time.Location) (time.Time, bool) {
	start, _, ok := s.Window(t, loc)
	if !ok {
		return time.Time{}, false
	}
	if start.Before(t) {
		return t, true
	}
	return start, true
}

// WorkingDay reports whether the local date (y, m, d) has a window.
func (s Schedule) WorkingDay(y int, m time.Month, d int, loc *time.Location) bool {
	return len(s.windowsOn(y, m, d, loc)) > 0
}

// LocalDate returns t's date in loc as YYYY-MM-DD.
func LocalDate(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.DateOnly) }

// NextMidnight returns the first instant of the local day after t's: when
// daily budgets reset.
func NextMidnight(t time.Time, loc *time.Location) time.Time {
	lt := t.In(loc)
	return time.Date(lt.Year(), lt.Month(), lt.Day()+1, 0, 0, 0, 0, loc).UTC()
}
