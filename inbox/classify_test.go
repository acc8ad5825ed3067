package inbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

type labelled struct {
	Lang    string            `json:"lang"`
	Intent  Intent            `json:"intent"`
	Auto    bool              `json:"auto"`
	Subject string            `json:"subject"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

func loadLabelled(t *testing.T, pattern string) []labelled {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no labelled replies: %v", err)
	}
	var out []labelled
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for n := 1; sc.Scan(); n++ {
			var l labelled
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			if !l.Intent.Valid() {
				t.Fatalf("%s:%d: intent %q", f, n, l.Intent)
			}
			out = append(out, l)
		}
		fh.Close()
	}
	return out
}

// TestClassifierAccuracy measures the built-in classifier on the labelled
// replies in testdata (four languages, seven intents) and holds it to 90%.
// The rules were written against replies_*.jsonl; unseen.jsonl was
// written after the rules were final and is never tuned on, so it shows
// how they carry over to new wording. go test ./inbox -run Accuracy -v prints the tables
// docs/INBOX.md records.
func TestClassifierAccuracy(t *testing.T) {
	set := loadLabelled(t, "testdata/replies_*.jsonl")
	if len(set) < 200 {
		t.Fatalf("the labelled set has %d replies; it needs at least 200", len(set))
	}
	all, auto := measure(t, "labelled set", set)
	if float64(all.ok) < 0.9*float64(all.n) {
		t.Fatalf("accuracy %s is below 90%%", all)
	}
	if float64(auto.ok) < 0.97*float64(auto.n) {
		t.Fatalf("auto-reply detection %s is below 97%%", auto)
	}
	unseen, _ := measure(t, "unseen set", loadLabelled(t, "testdata/unseen.jsonl"))
	if float64(unseen.ok) < 0.75*float64(unseen.n) {
		t.Fatalf("accuracy on the unseen set %s is below 75%%", unseen)
	}
}

type tally struct{ n, ok int }

func (x tally) String() string {
	return fmt.Sprintf("%d/%d = %.1f%%", x.ok, x.n, 100*float64(x.ok)/float64(x.n))
}

// measure classifies set and logs a table by language and by intent.
func measure(t *testing.T, name string, set []labelled) (all, auto tally) {
	t.Helper()
	received := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	byLang, byIntent := map[string]*tally{}, map[string]*tally{}
	var misses []string
	for _, l := range set {
		c, err := Rules{}.Classify(context.Background(), Incoming{Subject: l.Subject, Body: l.Body, Headers: l.Headers, ReceivedAt: received})
		if err != nil {
			t.Fatal(err)
		}
		ok := c.Intent == l.Intent
		for key, m := range map[string]map[string]*tally{l.Lang: byLang, string(l.Intent): byIntent} {
			if m[key] == nil {
				m[key] = &tally{}
			}
			m[key].n++
			if ok {
				m[key].ok++
			}
		}
		all.n++
		auto.n++
		if ok {
			all.ok++
		} else {
			misses = append(misses, fmt.Sprintf("%s %s -> %s: %q", l.Lang, l.Intent, c.Intent, l.Body))
		}
		if c.AutoReply == l.Auto {
			auto.ok++
		} else {
			misses = append(misses, fmt.Sprintf("%s auto=%v read as auto=%v: %q", l.Lang, l.Auto, c.AutoReply, l.Body))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n| replies | n | correct |\n|---|---|---|\n| all | %d | %s |\n", name, all.n, all)
	for _, m := range []map[string]*tally{byLang, byIntent} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "| %s | %d | %s |\n", k, m[k].n, *m[k])
		}
	}
	fmt.Fprintf(&b, "| auto-reply detected right | %d | %s |\n", auto.n, auto)
	t.Log("\n" + b.String())
	for _, m := range misses {
		t.Log("miss: " + m)
	}
	return all, auto
}

func TestAutoReplyAndReturnDate(t *testing.T) {
	is := is.New(t)
	received := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC) // a Monday
	day := func(y int, m time.Month, d int) *time.Time { t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC); return &t }
	for _, c := range []struct {
		subject string
		headers map[string]string
		body    string
		auto    bool
		returns *time.Time
	}{
		{headers: map[string]string{"Auto-Submitted": "auto-replied"}, body: "Back soon.", auto: true},
		{headers: map[string]string{"auto-submitted": "no"}, body: "Thanks, sounds good.", auto: false},
		{headers: map[string]string{"X-Autoreply": "yes"}, body: "Away until 2026-12-01.", auto: true, returns: day(2026, 12, 1)},
		{headers: map[string]string{"X-Autorespond": "1"}, body: "x", auto: true},
		{headers: map[string]string{"X-Apple-Action": "vacation"}, body: "x", auto: true},
		{headers: map[string]string{"X-Apple-Action": "other"}, body: "Thanks!", auto: false},
		{headers: map[string]string{"Precedence": "bulk"}, body: "x", auto: true},
		{headers: map[string]string{"Precedence": "junk"}, body: "x", auto: true},
		{headers: map[string]string{"Precedence": "list"}, body: "Thanks!", auto: false},
		{subject: "Automatic reply: hello", body: "I'm away.", auto: true},
		{subject: "Out of Office: hello", body: "Back on December 7th.", auto: true, returns: day(2026, 12, 7)},
		{subject: "Auto: hello", body: "x", auto: true},
		{subject: "Re: Automatic reply policy", body: "Let's talk!", auto: false},
		{body: "I am out of the office until next Monday with limited access to email.", auto: true, returns: day(2026, 11, 30)},
		{body: "Ich bin bis einschließlich 4. Dezember nicht im Büro.", auto: true, returns: day(2026, 12, 7)},
		{body: "Je suis absente du bureau jusqu'au 15/12/2026.", auto: true, returns: day(2026, 12, 15)},
		{body: "Estoy fuera de la oficina hasta el 7 de diciembre.", auto: true, returns: day(2026, 12, 7)},
		{body: "I'm out of office and will be back on 12/08.", auto: true, returns: day(2026, 12, 8)},
		{body: "Out of office until January 4.", auto: true, returns: day(2027, 1, 4)},
		{body: "Out of office, back in a while.", auto: true},
		{body: "Out of office until 2029-01-01.", auto: true}, // too far to trust
	} {
		got, err := Rules{}.Classify(context.Background(), Incoming{Subject: c.subject, Headers: c.headers, Body: c.body, ReceivedAt: received})
		is.NoErr(err)
		is.Equal(got.AutoReply, c.auto) // auto-reply
		if c.auto {
			is.Equal(got.Intent, OutOfOffice)
		}
		is.Equal(got.ReturnsAt, c.returns) // return date
	}
}

func TestQuotedTextIsNotRead(t *testing.T) {
	is := is.New(t)
	c, _ := Rules{}.Classify(context.Background(), Incoming{Body: "Not interested.\n\nOn Mon, Nov 2, 2026 at 9:14 AM Anna wrote:\n> Are you interested in a demo?"})
	is.Equal(c.Intent, NotInterested)
	c, _ = Rules{}.Classify(context.Background(), Incoming{Body: "Thanks!\n> I am out of the office until Monday"})
	is.Equal(c.Intent, Unclear)
	is.Equal(c.AutoReply, false)
}
