package inbox

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTune trains a model on the training corpus (and the older
// hand-written sets) with the settings in the environment and measures it
// on the development set, printing its misses. It is how the training
// settings, the threshold and the phrase banks were chosen; it never reads
// the held-out set. Run it with
//
//	LEADLINE_TUNE=1 go test ./inbox -run Tune -v
//
// LEADLINE_TUNE_EPOCHS, _RATE, _L2 and _THRESHOLD override the defaults;
// LEADLINE_TUNE_OUT writes the model to a file.
func TestTune(t *testing.T) {
	if os.Getenv("LEADLINE_TUNE") == "" {
		t.Skip("set LEADLINE_TUNE=1 to train and measure on the development set")
	}
	env := func(k string) float64 {
		v, _ := strconv.ParseFloat(os.Getenv("LEADLINE_TUNE_"+k), 64)
		return v
	}
	var train []Example
	for _, pat := range []string{"testdata/model/train.jsonl", "testdata/replies_*.jsonl", "testdata/unseen.jsonl"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			train = append(train, readExamplesFile(t, f)...)
		}
	}
	m := Train(train, TrainOptions{Epochs: int(env("EPOCHS")), Rate: env("RATE"), L2: env("L2"), Seed: 25})
	if out := os.Getenv("LEADLINE_TUNE_OUT"); out != "" {
		data, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	th := DefaultThreshold
	if v := env("THRESHOLD"); v > 0 {
		th = v
	}
	dev := readExamplesFile(t, envOr("LEADLINE_TUNE_ON", "testdata/model/dev.jsonl"))
	c := &ModelClassifier{Model: m, Threshold: th}
	read := readWith(c)
	var misses []string
	s := Evaluate(dev, func(ex Example) Intent {
		got := read(ex)
		if got != ex.Intent {
			p := m.Probs(ex.Subject, ex.Body)
			misses = append(misses, fmt.Sprintf("%s %s %s -> %s (%.2f %s): %q", ex.Lang, ex.Channel, ex.Intent, got,
				p[argmax(p)], Intents[argmax(p)], strings.Join(strings.Fields(Clean(ex.Body)), " ")))
		}
		return got
	})
	t.Logf("trained on %d replies\n%s\n%s", len(train), s.Table(), strings.Join(misses, "\n"))
	// Accuracy at other thresholds, to choose one.
	for _, x := range []float64{0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7} {
		s := Evaluate(dev, readWith(&ModelClassifier{Model: m, Threshold: x}))
		t.Logf("threshold %.2f: %.1f%%", x, 100*s.Accuracy())
	}
}

func argmax(p [numIntents]float64) int {
	best := 0
	for k, v := range p {
		if v > p[best] {
			best = k
		}
	}
	return best
}

func init() {
	if v, err := strconv.Atoi(os.Getenv("LEADLINE_TUNE_CUEW")); err == nil {
		cueWeight = v
	}
	if v, err := strconv.Atoi(os.Getenv("LEADLINE_TUNE_NEG")); err == nil {
		negationScope = v
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// TestCalibration prints the mean negative log-likelihood of the right
// intent on the development set when the model's scores are divided by a
// temperature, and its accuracy above each confidence, to see whether the
// model is over- or underconfident.
func TestCalibration(t *testing.T) {
	if os.Getenv("LEADLINE_TUNE") == "" {
		t.Skip("set LEADLINE_TUNE=1")
	}
	m := Builtin()
	if f := os.Getenv("LEADLINE_TUNE_MODEL"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m, err = UnmarshalModel(data); err != nil {
			t.Fatal(err)
		}
	}
	dev := readExamplesFile(t, envOr("LEADLINE_TUNE_ON", "testdata/model/dev.jsonl"))
	for _, temp := range []float64{0.4, 0.5, 0.6, 0.7, 0.85, 1, 1.25} {
		var nll float64
		bins := map[int][2]int{}
		for _, ex := range dev {
			p := m.Probs(ex.Subject, ex.Body)
			var q [numIntents]float64
			var sum float64
			for k := range p {
				q[k] = math.Pow(p[k], 1/temp)
				sum += q[k]
			}
			for k := range q {
				q[k] /= sum
			}
			nll -= math.Log(max(q[intentIndex(ex.Intent)], 1e-9))
			b := int(q[argmax(q)] * 10)
			v := bins[b]
			v[0]++
			if Intents[argmax(q)] == ex.Intent {
				v[1]++
			}
			bins[b] = v
		}
		var bs []string
		for b := 0; b <= 10; b++ {
			if v := bins[b]; v[0] > 0 {
				bs = append(bs, fmt.Sprintf("%.1f:%d/%d", float64(b)/10, v[1], v[0]))
			}
		}
		t.Logf("T=%.2f NLL %.3f  %s", temp, nll/float64(len(dev)), strings.Join(bs, " "))
	}
}
