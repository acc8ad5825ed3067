// Package client is leadline's Go client: one method per operation of the
// HTTP API (named after its operationId), with the domain packages' own
// types for bodies and answers, so that the client and the server cannot
// drift apart.
//
//	c := client.New("http://127.0.0.1:8080", os.Getenv("LEADLINE_KEY"))
//	res, err := c.UpsertLead(ctx, leads.LeadInput{FirstName: "Ada", EmailWork: "ada@example.com"})
//
// Calls are safe to retry, and the client retries them on its own: every
// write carries an Idempotency-Key (generated unless the context names one
// with WithIdempotencyKey) that each retry of it reuses; a 429 waits for
// Retry-After (or X-RateLimit-Reset) when the context's deadline allows;
// 5xx answers and network errors are retried with jittered backoff; a 4xx
// is never retried. Errors are *Error, and errors.Is works with ErrNotFound
// and the other codes.
package client

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one leadline server with one API key. It is safe for
// concurrent use.
type Client struct {
	base       string
	key        string
	hc         *http.Client
	now        func() time.Time
	sleep      func(ctx context.Context, d time.Duration) error
	retries    int
	backoff    time.Duration
	maxBackoff time.Duration
	newKey     func() string
	userAgent  string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends the calls through hc (default: a client with a
// 60-second timeout).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithClock makes the client read the time with now and wait with sleep,
// which returns early with the context's error when it ends. Tests use it
// to wait for no real time.
func WithClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) { c.now, c.sleep = now, sleep }
}

// WithRetries sets how many times a call is retried after the first try
// (default 4; 0 turns retries off).
func WithRetries(n int) Option { return func(c *Client) { c.retries = max(0, n) } }

// WithBackoff sets the first wait between retries of a 5xx or a network
// error, and the longest (default 250ms and 10s); each wait doubles, with
// jitter.
func WithBackoff(first, longest time.Duration) Option {
	return func(c *Client) { c.backoff, c.maxBackoff = first, longest }
}

// WithKeyGenerator makes the Idempotency-Keys of writes with gen (default:
// 128 random bits in hex).
func WithKeyGenerator(gen func() string) Option { return func(c *Client) { c.newKey = gen } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a client of the server at baseURL (such as
// "https://leadline.example.com") that authenticates with key.
func New(baseURL, key string, opts ...Option) *Client {
	c := &Client{
		base: strings.TrimRight(baseURL, "/"), key: key,
		hc:      &http.Client{Timeout: 60 * time.Second},
		now:     time.Now,
		sleep:   sleepContext,
		retries: 4, backoff: 250 * time.Millisecond, maxBackoff: 10 * time.Second,
		newKey:    randomKey,
		userAgent: "leadline-go-client",
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func randomKey() string {
	b := make([]byte, 16)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}

type idemKey struct{}

// WithIdempotencyKey returns a context whose write calls carry key as
// their Idempotency-Key instead of a generated one: a program that retries
// a call itself (after a restart, say) sends the same key again, and the
// server runs the call once.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idemKey{}, key)
}

// call is one operation's request.
type call struct {
	method string
	path   string // with the path parameters escaped
	query  url.Values
	body   any // JSON-encoded when not nil
	// raw is sent as is instead of body, with header, and without the
	// API key (the inbound webhooks).
	raw    []byte
	header http.Header
	// file is sent as is, as contentType, with the API key (an import).
	file        []byte
	contentType string
}

// pathOf builds a path from a pattern with {name} placeholders and the
// values in order.
func pathOf(pattern string, values ...string) string {
	var b strings.Builder
	i := 0
	for {
		open := strings.IndexByte(pattern, '{')
		if open < 0 {
			b.WriteString(pattern)
			return b.String()
		}
		end := strings.IndexByte(pattern[open:], '}') + open
		b.WriteString(pattern[:open])
		if i < len(values) {
			b.WriteString(url.PathEscape(values[i]))
		}
		i++
		pattern = pattern[end+1:]
	}
}

// do sends c with its retries and decodes a 2xx answer's body into out
// (when out is not nil).
func (c *Client) do(ctx context.Context, cl call, out any) error {
	var payload []byte
	if cl.raw != nil {
		payload = cl.raw
	} else if cl.file != nil {
		payload = cl.file
	} else if cl.body != nil {
		var err error
		if payload, err = json.Marshal(cl.body); err != nil {
			return fmt.Errorf("leadline: encode %s %s: %w", cl.method, cl.path, err)
		}
	}
	key := ""
	if cl.method != http.MethodGet && cl.raw == nil {
		key, _ = ctx.Value(idemKey{}).(string)
		if key == "" {
			key = c.newKey()
		}
	}
	u := c.base + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, cl.method, u, bytes.NewReader(payload))
		if err != nil {
			return err
		}
		if payload == nil {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		for k, vs := range cl.header {
			req.Header[k] = vs
		}
		if cl.raw == nil {
			req.Header.Set("Authorization", "Bearer "+c.key)
			if cl.file != nil {
				req.Header.Set("Content-Type", cl.contentType)
			} else if payload != nil {
				req.Header.Set("Content-Type", "application/json")
			}
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", c.userAgent)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		wait, err := c.once(req, out)
		if err == nil {
			return nil
		}
		if wait < 0 || attempt >= c.retries || ctx.Err() != nil {
			return err
		}
		if wait == 0 {
			wait = c.jitter(attempt)
		}
		if dl, ok := ctx.Deadline(); ok && c.now().Add(wait).After(dl) {
			return err // the wait would outlast the caller's deadline
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return err
		}
	}
}

// once sends req and reads its answer. On failure it also says how long
// to wait before a retry: -1 for never, 0 for the backoff.
func (c *Client) once(req *http.Request, out any) (time.Duration, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		if req.Context().Err() != nil {
			return -1, req.Context().Err()
		}
		return 0, fmt.Errorf("leadline: %s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, fmt.Errorf("leadline: %s %s: read the answer: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode < 300 {
		if out == nil || len(body) == 0 {
			return 0, nil
		}
		if raw, ok := out.(*[]byte); ok { // a file, such as a CSV download
			*raw = body
			return 0, nil
		}
		if err := json.Unmarshal(body, out); err != nil {
			return -1, fmt.Errorf("leadline: %s %s: decode the answer: %w", req.Method, req.URL.Path, err)
		}
		return 0, nil
	}
	e := errorOf(resp, body)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return max(c.rateWait(resp.Header), time.Millisecond), e
	case resp.StatusCode >= 500:
		return 0, e
	}
	return -1, e
}

// rateWait is how long a 429 asks to wait: Retry-After, or else until
// X-RateLimit-Reset.
func (c *Client) rateWait(h http.Header) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h.Get("Retry-After")); err == nil {
		return max(t.Sub(c.now()), 0)
	}
	if s, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		return max(time.Unix(s, 0).Sub(c.now()), 0)
	}
	return time.Second
}

// jitter is the wait before retry attempt+1 of a 5xx or a network error:
// between half and all of backoff·2^attempt, at most maxBackoff.
func (c *Client) jitter(attempt int) time.Duration {
	d := c.backoff << min(attempt, 20)
	if d > c.maxBackoff || d <= 0 {
		d = c.maxBackoff
	}
	half := d / 2
	return half + rand.N(half+1)
}

// errorOf reads an error answer.
func errorOf(resp *http.Response, body []byte) *Error {
	e := &Error{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id")}
	var env struct {
		Error struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			Remedy    string `json:"remedy"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error.Code != "" {
		e.Code, e.Message, e.Remedy = env.Error.Code, env.Error.Message, env.Error.Remedy
		if env.Error.RequestID != "" {
			e.RequestID = env.Error.RequestID
		}
	} else {
		e.Message = strings.TrimSpace(http.StatusText(resp.StatusCode) + ": " + string(bytes.TrimSpace(body[:min(len(body), 200)])))
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			e.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return e
}
