package browsertest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

func TestLoopback(t *testing.T) {
	for raw, want := range map[string]bool{
		"http://127.0.0.1:8080/app/": true, "http://127.9.9.9/": true, "http://[::1]:80/": true, "http://localhost:1/": true,
		"data:image/png;base64,AA": true, "https://example.com/": false, "http://10.0.0.1/": false, "http://[2001:db8::1]/": false,
		"http://localhost.example.com/": false, "http://127.0.0.1.nip.io/": false, "ws://93.184.216.34/": false,
	} {
		if got := Loopback(raw); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", raw, got, want)
		}
	}
}

// TestTheGuardBlocksAndReports: a page that asks another host for an
// image and breaks its Content-Security-Policy with an inline script is
// reported, and the other host is never reached.
func TestTheGuardBlocksAndReports(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self' http://example.com")
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>t</title><img src="http://example.com/x.png"><script>document.title = "ran"</script><p id="done">done</p>`))
	}))
	defer srv.Close()
	p := Open(t)
	p.Do(chromedp.Navigate(srv.URL), chromedp.WaitVisible(chromedp.ID("done")))
	if title := Get(p, chromedp.Title()); title != "t" {
		t.Errorf("the inline script ran: title %q", title)
	}
	deadline := time.Now().Add(Timeout)
	var problems []string
	for time.Now().Before(deadline) {
		problems = p.Problems()
		joined := strings.Join(problems, "\n")
		if strings.Contains(joined, "http://example.com/x.png") && strings.Contains(joined, "Content Security Policy") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	joined := strings.Join(problems, "\n")
	if !strings.Contains(joined, "http://example.com/x.png") {
		t.Errorf("the request to example.com was not blocked and reported: %v", problems)
	}
	if !strings.Contains(joined, "Content Security Policy") {
		t.Errorf("the CSP violation was not reported: %v", problems)
	}
	p.Allow("") // seen: this page's problems are the test's point
}
