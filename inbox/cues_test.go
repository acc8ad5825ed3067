package inbox

import "testing"

// TestCueIndex checks that the one-pass cue index finds exactly the cues
// a plain search of every phrase finds.
func TestCueIndex(t *testing.T) {
	var texts []string
	for _, f := range []string{"testdata/model/dev.jsonl", "testdata/replies_mixed.jsonl"} {
		for _, ex := range readExamplesFile(t, f) {
			texts = append(texts, fold(Clean(ex.Body)))
		}
	}
	texts = append(texts, "", " ", " no ", " ja ", " c e fini ")
	for _, text := range texts {
		hit := make([]bool, len(cues))
		cueIdx.match(text, hit)
		for i, c := range cues {
			if hit[i] != c.ps.in(text) {
				t.Errorf("cue %s in %q: index %v, search %v", c.name, text, hit[i], c.ps.in(text))
			}
		}
	}
}
