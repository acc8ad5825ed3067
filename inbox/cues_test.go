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
	texts = append(texts, "", " ", " no ", " ja ", " c e fini ", " not sure ", " ca ne m interesse pas ", " sure not sure ")
	for _, text := range texts {
		hit, neg := make([]bool, len(cues)), make([]bool, len(cues))
		cueIdx.match(text, hit, neg)
		for i, c := range cues {
			if (hit[i] || neg[i]) != c.ps.in(text) {
				t.Errorf("cue %s in %q: index %v/%v, search %v", c.name, text, hit[i], neg[i], c.ps.in(text))
			}
			if neg[i] && !negatable[c.name] {
				t.Errorf("cue %s is negated in %q", c.name, text)
			}
		}
	}
}

func TestCueNegation(t *testing.T) {
	for text, want := range map[string][2]bool{
		fold("Sure, let's talk."):        {true, false},
		fold("Not sure."):                {false, true},
		fold("Sure. Not sure though."):   {true, true},
		fold("We are not interested"):    {false, true},
		fold("Kein Interesse, danke"):    {false, true},
		fold("No me interesa"):           {false, true},
		fold("Ça ne m'intéresse pas"):    {false, true},
		fold("Interesting, let's talk."): {true, false},
	} {
		hit, neg := make([]bool, len(cues)), make([]bool, len(cues))
		cueIdx.match(text, hit, neg)
		var yes, no bool
		for i, c := range cues {
			if c.name == "yes" || c.name == "interest" {
				yes, no = yes || hit[i], no || neg[i]
			}
		}
		if yes != want[0] || no != want[1] {
			t.Errorf("%q: yes %v, negated %v; want %v", text, yes, no, want)
		}
	}
}
