package sequences_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/sequences"
)

func variantStep() sequences.Step {
	return sequences.Step{ID: "mail", Type: "email", Variants: []sequences.Variant{
		{ID: "a", Subject: "{{company|you}} and us", Body: "Hello {{first_name|there}}"},
		{ID: "b", Subject: "Quick idea", Body: "Hi {{first_name|there}}", Weight: 3},
	}, PickWinner: &sequences.PickWinner{Metric: "reply_rate", MinSends: 100, Confidence: 0.95}}
}

func TestValidateVariants(t *testing.T) {
	with := func(f func(s *sequences.Step)) *sequences.Sequence {
		steps := berlinCTOs()
		v := variantStep()
		f(&v)
		steps[5] = v
		return &sequences.Sequence{Steps: steps}
	}
	for name, c := range map[string]struct {
		f    func(s *sequences.Step)
		want string
	}{
		"valid":       {func(s *sequences.Step) {}, ""},
		"one variant": {func(s *sequences.Step) { s.Variants = s.Variants[:1] }, "bad_value@mail"},
		"six variants": {func(s *sequences.Step) {
			for _, id := range []string{"c", "d", "e", "f"} {
				s.Variants = append(s.Variants, sequences.Variant{ID: id, Subject: "s", Body: "b"})
			}
		}, "bad_value@mail"},
		"text beside":       {func(s *sequences.Step) { s.Body = "x" }, "unknown_field@mail"},
		"missing id":        {func(s *sequences.Step) { s.Variants[0].ID = "" }, "missing_id@mail"},
		"bad id":            {func(s *sequences.Step) { s.Variants[0].ID = "a b" }, "bad_value@mail"},
		"duplicate":         {func(s *sequences.Step) { s.Variants[1].ID = "a" }, "duplicate_id@mail"},
		"weight":            {func(s *sequences.Step) { s.Variants[1].Weight = -1 }, "bad_value@mail"},
		"note on email":     {func(s *sequences.Step) { s.Variants[1].Note = "x" }, "unknown_field@mail"},
		"missing body":      {func(s *sequences.Step) { s.Variants[1].Body = "" }, "missing_field@mail"},
		"template":          {func(s *sequences.Step) { s.Variants[1].Body = "{{#if firm}}x{{/if}}" }, "template_error@mail"},
		"metric":            {func(s *sequences.Step) { s.PickWinner.Metric = "opens" }, "bad_value@mail"},
		"acceptance email":  {func(s *sequences.Step) { s.PickWinner.Metric = "acceptance_rate" }, "bad_value@mail"},
		"min sends":         {func(s *sequences.Step) { s.PickWinner.MinSends = 0 }, "bad_value@mail"},
		"confidence":        {func(s *sequences.Step) { s.PickWinner.Confidence = 1 }, "bad_value@mail"},
		"winner no variant": {func(s *sequences.Step) { s.Variants = nil; s.Subject, s.Body = "x", "y" }, "bad_value@mail"},
	} {
		got := strings.Join(codes(sequences.Validate(with(c.f), both)), " ")
		if got != c.want {
			t.Errorf("%s: got %q, want %q", name, got, c.want)
		}
	}
	// Variants are for steps that send a text.
	steps := berlinCTOs()
	steps[0].Variants = variantStep().Variants
	is.New(t).Equal(codes(sequences.Validate(&sequences.Sequence{Steps: steps}, both)), []string{"unknown_field@visit"})
}

// TestChoose: the choice is a function of the enrollment and the step,
// spread by weight; an active winner takes every choice, an undone one
// none.
func TestChoose(t *testing.T) {
	is := is.New(t)
	s := variantStep()
	n := map[string]int{}
	for i := range 4000 {
		id := "enrollment-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		v := s.Choose(id, nil)
		is.Equal(s.Choose(id, nil), v) // the same every time
		n[v]++
	}
	is.True(math.Abs(float64(n["b"])/4000-0.75) < 0.03) // weight 3 of 4
	w := &sequences.Winner{VariantID: "a", By: sequences.ByManager}
	is.Equal(s.Choose("anything", w), "a")
	undone := time.Date(2026, 11, 2, 7, 0, 0, 0, time.UTC)
	w.UndoneAt = &undone
	is.Equal(s.Choose("enrollment-b", w), s.Choose("enrollment-b", nil))
	is.Equal(s.WithVariant("b").Subject, "Quick idea")
	is.Equal(len(s.WithVariant("b").Variants), 0)
}

// pBetter is the closed form of P(rate B > rate A) for two Beta posteriors
// with whole parameters (Evan Miller's formula).
func pBetter(sa, na, sb, nb int) float64 {
	lbeta := func(a, b float64) float64 {
		x, _ := math.Lgamma(a)
		y, _ := math.Lgamma(b)
		z, _ := math.Lgamma(a + b)
		return x + y - z
	}
	aA, bA := float64(sa+1), float64(na-sa+1)
	aB, bB := float64(sb+1), float64(nb-sb+1)
	total := 0.0
	for i := 0; i < int(aB); i++ {
		fi := float64(i)
		total += math.Exp(lbeta(aA+fi, bB+bA) - math.Log(bB+fi) - lbeta(1+fi, bB) - lbeta(aA, bA))
	}
	return total
}

func TestProbBest(t *testing.T) {
	is := is.New(t)
	for _, c := range [][4]int{{10, 100, 15, 100}, {3, 20, 9, 25}, {0, 5, 1, 5}, {120, 1000, 150, 1000}, {40, 400, 40, 400}, {500, 10000, 560, 10000}} {
		p := sequences.ProbBest([]int{c[0], c[2]}, []int{c[1], c[3]})
		want := pBetter(c[0], c[1], c[2], c[3])
		if math.Abs(p[1]-want) > 0.001 || math.Abs(p[0]+p[1]-1) > 1e-9 {
			t.Errorf("%v: got %v, want %v", c, p, want)
		}
	}
	// Three equal variants are equally likely best.
	for _, p := range sequences.ProbBest([]int{5, 5, 5}, []int{50, 50, 50}) {
		is.True(math.Abs(p-1.0/3) < 0.001)
	}
}

func TestJudge(t *testing.T) {
	is := is.New(t)
	s := variantStep()
	// Not every variant has min_sends yet: no verdict.
	ev := sequences.Judge(s, []sequences.VariantCounts{{VariantID: "a", Sent: 100, Replied: 5}, {VariantID: "b", Sent: 99, Replied: 30}})
	is.True(!ev.Ready)
	is.Equal(ev.Winner, "")
	// Clear evidence: b wins.
	ev = sequences.Judge(s, []sequences.VariantCounts{{VariantID: "a", Sent: 100, Replied: 5}, {VariantID: "b", Sent: 120, Replied: 30}})
	is.True(ev.Ready)
	is.Equal(ev.Winner, "b")
	is.True(ev.Probability["b"] > 0.99)
	// Close numbers: no winner at 0.95.
	ev = sequences.Judge(s, []sequences.VariantCounts{{VariantID: "a", Sent: 100, Replied: 10}, {VariantID: "b", Sent: 100, Replied: 12}})
	is.True(ev.Ready)
	is.Equal(ev.Winner, "")
	// The metric picks the count.
	s.PickWinner.Metric = "meeting_rate"
	ev = sequences.Judge(s, []sequences.VariantCounts{{VariantID: "a", Sent: 100, Replied: 50, Meetings: 20}, {VariantID: "b", Sent: 100, Replied: 5, Meetings: 2}})
	is.Equal(ev.Winner, "a")
}
