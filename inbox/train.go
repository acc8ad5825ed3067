package inbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// Example is one labelled reply, as the corpus files hold them (JSON
// lines).
type Example struct {
	Lang    string            `json:"lang,omitempty"`
	Intent  Intent            `json:"intent"`
	Channel string            `json:"channel,omitempty"`
	Auto    bool              `json:"auto,omitempty"`
	Subject string            `json:"subject,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body"`
}

// ReadExamples reads labelled replies, one JSON object a line; it refuses
// an intent outside the seven.
func ReadExamples(r io.Reader) ([]Example, error) {
	var out []Example
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var ex Example
		if err := json.Unmarshal([]byte(line), &ex); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if !ex.Intent.Valid() {
			return nil, fmt.Errorf("line %d: intent %q is not one of the seven", n, ex.Intent)
		}
		out = append(out, ex)
	}
	return out, sc.Err()
}

// TrainOptions steer Train.
type TrainOptions struct {
	// Epochs over the examples (0: 30).
	Epochs int
	// Rate is the first learning rate (0: 2); it decays each epoch.
	Rate float64
	// L2 is the weight decay applied to the buckets an example touches
	// (0: 1e-7).
	L2 float64
	// Seed orders the examples.
	Seed uint64
	// From starts from a model's weights instead of zeros (a team's
	// corrections on top of the built-in model).
	From *Model
}

// Train fits a model to the examples by stochastic gradient descent on
// the cross-entropy, deterministically for a seed. A few thousand replies
// take seconds.
func Train(exs []Example, o TrainOptions) *Model {
	if o.Epochs == 0 {
		o.Epochs = 30
	}
	if o.Rate == 0 {
		o.Rate = 2
	}
	if o.L2 == 0 {
		o.L2 = 1e-7
	}
	m := newModel()
	if o.From != nil {
		copy(m.w, o.From.w)
		m.bias = o.From.bias
	}
	type row struct {
		fs []feature
		y  int
	}
	rows := make([]row, len(exs))
	for i, ex := range exs {
		rows[i] = row{features(ex.Subject, readable(ex.Body)), intentIndex(ex.Intent)}
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x6c6c))
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	for epoch := range o.Epochs {
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		rate := float32(o.Rate / (1 + 0.3*float64(epoch)))
		decay := float32(1 - o.Rate*o.L2)
		for _, i := range order {
			x := rows[i]
			p := m.probs(x.fs)
			var g [numIntents]float32
			for k := range g {
				g[k] = float32(p[k])
			}
			g[x.y]--
			for k := range g {
				m.bias[k] -= rate * 0.1 * g[k]
			}
			for _, f := range x.fs {
				row := m.w[int(f.idx)*numIntents : int(f.idx)*numIntents+numIntents]
				for k := range row {
					row[k] = row[k]*decay - rate*g[k]*f.val
				}
			}
		}
	}
	return m
}

// Score is how a classifier did on labelled replies.
type Score struct {
	N, Correct int
	// Confusion counts replies by [true intent][read intent].
	Confusion map[Intent]map[Intent]int
	// By counts n and correct per language ("lang:de"), channel
	// ("channel:email") and true intent ("intent:ooo").
	By map[string][2]int
}

// Accuracy is the share of replies read right.
func (s Score) Accuracy() float64 {
	if s.N == 0 {
		return 0
	}
	return float64(s.Correct) / float64(s.N)
}

// Evaluate reads every example with read and tallies the results.
func Evaluate(exs []Example, read func(Example) Intent) Score {
	s := Score{Confusion: map[Intent]map[Intent]int{}, By: map[string][2]int{}}
	for _, ex := range exs {
		got := read(ex)
		s.N++
		ok := got == ex.Intent
		if ok {
			s.Correct++
		}
		if s.Confusion[ex.Intent] == nil {
			s.Confusion[ex.Intent] = map[Intent]int{}
		}
		s.Confusion[ex.Intent][got]++
		for _, k := range []string{"lang:" + ex.Lang, "channel:" + ex.Channel, "intent:" + string(ex.Intent)} {
			v := s.By[k]
			v[0]++
			if ok {
				v[1]++
			}
			s.By[k] = v
		}
	}
	return s
}

// Table writes the score as Markdown: accuracy by intent (recall),
// language and channel, then the confusion matrix.
func (s Score) Table() string {
	var b strings.Builder
	pct := func(n, ok int) string {
		return fmt.Sprintf("%d/%d = %.1f%%", ok, n, 100*float64(ok)/math.Max(1, float64(n)))
	}
	fmt.Fprintf(&b, "| replies | n | correct |\n|---|---|---|\n| all | %d | %s |\n", s.N, pct(s.N, s.Correct))
	keys := make([]string, 0, len(s.By))
	for k := range s.By {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "| %s | %d | %s |\n", k, s.By[k][0], pct(s.By[k][0], s.By[k][1]))
	}
	b.WriteString("\n| true \\ read |")
	for _, i := range Intents {
		b.WriteString(" " + string(i) + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(Intents)) + "\n")
	for _, t := range Intents {
		fmt.Fprintf(&b, "| %s |", t)
		for _, r := range Intents {
			fmt.Fprintf(&b, " %d |", s.Confusion[t][r])
		}
		b.WriteString("\n")
	}
	return b.String()
}
