package unipile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/leadline/leadline/senders"
)

// apiKey is the key the fake Unipile accepts.
const apiKey = "test-key-not-a-secret"

// request is one call the fake received.
type request struct {
	Method, Path, Query, Key string
	Body                     map[string]any
}

// answer is a scripted answer: a status, a testdata file and headers.
type answer struct {
	status int
	file   string
	header map[string]string
	hangUp bool // close the connection without answering
	body   string
}

// fakeUnipile is an httptest server that answers as Unipile's v2 API is
// documented, with the examples in testdata/.
type fakeUnipile struct {
	t   *testing.T
	srv *httptest.Server
	mux *http.ServeMux

	mu       sync.Mutex
	requests []request
	// scripted answers by "METHOD /path", used once each, in order.
	scripted map[string][]answer
}

func newFake(t *testing.T) *fakeUnipile {
	f := &fakeUnipile{t: t, mux: http.NewServeMux(), scripted: map[string][]answer{}}
	routes := map[string]answer{
		"GET /v2/{acc}/users/{id}":                              {200, "user_profile.json", nil, false, ""},
		"POST /v2/{acc}/users/visit-profile":                    {200, "profile_visited.json", nil, false, ""},
		"POST /v2/{acc}/users/me/relation-requests":             {201, "relation_request.json", nil, false, ""},
		"GET /v2/{acc}/users/me/relation-requests":              {200, "relation_requests_sent.json", nil, false, ""},
		"POST /v2/{acc}/users/me/relation-requests/{id}/cancel": {200, "", nil, false, `{"object":"RelationRequestCanceled"}`},
		"GET /v2/{acc}/users/me/relations":                      {200, "relations.json", nil, false, ""},
		"POST /v2/{acc}/users/me/follow/{id}":                   {200, "follow.json", nil, false, ""},
		"POST /v2/{acc}/inboxes/CLASSIC_PRIMARY/chats/send":     {200, "chat_started.json", nil, false, ""},
		"POST /v2/{acc}/chats/{chat}/messages/send":             {200, "message_sent.json", nil, false, ""},
		"GET /v2/{acc}/chats/{chat}/messages":                   {200, "messages.json", nil, false, ""},
		"GET /v2/{acc}/users/{id}/chat":                         {200, "user_chat.json", nil, false, ""},
		"GET /v2/acc_ann/chats":                                 {200, "chats.json", nil, false, ""},
		"GET /v2/accounts/{acc}":                                {200, "account.json", nil, false, ""},
	}
	for pattern, a := range routes {
		f.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			// A conversation with its own example answers with it.
			if chat := r.PathValue("chat"); chat != "" && r.Method == http.MethodGet {
				if _, err := os.Stat(filepath.Join("testdata", "messages_"+chat+".json")); err == nil {
					a.file = "messages_" + chat + ".json"
				}
			}
			f.write(w, a)
		})
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// script makes the next call to "METHOD /path" answer a.
func (f *fakeUnipile) script(route string, as ...answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripted[route] = append(f.scripted[route], as...)
}

func (f *fakeUnipile) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Key: r.Header.Get("X-API-KEY")}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &req.Body); err != nil {
			f.t.Errorf("%s %s: body is not JSON: %s", r.Method, r.URL.Path, body)
		}
		if r.Header.Get("Content-Type") != "application/json" {
			f.t.Errorf("%s %s: Content-Type %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	route := r.Method + " " + r.URL.Path
	var a *answer
	if as := f.scripted[route]; len(as) > 0 {
		a, f.scripted[route] = &as[0], as[1:]
	}
	f.mu.Unlock()
	if req.Key != apiKey {
		f.write(w, answer{status: 401, file: "error_401_api_key.json"})
		return
	}
	if a != nil {
		f.write(w, *a)
		return
	}
	f.mux.ServeHTTP(w, r)
}

func (f *fakeUnipile) write(w http.ResponseWriter, a answer) {
	if a.hangUp {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	if a.file != "" {
		_, _ = w.Write(testdata(f.t, a.file))
	}
	if a.body != "" {
		_, _ = w.Write([]byte(a.body))
	}
}

// calls returns the requests received so far, and forgets them.
func (f *fakeUnipile) calls() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.requests
	f.requests = nil
	return out
}

func routes(rs []request) []string {
	var out []string
	for _, r := range rs {
		s := r.Method + " " + r.Path
		if r.Query != "" {
			s += "?" + r.Query
		}
		out = append(out, s)
	}
	return out
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// creds are credentials from a map.
type creds map[string]string

func (c creds) Secret(_ context.Context, s *senders.Sender, name string) (string, error) {
	if v, ok := c[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("%w: %s", senders.ErrCredentialsMissing, name)
}

// sink records what polling pushes.
type sink struct {
	mu     sync.Mutex
	pushed map[string]senders.Inbound
	order  []string
}

func (s *sink) PushReport(_ context.Context, workspaceID, source, dedupe string, in senders.Inbound) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := workspaceID + "|" + source + "|" + dedupe
	if _, ok := s.pushed[key]; ok {
		return false, nil
	}
	s.pushed[key] = in
	s.order = append(s.order, dedupe)
	return true, nil
}
