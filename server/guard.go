package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// Operation metadata keys: every operation declares the role it needs and
// the rate class it counts against.
const (
	metaRole  = "leadline.role"
	metaClass = "leadline.class"
	// metaRides marks a read whose first statement carries the call's
	// rate count (Postgres; see Server.ride).
	metaRides = "leadline.rides"
)

// maxBody is the largest request body leadline reads.
const maxBody = 2 << 20

// headersKept are the response headers an idempotent replay repeats.
var headersKept = []string{"Content-Type", "Location"}

// guard runs before every operation: authentication, the rate count, role,
// the request's form, idempotent replay, then the operation itself, whose
// answer is stored for replay when the call carried an Idempotency-Key.
// Every call made with a valid key counts against its budget and carries
// the rate-limit headers, whatever its answer.
func (s *Server) guard(ctx huma.Context, next func(huma.Context)) {
	op := ctx.Operation()
	role, _ := op.Metadata[metaRole].(apikit.Role)
	class, _ := op.Metadata[metaClass].(apikit.RateClass)
	if role == "" {
		next(ctx) // public: OpenAPI, docs, schemas
		return
	}
	fail := func(err error) { s.writeErr(ctx, err) }

	// A read may be authenticated from this process's memory of the key
	// (Postgres): the rate count below then says whether anything
	// authentication reads has changed since, and if it has, the key is
	// read again before the call goes on.
	secret, err := apiKeyOf(ctx.EachHeader)
	var p apikit.Principal
	var version int64
	var cached bool
	if err == nil && class == apikit.ClassRead {
		p, version, cached, err = s.workspaces.AuthenticateRead(ctx.Context(), secret)
	} else if err == nil {
		p, err = s.workspaces.Authenticate(ctx.Context(), secret)
	}
	// afresh reads the key again, for a remembered principal that may no
	// longer hold.
	afresh := func() error {
		s.workspaces.Forget(secret)
		p, version, cached, err = s.workspaces.AuthenticateRead(ctx.Context(), secret)
		return err
	}
	// A remembered role that would refuse the call is read again first:
	// the role may have been raised since.
	if err == nil && cached && roleRefusal(role, p) != nil {
		err = afresh()
	}
	// Without a valid key there is no budget to count the call against:
	// 401 and 402 cost nothing and carry no rate-limit headers.
	if err != nil {
		fail(err)
		return
	}

	// admit applies a count's window to the call: a read authenticated
	// from memory whose workspace's authentication changed since is
	// authenticated afresh (and, refused after all, counts nothing); the
	// rate headers are set; an over-limit call is refused, and so is a
	// call the key's role does not allow, after it counted: every call
	// with a valid key counts, refused or not, so that a key cannot make
	// unlimited attempts at what it may not do.
	admit := func(win rateWindow, ok bool) error {
		if cached && win.AuthVersion != version {
			keyID := p.KeyID
			if err := afresh(); err != nil {
				if ok {
					if gerr := s.limiter.giveBack(ctx.Context(), keyID, win.Reset.Add(-time.Hour)); gerr != nil {
						s.logger.Error("give back a refused read's count", "err", gerr)
					}
				}
				return err
			}
		}
		if err := s.applyWindow(ctx.SetHeader, win, ok); err != nil {
			return err
		}
		return roleRefusal(role, p)
	}

	u := ctx.URL()
	storableQuery := apikit.Storable(map[string]any{"": queryValues(u.Query())})
	if rides, _ := op.Metadata[metaRides].(bool); rides && cached && storableQuery && s.limiter.local == nil {
		s.ride(ctx, next, p, version, admit, func() apikit.Principal { return p })
		return
	}
	wsOfCached := ""
	if cached {
		wsOfCached = p.WorkspaceID
	}
	win, ok, err := s.limiter.takeFor(ctx.Context(), p.KeyID, wsOfCached, class)
	if err != nil {
		fail(err)
		return
	}
	if err := admit(win, ok); err != nil {
		fail(err)
		return
	}
	if !storableQuery {
		fail(unstorable())
		return
	}

	idemKey := ""
	var body []byte
	var fp string
	var up *upload
	if class != apikit.ClassRead {
		var sent []string
		ctx.EachHeader(func(name, value string) {
			if strings.EqualFold(name, "Idempotency-Key") {
				sent = append(sent, value)
			}
		})
		if len(sent) > 0 {
			idemKey = sent[0]
		}
		if err := checkIdempotencyKey(sent); err != nil {
			fail(err)
			return
		}
		if isUpload, _ := op.Metadata[metaUpload].(bool); isUpload {
			// A file: kept on disk, not in memory, up to its own limit; its
			// rows are checked as they are read.
			if up, err = spool(ctx.BodyReader(), ctx.Method(), u.RequestURI(), s.maxUpload); err != nil {
				fail(err)
				return
			}
			defer up.release()
		} else {
			body, err = io.ReadAll(io.LimitReader(ctx.BodyReader(), maxBody+1))
			if err != nil {
				fail(apikit.Invalid("The request body could not be read.", "Send the whole body again."))
				return
			}
			if !storableJSON(body) {
				fail(unstorable())
				return
			}
		}
	}
	if idemKey != "" {
		if up != nil {
			fp = up.fingerprint
		} else {
			fp = fingerprint(ctx.Method(), u.RequestURI(), body)
		}
		rec, err := s.idem.lookup(ctx.Context(), p.KeyID, idemKey)
		if err != nil {
			fail(err)
			return
		}
		if rec != nil {
			s.answerFromRecord(ctx, rec, fp)
			return
		}
	}

	cctx := apikit.WithPrincipal(ctx.Context(), p)
	if up != nil {
		cctx = withUpload(cctx, up)
	}
	hctx := huma.WithContext(ctx, cctx)
	if class != apikit.ClassRead {
		hctx = &recorder{humaContext: hctx, reader: bytes.NewReader(body), status: http.StatusOK, headers: http.Header{}, keep: idemKey != ""}
	}
	if idemKey == "" {
		next(hctx)
		return
	}

	reserved, err := s.idem.reserve(ctx.Context(), p.KeyID, idemKey, fp)
	if err != nil {
		fail(err)
		return
	}
	if !reserved {
		rec, err := s.idem.lookup(ctx.Context(), p.KeyID, idemKey)
		if err != nil {
			fail(err)
			return
		}
		if rec == nil { // it expired or was released between the two steps
			fail(apikit.InProgress())
			return
		}
		s.answerFromRecord(ctx, rec, fp)
		return
	}

	rec := hctx.(*recorder)
	stored := false
	defer func() {
		// A panic or a 5xx leaves nothing stored: a retry runs again.
		if !stored {
			if err := s.idem.release(context.WithoutCancel(ctx.Context()), p.KeyID, idemKey); err != nil {
				s.logger.Error("release idempotency key", "err", err)
			}
		}
	}()
	release := s.idem.hold(context.WithoutCancel(ctx.Context()), p.KeyID, idemKey, s.logger)
	next(rec)
	release()
	if rec.status >= 500 {
		return
	}
	kept := map[string]string{}
	for _, h := range headersKept {
		if v := rec.headers.Get(h); v != "" {
			kept[h] = v
		}
	}
	if err := s.idem.complete(context.WithoutCancel(ctx.Context()), p.KeyID, idemKey, rec.status, kept, rec.body.Bytes()); err != nil {
		s.logger.Error("store idempotent answer", "err", err)
		return
	}
	stored = true
}

// roleRefusal is the error for a call that needs role, made with a key
// that acts as p, or nil when p's role suffices.
func roleRefusal(role apikit.Role, p apikit.Principal) error {
	if p.Role.AtLeast(role) {
		return nil
	}
	return apikit.Forbidden(fmt.Sprintf("This call needs the %s role; this key acts as %s.", role, p.Role),
		fmt.Sprintf("Use a key with the %s role or higher, created by a member who still holds that role.", role))
}

// applyWindow sets the rate-limit headers of a call's window through set
// and, when the budget refused the call, Retry-After; it returns the
// refusal.
func (s *Server) applyWindow(set func(name, value string), win rateWindow, ok bool) error {
	set("X-RateLimit-Limit", strconv.Itoa(win.Limit))
	set("X-RateLimit-Remaining", strconv.Itoa(win.Remaining))
	set("X-RateLimit-Reset", strconv.FormatInt(win.Reset.Unix(), 10))
	if ok {
		return nil
	}
	s.rateLimited(string(win.Class))
	wait := win.Reset.Sub(s.clock.Now()).Seconds()
	set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait)))))
	return apikit.RateLimited(win.Class, win.Limit)
}

// answerFromRecord answers a call whose Idempotency-Key is already known.
func (s *Server) answerFromRecord(ctx huma.Context, rec *idemRecord, fp string) {
	switch {
	case rec.Fingerprint != fp:
		s.writeErr(ctx, apikit.IdempotencyMismatch())
	case rec.State != idemDone:
		s.writeErr(ctx, apikit.InProgress())
	default:
		for k, v := range rec.Headers {
			ctx.SetHeader(k, v)
		}
		ctx.SetHeader("Idempotent-Replayed", "true")
		ctx.SetStatus(rec.Status)
		_, _ = ctx.BodyWriter().Write(restampRequestID(rec.Body, requestIDOf(ctx.Context())))
	}
}

// restampRequestID gives a stored error envelope the request id of the
// call it answers again, so that request_id always matches the answer's
// X-Request-Id. Any other body is replayed as it was stored.
func restampRequestID(body []byte, id string) []byte {
	var env ErrorBody
	if !bytes.Contains(body, []byte(`"request_id"`)) || json.Unmarshal(body, &env) != nil || env.Err.Code == "" {
		return body
	}
	env.Err.RequestID = id
	b, err := json.Marshal(&env)
	if err != nil {
		return body
	}
	return append(b, '\n')
}

// writeErr answers with err in the envelope.
func (s *Server) writeErr(ctx huma.Context, err error) {
	se := withRequestID(s.toStatusError(err).(*ErrorBody), requestIDOf(ctx.Context()))
	ctx.SetHeader("Content-Type", "application/json")
	ctx.SetStatus(se.status)
	b, _ := json.Marshal(se)
	_, _ = ctx.BodyWriter().Write(append(b, '\n'))
}

// checkIdempotencyKey refuses Idempotency-Key headers that are repeated,
// too long, blank, or hold anything but visible ASCII and inner spaces: such a key
// is almost always a client bug, and would be a poor thing to store.
func checkIdempotencyKey(sent []string) error {
	if len(sent) == 0 {
		return nil
	}
	remedy := "Use a key of 1 to 255 visible ASCII characters, such as a UUID, and send the same key when you retry."
	if len(sent) > 1 {
		return apikit.Invalid("The request carries more than one Idempotency-Key header.", remedy)
	}
	// net/http trims white space around header values: a key of spaces
	// arrives empty.
	k := sent[0]
	if len(k) > maxIdempotencyKey {
		return apikit.Invalid(fmt.Sprintf("The Idempotency-Key header is longer than %d characters.", maxIdempotencyKey), remedy)
	}
	if strings.TrimSpace(k) != k || k == "" {
		return apikit.Invalid("The Idempotency-Key header is blank or starts or ends with white space.", remedy)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return apikit.Invalid("The Idempotency-Key header holds a character that is not visible ASCII.", remedy)
		}
	}
	return nil
}

// storableJSON reports whether a JSON body holds only text the databases
// can store. Only bodies that could hold a NUL are decoded to look.
func storableJSON(body []byte) bool {
	if !bytes.Contains(body, []byte{0}) && !bytes.Contains(bytes.ToLower(body), []byte(`\u0000`)) {
		return true
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return !bytes.Contains(body, []byte{0})
	}
	return apikit.Storable(v)
}

func queryValues(q map[string][]string) []any {
	var out []any
	for k, vs := range q {
		out = append(out, k)
		for _, v := range vs {
			out = append(out, v)
		}
	}
	return out
}

func unstorable() *apikit.Error {
	return apikit.Invalid("The request holds text that cannot be stored: a NUL character or invalid UTF-8.",
		"Remove NUL characters (\\u0000) and send UTF-8 text.")
}

// apiKeyOf reads the key from Authorization: Bearer or X-API-Key, through
// each, which calls its function on every header of the request. A
// request that carries more than one credential (both headers, or one of
// them twice) is refused rather than resolved to one of them: a client
// that sends two keys does not know which one acts, and the server should
// not guess.
func apiKeyOf(each func(func(name, value string))) (string, error) {
	var auth, apiKey []string
	each(func(name, value string) {
		switch {
		case strings.EqualFold(name, "Authorization"):
			auth = append(auth, value)
		case strings.EqualFold(name, "X-API-Key"):
			apiKey = append(apiKey, value)
		}
	})
	switch {
	case len(auth)+len(apiKey) > 1:
		return "", apikit.Errorf(apikit.EUnauthorized,
			"Send one credential: either 'Authorization: Bearer <key>' or 'X-API-Key: <key>', once.",
			"The request carries more than one credential (%d Authorization and %d X-API-Key headers); leadline does not choose between them.",
			len(auth), len(apiKey))
	case len(auth) == 1:
		scheme, key, ok := strings.Cut(auth[0], " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(key), nil
		}
		return "", nil
	case len(apiKey) == 1:
		return strings.TrimSpace(apiKey[0]), nil
	}
	return "", nil
}

// eachHeader is apiKeyOf's view of a request's headers outside huma.
func eachHeader(h http.Header) func(func(name, value string)) {
	return func(fn func(name, value string)) {
		for name, values := range h {
			for _, v := range values {
				fn(name, v)
			}
		}
	}
}

// humaContext lets recorder embed huma.Context under a name that does not
// hide the interface's own Context method.
type humaContext = huma.Context

// recorder serves the request body that guard already read and passes the
// response through, keeping a copy for replay when keep is set.
type recorder struct {
	humaContext
	reader  io.Reader
	status  int
	headers http.Header
	keep    bool
	body    bytes.Buffer
}

func (r *recorder) BodyReader() io.Reader { return r.reader }
func (r *recorder) SetStatus(code int)    { r.status = code; r.humaContext.SetStatus(code) }
func (r *recorder) Status() int           { return r.status }
func (r *recorder) SetHeader(name, value string) {
	r.headers.Set(name, value)
	r.humaContext.SetHeader(name, value)
}
func (r *recorder) AppendHeader(name, value string) {
	r.headers.Add(name, value)
	r.humaContext.AppendHeader(name, value)
}
func (r *recorder) BodyWriter() io.Writer {
	if !r.keep {
		return r.humaContext.BodyWriter()
	}
	return io.MultiWriter(r.humaContext.BodyWriter(), &r.body)
}

// errStale stops a read whose riding count found that the workspace's
// authentication changed after the call began with a remembered
// principal: the call runs again as the key's fresh principal.
var errStale = errors.New("authentication changed during the call")

// ride runs a read whose rate count rides in its first statement (see
// db.Rider), a read authenticated from memory on Postgres: the count, the
// authentication version and the read's first rows then cost one round
// trip. The count's window goes through admit as a count before the call
// would. A call that is refused, or whose principal was stale, stops at
// its first statement; its answer is swallowed and replaced by the
// refusal, or by the call run again as the fresh principal. An answer
// written before any statement took the count (a refused parameter, say)
// first counts the call alone.
func (s *Server) ride(ctx huma.Context, next func(huma.Context), p apikit.Principal, version int64,
	admit func(rateWindow, bool) error, fresh func() apikit.Principal) {
	start := s.clock.Now().Truncate(time.Hour)
	var rc readCount
	var counted bool
	var verdict error
	rider := s.limiter.readRider(p.KeyID, p.WorkspaceID, start, &rc)
	rider.Done = func(context.Context) error {
		counted = true
		win, ok := rc.window(s.limiter, start)
		stale := win.AuthVersion != version
		verdict = admit(win, ok)
		if verdict == nil && stale {
			verdict = errStale
		}
		return verdict
	}
	rctx := &ridingContext{humaContext: huma.WithContext(ctx, db.WithRider(apikit.WithPrincipal(ctx.Context(), p), rider))}
	rctx.settle = func() error {
		// Taken here, the rider rides in no later statement. Taken by a
		// statement that failed, it counted nothing, and counts now.
		db.TakeRider(rctx.Context())
		if !counted {
			if err := s.limiter.db.RunRider(ctx.Context(), rider); !counted {
				return err
			}
		}
		return verdict
	}
	next(rctx)
	if !rctx.decided {
		rctx.decide()
	}
	switch {
	case rctx.err == nil:
	case errors.Is(rctx.err, errStale):
		next(huma.WithContext(ctx, apikit.WithPrincipal(ctx.Context(), fresh())))
	default:
		s.writeErr(ctx, rctx.err)
	}
}

// ridingContext is the context of a read whose rate count rides in its
// first statement: the operation's answer passes only once the count has
// admitted the call, and is swallowed otherwise.
type ridingContext struct {
	humaContext
	settle  func() error
	decided bool
	err     error
}

// decide settles the count, at the answer's first header at the latest,
// and reports whether the answer passes.
func (c *ridingContext) decide() bool {
	if !c.decided {
		c.decided = true
		c.err = c.settle()
	}
	return c.err == nil
}

func (c *ridingContext) SetStatus(code int) {
	if c.decide() {
		c.humaContext.SetStatus(code)
	}
}

func (c *ridingContext) SetHeader(name, value string) {
	if c.decide() {
		c.humaContext.SetHeader(name, value)
	}
}

func (c *ridingContext) AppendHeader(name, value string) {
	if c.decide() {
		c.humaContext.AppendHeader(name, value)
	}
}

func (c *ridingContext) BodyWriter() io.Writer {
	if c.decide() {
		return c.humaContext.BodyWriter()
	}
	return io.Discard
}
