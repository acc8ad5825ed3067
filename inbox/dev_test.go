package inbox

import "testing"

// TestDevSet measures what NewService installs on the development set
// (testdata/model/dev.jsonl: replies written by hand as whole messages,
// used to tune the training settings and to see which phrase banks need
// more, never trained on). go test ./inbox -run DevSet -v prints the
// tables docs/INBOX.md records.
func TestDevSet(t *testing.T) {
	exs := readExamplesFile(t, "testdata/model/dev.jsonl")
	if len(exs) < 300 {
		t.Fatalf("the development set has %d replies; it needs at least 300", len(exs))
	}
	s := Evaluate(exs, readWith(DefaultClassifier()))
	t.Log("\n" + s.Table())
}
