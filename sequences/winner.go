package sequences

import (
	"math"
)

// ProbBest returns, for each variant with successes[i] out of trials[i],
// the posterior probability that its rate is the highest: each rate's
// posterior is Beta(successes+1, failures+1) (a uniform prior), and
// P(i is best) = ∫ f_i(x) Π_{j≠i} F_j(x) dx, integrated numerically on a
// fine grid over where the posteriors have their mass. It is exact to
// well within 0.001, needs no random draws, and so gives the same answer
// on every replica. The probabilities add up to 1.
func ProbBest(successes, trials []int) []float64 {
	k := len(trials)
	out := make([]float64, k)
	if k == 0 {
		return out
	}
	type beta struct{ a, b, mean, sd float64 }
	bs := make([]beta, k)
	lo, hi := 1.0, 0.0
	for i := range k {
		a := float64(successes[i]) + 1
		b := float64(trials[i]-successes[i]) + 1
		mean := a / (a + b)
		sd := math.Sqrt(a * b / ((a + b) * (a + b) * (a + b + 1)))
		bs[i] = beta{a, b, mean, sd}
		lo, hi = math.Min(lo, mean-14*sd), math.Max(hi, mean+14*sd)
	}
	lo, hi = math.Max(lo, 0), math.Min(hi, 1)
	const n = 8000
	h := (hi - lo) / n
	pdf := make([][]float64, k)
	cdf := make([][]float64, k)
	for i, bt := range bs {
		lb := lgamma(bt.a+bt.b) - lgamma(bt.a) - lgamma(bt.b)
		pdf[i], cdf[i] = make([]float64, n), make([]float64, n)
		total, run := 0.0, 0.0
		for j := range n {
			x := lo + (float64(j)+0.5)*h
			pdf[i][j] = math.Exp(lb + (bt.a-1)*math.Log(x) + (bt.b-1)*math.Log1p(-x))
			total += pdf[i][j] * h
		}
		// The midpoint rule's CDF at each midpoint, normalised so that the
		// grid's mass is 1 (what lies outside it is far below 1e-9).
		for j := range n {
			m := pdf[i][j] * h
			cdf[i][j] = (run + m/2) / total
			run += m
			pdf[i][j] /= total
		}
	}
	sum := 0.0
	for i := range k {
		p := 0.0
		for j := range n {
			v := pdf[i][j]
			for o := range k {
				if o != i {
					v *= cdf[o][j]
				}
			}
			p += v * h
		}
		out[i] = p
		sum += p
	}
	for i := range out {
		if sum > 0 {
			out[i] /= sum
		} else {
			out[i] = 1 / float64(k)
		}
	}
	return out
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// Evidence is what a step's test shows: each variant's probability of
// being the best on the metric, and the winner when one reached the
// confidence.
type Evidence struct {
	// Ready is set once every variant has pick_winner's min_sends.
	Ready       bool
	Probability map[string]float64
	// Winner is the variant whose probability reached the confidence, ""
	// for none yet.
	Winner string
}

// Judge weighs the counts of a step's variants (one per variant of the
// step, in its order; a variant missing from counts has none) by the
// step's pick_winner.
func Judge(s Step, counts []VariantCounts) Evidence {
	ev := Evidence{Probability: map[string]float64{}}
	pw := s.PickWinner
	if pw == nil || len(s.Variants) < 2 {
		return ev
	}
	by := map[string]VariantCounts{}
	for _, c := range counts {
		by[c.VariantID] = c
	}
	succ, trials := make([]int, len(s.Variants)), make([]int, len(s.Variants))
	ev.Ready = true
	for i, v := range s.Variants {
		c := by[v.ID]
		succ[i], trials[i] = min(c.Successes(pw.Metric), c.Sent), c.Sent
		if c.Sent < pw.MinSends {
			ev.Ready = false
		}
	}
	if !ev.Ready {
		return ev
	}
	for i, p := range ProbBest(succ, trials) {
		id := s.Variants[i].ID
		ev.Probability[id] = p
		if p >= pw.Confidence {
			ev.Winner = id
		}
	}
	return ev
}
