package inbox

import (
	"strings"
	"testing"
)

// TestDevSet measures what NewService installs on the development sets:
// testdata/model/dev.jsonl (370 replies) and testdata/model/fresh.jsonl
// (108 replies written later, once the first tuning was done), written by
// hand as whole messages, used to tune the training settings and to see
// which phrase banks needed more, never trained on. It holds them to the
// level docs/INBOX.md records, and checks that no reply of theirs is in
// the training corpus. go test ./inbox -run DevSet -v prints the tables.
func TestDevSet(t *testing.T) {
	bodies := map[string]bool{}
	for _, ex := range readExamplesFile(t, "testdata/model/train.jsonl") {
		bodies[fold(ex.Body)] = true
	}
	for _, set := range []struct {
		file  string
		min   int
		floor float64
	}{{"testdata/model/dev.jsonl", 300, 0.94}, {"testdata/model/fresh.jsonl", 100, 0.94}} {
		exs := readExamplesFile(t, set.file)
		if len(exs) < set.min {
			t.Fatalf("%s has %d replies; it needs at least %d", set.file, len(exs), set.min)
		}
		for _, ex := range exs {
			if f := fold(ex.Body); bodies[f] && strings.TrimSpace(f) != "" {
				t.Errorf("%s: a reply is in the training corpus: %q", set.file, ex.Body)
			}
		}
		s := Evaluate(exs, readWith(DefaultClassifier()))
		t.Logf("%s\n%s", set.file, s.Table())
		if s.Accuracy() < set.floor {
			t.Errorf("%s: accuracy %.1f%% is below %.0f%%", set.file, 100*s.Accuracy(), 100*set.floor)
		}
	}
}
