package inbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// returnNotice is one away notice of testdata/returns_dev.jsonl: its
// text, its language, the day it was received and the day its writer is
// back ("" when it names none).
type returnNotice struct {
	Lang     string `json:"lang"`
	Received string `json:"received"`
	Text     string `json:"text"`
	Returns  string `json:"returns"`
}

// TestReturnDatesDevSet measures the return dates read from the
// development set of away notices, written by hand for the return-date
// rules and used to write them: it shows that the rules do what they
// were written to do, not how they carry over to new wording. Each
// notice is read as an auto-reply (with the Auto-Submitted header),
// received at 09:00 UTC on its day; a notice is right when the date is
// exactly the one expected, or when neither names one. go test ./inbox
// -run ReturnDatesDevSet -v prints the misses and the table of
// docs/INBOX.md.
func TestReturnDatesDevSet(t *testing.T) {
	is := is.New(t)
	f, err := os.Open("testdata/returns_dev.jsonl")
	is.NoErr(err)
	defer f.Close()
	var notices []returnNotice
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var n returnNotice
		is.NoErr(json.Unmarshal(sc.Bytes(), &n))
		notices = append(notices, n)
	}
	is.NoErr(sc.Err())
	is.True(len(notices) >= 150) // at least 150 notices

	right, total := map[string]int{}, map[string]int{}
	for _, n := range notices {
		day, err := time.Parse(time.DateOnly, n.Received)
		is.NoErr(err)
		got, err := Rules{}.Classify(context.Background(), Incoming{Headers: map[string]string{"Auto-Submitted": "auto-replied"},
			Body: n.Text, ReceivedAt: day.Add(9 * time.Hour)})
		is.NoErr(err)
		read := ""
		if got.ReturnsAt != nil {
			read = got.ReturnsAt.Format(time.DateOnly)
		}
		total[n.Lang]++
		total["all"]++
		if read == n.Returns {
			right[n.Lang]++
			right["all"]++
		} else {
			t.Logf("miss (%s, received %s): read %q, want %q: %s", n.Lang, n.Received, read, n.Returns, n.Text)
		}
	}
	var langs []string
	for l := range total {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	var b strings.Builder
	b.WriteString("| notices | n | exact |\n|---|---|---|\n")
	for _, l := range langs {
		fmt.Fprintf(&b, "| %s | %d | %d/%d = %.1f%% |\n", l, total[l], right[l], total[l], 100*float64(right[l])/float64(total[l]))
	}
	t.Logf("\n%s", b.String())
	if acc := float64(right["all"]) / float64(total["all"]); acc < 0.9 {
		t.Errorf("return dates exact on %d of %d notices (%.1f%%), below 90%%", right["all"], total["all"], 100*acc)
	}
}
