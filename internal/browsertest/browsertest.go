// Package browsertest drives the console in a real headless Chromium
// (Debian's chromium) through chromedp, for end-to-end tests.
//
// One browser serves a whole test binary (Run starts none; the first
// Open does, and Run closes it): a test opens a Page, a tab in a browser
// context of its own (its own cookies), and drives it. The browser runs
// headless, with background networking, sync, component updates and
// QUIC off, in a fresh profile, and every request a page makes to a host
// that is not loopback (127.0.0.0/8, ::1, localhost) is failed before it
// leaves: tests reach loopback only. Every console error, uncaught
// exception, failed or blocked request and Content-Security-Policy
// violation on a page fails its test.
//
// A test is skipped, saying why, only when no Chromium can start: none is
// installed (LEADLINE_TEST_CHROMIUM names one; else /usr/bin/chromium,
// or chromium, chromium-browser, google-chrome on the PATH), or it does
// not start here. With LEADLINE_TEST_BROWSER_REQUIRED=1 (CI) it fails
// instead.
//
// With LEADLINE_SCREENSHOTS=1, Page.Screenshot writes PNG files under
// docs/console/ of the module; otherwise it writes nothing, so that test
// runs leave the checkout as it was.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// EnvChromium names the variable that points at a browser to use.
const EnvChromium = "LEADLINE_TEST_CHROMIUM"

// EnvRequire names the variable that, set to 1, makes a test fail
// instead of skipping when no Chromium can start (CI sets it).
const EnvRequire = "LEADLINE_TEST_BROWSER_REQUIRED"

// EnvScreenshots names the variable that, set to 1, makes Screenshot
// write its files.
const EnvScreenshots = "LEADLINE_SCREENSHOTS"

// Timeout bounds one step of a test (a navigation, a wait).
const Timeout = 30 * time.Second

var shared struct {
	once    sync.Once
	ctx     context.Context // the browser's
	cancel  func()
	dir     string
	skipped string // why no browser could start
}

// Run runs a test binary's tests (call it from TestMain) and closes the
// shared browser after them.
func Run(m *testing.M) int {
	code := m.Run()
	if shared.cancel != nil {
		shared.cancel()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	return code
}

// findChromium returns the browser to start, or "" for none.
func findChromium() string {
	if p := os.Getenv(EnvChromium); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func start() {
	path := findChromium()
	if path == "" {
		shared.skipped = "no Chromium found: install Debian's chromium (apt-get install -y chromium) or set " + EnvChromium
		return
	}
	dir, err := os.MkdirTemp("", "leadline-chromium-")
	if err != nil {
		shared.skipped = "no profile directory for Chromium: " + err.Error()
		return
	}
	shared.dir = dir
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("dns-prefetch-disable", true),
		// No name resolves but loopback's: a request the Fetch guard
		// below would miss still reaches nothing.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	startCtx, cancelStart := context.WithTimeout(ctx, 60*time.Second)
	defer cancelStart()
	if err := chromedp.Do(ctx); err != nil || startCtx.Err() != nil {
		cancel()
		cancelAlloc()
		shared.skipped = fmt.Sprintf("Chromium (%s) did not start: %v", path, err)
		return
	}
	shared.ctx, shared.cancel = ctx, func() { cancel(); cancelAlloc() }
}

// Loopback reports whether a URL's host is a loopback address or
// localhost.
func Loopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "data", "blob", "about":
		return true
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Page is one tab, in a browser context of its own, for one test.
type Page struct {
	t   testing.TB
	ctx context.Context

	mu       sync.Mutex
	problems []string
	blocked  []string
	allowed  []string
}

// Allow lets console messages (and blocked requests) that contain text
// pass: a test that opens a page answered 404 on purpose allows the
// browser's report of it.
func (p *Page) Allow(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.allowed = append(p.allowed, text)
}

// Open opens a page for t, closed when t ends; t fails at its end if the
// page logged an error, an exception or a CSP violation, or asked for a
// host that is not loopback. t is skipped when no Chromium can start.
func Open(t testing.TB) *Page {
	t.Helper()
	shared.once.Do(start)
	if shared.ctx == nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("browser tests need a browser (%s=1): %s", EnvRequire, shared.skipped)
		}
		t.Skip("browser tests skipped: " + shared.skipped)
	}
	ctx, cancel := chromedp.NewContext(shared.ctx, chromedp.WithNewBrowserContext())
	p := &Page{t: t, ctx: ctx}
	t.Cleanup(func() {
		cancel()
		p.mu.Lock()
		defer p.mu.Unlock()
		allowed := func(m string) bool {
			for _, a := range p.allowed {
				if strings.Contains(m, a) {
					return true
				}
			}
			return false
		}
		for _, b := range p.blocked {
			if !allowed(b) {
				t.Errorf("the page asked for a host that is not loopback (blocked): %s", b)
			}
		}
		for _, m := range p.problems {
			if !allowed(m) {
				t.Errorf("browser console: %s", m)
			}
		}
	})
	if err := chromedp.Do(ctx); err != nil { // opens the tab
		t.Fatalf("open a tab: %v", err)
	}
	// Every request is paused until the guard lets it go on: loopback
	// only.
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		t.Fatalf("enable the request guard: %v", err)
	}
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			if Loopback(ev.Request.URL) {
				_, err = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
			} else {
				p.mu.Lock()
				p.blocked = append(p.blocked, ev.Request.URL)
				p.mu.Unlock()
				_, err = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
			}
			if err != nil && ctx.Err() == nil {
				p.problem("request guard: " + err.Error())
			}
		}
	}()
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException || m.Type == chromedp.ConsoleWarning && isCSP(m.Text) {
				p.problem(fmt.Sprintf("%s %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1))
			}
		}
	}()
	return p
}

// isCSP reports whether a console text is a Content-Security-Policy
// report.
func isCSP(text string) bool {
	return strings.Contains(text, "Content Security Policy") || strings.Contains(text, "Content-Security-Policy")
}

func (p *Page) problem(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = append(p.problems, s)
}

// Problems returns the console errors and blocked requests seen so far.
func (p *Page) Problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append(append([]string{}, p.problems...), p.blocked...)
}

// Do runs steps, each within Timeout; an error fails the test at once.
func (p *Page) Do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	for i, s := range steps {
		ctx, cancel := context.WithTimeout(p.ctx, Timeout)
		err := chromedp.Do(ctx, s)
		cancel()
		if err != nil {
			p.t.Fatalf("browser step %d of %d: %v (problems so far: %v)", i+1, len(steps), err, p.Problems())
		}
	}
}

// Get runs one action that returns a value, within Timeout.
func Get[T any](p *Page, a chromedp.Action[T]) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		p.t.Fatalf("browser: %v (problems so far: %v)", err, p.Problems())
	}
	return v
}

// Context is the page's chromedp context, for what Do and Get do not
// cover.
func (p *Page) Context() context.Context { return p.ctx }

// Screenshot saves the whole page as docs/console/NAME.png when
// LEADLINE_SCREENSHOTS=1, and does nothing otherwise.
func (p *Page) Screenshot(name string) {
	p.t.Helper()
	p.screenshot(name, chromedp.FullScreenshot(100))
}

// ScreenshotTop is Screenshot of what the window shows, for a long page
// whose top is what the picture is about.
func (p *Page) ScreenshotTop(name string) {
	p.t.Helper()
	p.screenshot(name, chromedp.CaptureScreenshot())
}

func (p *Page) screenshot(name string, take chromedp.Action[[]byte]) {
	p.t.Helper()
	if os.Getenv(EnvScreenshots) != "1" {
		return
	}
	png := Get(p, take)
	dir, err := docsDir()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// docsDir is docs/console of the module this file is in.
func docsDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("browsertest: cannot find the module's directory")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "docs", "console")
	return dir, os.MkdirAll(dir, 0o755)
}
