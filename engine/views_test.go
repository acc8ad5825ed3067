package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// why returns why-not-sending for the sequence named seq, with its reasons
// by code. Every reason has a message and a remedy, and an until only
// ahead of now.
func (e *rig) why(seq string) (*enrollments.WhyNotSending, map[string]enrollments.StallReason) {
	e.t.Helper()
	w, err := e.svc.WhyNotSending(context.Background(), e.p, e.ids[seq])
	if err != nil {
		e.t.Fatal(err)
	}
	m := map[string]enrollments.StallReason{}
	for _, r := range w.Reasons {
		m[r.Code] = r
		if r.Message == "" || r.Remedy == "" {
			e.t.Fatalf("%s: %s has no message or remedy", seq, r.Code)
		}
		if r.Until != nil && !r.Until.After(e.clock.Now()) {
			e.t.Fatalf("%s: %s until %s, which is not ahead of %s", seq, r.Code, r.Until, e.clock.Now())
		}
	}
	return w, m
}

// TestWhyNotSendingNeverWaitsForThePast: a wait's time is reported only
// while it is ahead. Enrollments of a draft sequence wait for its
// activation, not for the working hours their commit once found; and on an
// active sequence, a wait whose time has passed is due, not waiting.
func TestWhyNotSendingNeverWaitsForThePast(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "", "Berlin CTOs", "Plain")
		why := e.why
		var ids []string
		for i := range 3 {
			ids = append(ids, e.lead(fmt.Sprintf("Draft %d", i), nil))
		}
		e.enrol("Plain", ids...) // a draft, before working hours
		w, m := why("Plain")
		is.Equal(w.Sending, false)
		is.Equal(len(w.Reasons), 1)
		r := m["sequence_not_active"]
		is.Equal(*r.Count, 3)
		is.True(strings.Contains(r.Message, "draft") && strings.Contains(r.Message, "3 enrollments"))
		e.clock.Advance(14 * 24 * time.Hour) // two weeks on, still a draft
		w, m = why("Plain")
		is.Equal(len(w.Reasons), 1)
		is.Equal(*m["sequence_not_active"].Count, 3)

		// Active: the commit before working hours waits for them; once
		// their time has come the enrollments are due, even before the
		// runner has looked again.
		e.clock.Set(monday.Add(14 * 24 * time.Hour)) // a Monday, 08:00 in Berlin
		e.activate("Berlin CTOs")
		var more []string
		for i := range 2 {
			more = append(more, e.lead(fmt.Sprintf("Active %d", i), nil))
		}
		e.enrol("Berlin CTOs", more...)
		w, m = why("Berlin CTOs")
		is.Equal(*m["outside_schedule"].Count, 2)
		is.True(m["outside_schedule"].Until.Equal(e.clock.Now().Add(time.Hour)))
		e.clock.Advance(time.Hour + time.Second)
		w, m = why("Berlin CTOs")
		_, waits := m["outside_schedule"]
		is.True(!waits)
		is.True(w.Sending)
		is.Equal(len(w.Reasons), 0)
	})
}
