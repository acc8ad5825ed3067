package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
)

type requestIDKey struct{}

// maxRequestID is the longest X-Request-Id a caller may choose.
const maxRequestID = 200

// validRequestID reports whether a caller's X-Request-Id is one the
// server keeps: 1 to 200 printable ASCII characters (spaces inside
// allowed). Anything else is replaced by a generated id.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// requestIDOf is the request id withRequestLog gave the call of ctx.
func requestIDOf(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// statusWriter remembers the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// withRequestLog gives every response an X-Request-Id (the caller's, when it
// sent a sane one), logs one structured line per request and turns a panic
// into a logged E_INTERNAL.
func (s *Server) withRequestLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if len(r.Header.Values("X-Request-Id")) != 1 || !validRequestID(id) {
			id = apikit.NewID()
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.logger.Error("panic", "request_id", id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if sw.status == 0 {
					writeEnvelope(sw, fromAPI(apikit.Internal()))
				}
			}
			s.logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
				slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", sw.status), slog.Int("bytes", sw.bytes),
				slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000), slog.String("remote", r.RemoteAddr))
		}()
		next.ServeHTTP(sw, r)
	})
}

// withEnvelopeFallback answers unknown routes and wrong methods in the
// error envelope instead of ServeMux's plain text. A wrong method is a 404
// E_NOT_FOUND (the spec's statuses have no 405) that names the allowed
// methods in its remedy and in the Allow header. Such a request made with
// a valid key counts against its budget, as every call does (see
// countUnrouted).
func (s *Server) withEnvelopeFallback(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ServeMux redirects a path that is not clean (/v1//leads,
		// /v1/leads/../me) to its cleaned form. leadline names each
		// resource by one path, so such a path is not found.
		if p := r.URL.Path; p == "" || cleanPath(p) != p {
			if s.countUnrouted(w, r) {
				writeNotFound(w, fmt.Sprintf("Route %s %s", r.Method, r.URL.EscapedPath()),
					"Send the path without empty segments, . or ..; /v1/docs lists every operation.")
			}
			return
		}
		if name, ok := strings.CutPrefix(r.URL.Path, s.schemasPath+"/"); ok && r.Method == http.MethodGet && !s.hasSchema(name) {
			writeNotFound(w, fmt.Sprintf("Schema %q", strings.TrimSuffix(name, ".json")),
				"Use a schema name from components.schemas in /v1/openapi.json.")
			return
		}
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		if !s.countUnrouted(w, r) {
			return
		}
		// Let the mux decide between 404 and 405 (and its Allow header),
		// then answer in the envelope.
		probe := &probeWriter{header: http.Header{}}
		mux.ServeHTTP(probe, r)
		if probe.status == http.StatusMethodNotAllowed {
			allow := probe.header.Get("Allow")
			w.Header().Set("Allow", allow)
			writeNotFound(w, fmt.Sprintf("Method %s on %s", r.Method, r.URL.Path),
				"This route accepts "+strings.ReplaceAll(allow, ", ", " or ")+"; /v1/docs lists every operation.")
			return
		}
		writeNotFound(w, fmt.Sprintf("Route %s %s", r.Method, r.URL.Path),
			"Check the path: every operation starts with /v1; /v1/docs lists them all.")
	})
}

// countUnrouted counts a request that matches no operation against the
// budget of the key it carries, as the guard counts every operation's
// calls: a read for GET and HEAD, a write otherwise. It sets the rate-limit
// headers, and reports whether the caller should go on to answer 404; when
// not, it has answered itself: two credentials (401) or a spent budget
// (429). A request without a valid key counts nothing and gets its 404.
func (s *Server) countUnrouted(w http.ResponseWriter, r *http.Request) bool {
	secret, err := apiKeyOf(eachHeader(r.Header))
	if err == nil && secret == "" {
		return true
	}
	if err == nil {
		p, aerr := s.workspaces.Authenticate(r.Context(), secret)
		if aerr != nil {
			return true
		}
		class := apikit.ClassWrite
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			class = apikit.ClassRead
		}
		var win rateWindow
		var ok bool
		if win, ok, err = s.limiter.take(r.Context(), p.KeyID, class); err == nil {
			err = s.applyWindow(w.Header().Set, win, ok)
		}
	}
	if err != nil {
		writeEnvelope(w, s.toStatusError(err).(*ErrorBody))
		return false
	}
	return true
}

// cleanPath is p as ServeMux would clean it: path.Clean, keeping a
// trailing slash.
func cleanPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// hasSchema reports whether the OpenAPI document has the schema a
// /v1/schemas/{name} request names (with or without ".json").
func (s *Server) hasSchema(name string) bool {
	_, ok := s.api.OpenAPI().Components.Schemas.Map()[strings.TrimSuffix(name, ".json")]
	return ok
}

type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header { return p.header }
func (p *probeWriter) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *probeWriter) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}

// writeNotFound answers 404 E_NOT_FOUND for what, with remedy.
func writeNotFound(w http.ResponseWriter, what, remedy string) {
	body := fromAPI(apikit.NotFound(what))
	body.Err.Remedy = remedy
	writeEnvelope(w, body)
}

// writeEnvelope answers with b, stamped with the request id that
// withRequestLog set on w.
func writeEnvelope(w http.ResponseWriter, b *ErrorBody) {
	b = withRequestID(b, w.Header().Get("X-Request-Id"))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(b.status)
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(b)
	_, _ = w.Write(buf.Bytes())
}
