package inbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestCleanCorpus cleans every message in testdata/clean (shaped as
// Outlook, Gmail, Apple Mail, Thunderbird and LinkedIn write them, in
// several languages) and compares it with the .want file beside it.
func TestCleanCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/clean/*.want")
	if err != nil || len(files) < 20 {
		t.Fatalf("the corpus has %d messages: %v", len(files), err)
	}
	for _, want := range files {
		name := strings.TrimSuffix(filepath.Base(want), ".want")
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			exp, err := os.ReadFile(want)
			is.NoErr(err)
			base := strings.TrimSuffix(want, ".want")
			var got string
			if body, err := os.ReadFile(base + ".html"); err == nil {
				got = CleanReply(string(body), "text/html; charset=utf-8")
			} else {
				body, err := os.ReadFile(base + ".txt")
				is.NoErr(err)
				got = CleanReply(string(body), "text/plain")
			}
			is.Equal(got, strings.TrimSpace(string(exp))) // the new text
		})
	}
}

func TestCleanKeepsAPlainReply(t *testing.T) {
	is := is.New(t)
	for _, s := range []string{"Thanks!", "Yes please — let's do 20 minutes.", "Best regards to your team, but no.", "Not relevant for us, sorry."} {
		is.Equal(Clean(s), s)
	}
	// A sign-off followed by more message is not a signature.
	is.Equal(Clean("Thanks,\nlet me check with my boss and get back to you next week about the pricing you sent, it looks fine so far.\n\nCheers"),
		"Thanks,\nlet me check with my boss and get back to you next week about the pricing you sent, it looks fine so far.")
	is.Equal(Clean("Hi\r\n\r\n\r\nSure.\r\n"), "Hi\n\nSure.")
}

func TestHTMLText(t *testing.T) {
	is := is.New(t)
	is.Equal(HTMLText(`<p>One &amp; two</p><ul><li>a</li><li>b</li></ul><script>x()</script><blockquote><p>old</p></blockquote>`),
		"One & two\n- a\n- b\n> old\n")
	is.Equal(CleanReply("<div>Hi<br>there</div>", "TEXT/HTML"), "Hi\nthere")
	is.Equal(CleanReply("<b>not html</b>", ""), "<b>not html</b>")
}
