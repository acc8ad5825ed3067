package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

// BenchmarkPreview previews 1,000 leads; bench/engineload measures 10,000
// at scale.
func BenchmarkPreview(b *testing.B) {
	for _, eng := range dbtest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			e := newEngine(b, dbtest.Open(b, eng), "")
			ids := make([]string, 1000)
			for i := range ids {
				ids[i] = e.lead(fmt.Sprintf("Lead %d", i), nil)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.svc.Preview(context.Background(), e.p, enrollments.EnrollInput{SequenceID: e.ids["Spread"], LeadIDs: ids}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRunnerStep measures the runner per executed action: b.N
// enrollments of a one-view sequence are due; ticks run them, a simulated
// day at a time (anna and ben view 60 leads a day between them).
func BenchmarkRunnerStep(b *testing.B) {
	for _, eng := range dbtest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			benchRunner(b, dbtest.Open(b, eng))
		})
	}
}

func benchRunner(b *testing.B, d *db.DB) {
	e := newEngine(b, d, "", "Spread")
	e.activate("Spread")
	ids := make([]string, 0, b.N)
	for i := range b.N {
		ids = append(ids, e.lead(fmt.Sprintf("Lead %d", i), nil))
	}
	for start := 0; start < len(ids); start += enrollments.MaxLeadIDs {
		e.enrol("Spread", ids[start:min(start+enrollments.MaxLeadIDs, len(ids))]...)
	}
	b.ResetTimer()
	e.runUntil(monday.Add(time.Duration((b.N/60+1)*7/5+3) * 24 * time.Hour)) // working days, weekends between
	b.StopTimer()
	if got := len(e.net.Performed()); got != b.N {
		b.Fatalf("%d actions for %d enrollments", got, b.N)
	}
}
