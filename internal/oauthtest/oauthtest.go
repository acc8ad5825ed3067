// Package oauthtest is a small OAuth 2.0 authorization server on loopback
// for tests: the authorization endpoint (RFC 6749 4.1, approving at once
// as the account a test names, with PKCE, RFC 7636), the token endpoint
// (authorization_code and refresh_token grants, errors as RFC 6749 5.2),
// revocation (RFC 7009) and introspection (RFC 7662), which the test
// Dovecot asks to check XOAUTH2 and OAUTHBEARER tokens. Tokens expire by
// the test's clock.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
)

// Server is an authorization server on loopback.
type Server struct {
	// URL is its base (http://127.0.0.1:port); the endpoints are
	// URL+"/authorize", "/token", "/revoke" and "/introspect".
	URL string
	// ClientID and ClientSecret are the one client it knows.
	ClientID, ClientSecret string
	// AccessTTL is how long an access token lasts (default an hour).
	AccessTTL time.Duration
	// Rotate makes each refresh give a new refresh token (as Microsoft's
	// does) and retire the old one.
	Rotate bool

	clock apikit.Clock
	srv   *http.Server

	mu sync.Mutex
	// account is who approves at the authorization endpoint ("" refuses
	// with access_denied).
	account string
	codes   map[string]*grant
	access  map[string]*grant
	refresh map[string]*grant
	// refreshes counts the refresh_token grants asked for.
	refreshes int
}

// grant is what a code or token stands for.
type grant struct {
	account, scope, redirect, challenge string
	expires                             time.Time
	// parent is the refresh token an access token came from.
	parent string
}

// Start starts a server on a free loopback port; it stops when the test
// ends.
func Start(t testing.TB, clock apikit.Clock) *Server {
	t.Helper()
	return StartAt(t, clock, "127.0.0.1:0")
}

// StartAt starts a server on addr (a fixed loopback port, where the test
// Dovecot's introspection_url points).
func StartAt(t testing.TB, clock apikit.Clock, addr string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("oauthtest: %v", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ClientID: "leadline-test-client", ClientSecret: "leadline-test-secret",
		AccessTTL: time.Hour, clock: clock, codes: map[string]*grant{}, access: map[string]*grant{}, refresh: map[string]*grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /revoke", s.revoke)
	mux.HandleFunc("POST /introspect", s.introspect)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// Approve makes the authorization endpoint approve as account ("":
// refuse with access_denied).
func (s *Server) Approve(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.account = account
}

// Refreshes is how many refresh_token grants the server was asked for
// (refused ones too).
func (s *Server) Refreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes
}

// RevokeAccount revokes every token of account, as an account's owner
// withdrawing consent does.
func (s *Server) RevokeAccount(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range []map[string]*grant{s.access, s.refresh} {
		for k, g := range m {
			if g.account == account {
				delete(m, k)
			}
		}
	}
}

// ExpireAccess ends every access token now (the server refuses them
// before their time, as after a password change).
func (s *Server) ExpireAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// authorize approves at once: it sends the browser back to redirect_uri
// with a code (or with an error, as RFC 6749 4.1.2.1 says).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect := q.Get("redirect_uri")
	if q.Get("client_id") != s.ClientID {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	u, err := url.Parse(redirect)
	if err != nil || redirect == "" {
		http.Error(w, "invalid redirect_uri", http.StatusBadRequest)
		return
	}
	back := u.Query()
	back.Set("state", q.Get("state"))
	s.mu.Lock()
	account := s.account
	switch {
	case q.Get("response_type") != "code":
		back.Set("error", "unsupported_response_type")
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		back.Set("error", "invalid_request")
		back.Set("error_description", "PKCE with S256 is required")
	case account == "":
		back.Set("error", "access_denied")
	default:
		code := random()
		s.codes[code] = &grant{account: account, scope: q.Get("scope"), redirect: redirect, challenge: q.Get("code_challenge"),
			expires: s.clock.Now().Add(10 * time.Minute)}
		back.Set("code", code)
	}
	s.mu.Unlock()
	u.RawQuery = back.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// fail answers a token request with an RFC 6749 5.2 error.
func fail(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description})
}

// client checks the client's credentials, in the body or in Basic.
func (s *Server) client(r *http.Request) bool {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	return subtle.ConstantTimeCompare([]byte(id), []byte(s.ClientID)) == 1 && subtle.ConstantTimeCompare([]byte(secret), []byte(s.ClientSecret)) == 1
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		fail(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	if !s.client(r) {
		fail(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var g *grant
	rt := ""
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code := r.PostForm.Get("code")
		g = s.codes[code]
		delete(s.codes, code) // a code is used once
		if g == nil || !g.expires.After(now) || g.redirect != r.PostForm.Get("redirect_uri") {
			fail(w, http.StatusBadRequest, "invalid_grant", "the code is unknown, used, expired or for another redirect_uri")
			return
		}
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			fail(w, http.StatusBadRequest, "invalid_grant", "the code_verifier does not match the code_challenge")
			return
		}
		rt = random()
		s.refresh[rt] = &grant{account: g.account, scope: g.scope}
	case "refresh_token":
		old := r.PostForm.Get("refresh_token")
		g = s.refresh[old]
		s.refreshes++
		if g == nil {
			fail(w, http.StatusBadRequest, "invalid_grant", "the refresh token is unknown or revoked")
			return
		}
		rt = old
		if s.Rotate {
			delete(s.refresh, old)
			rt = random()
			s.refresh[rt] = g
		}
	default:
		fail(w, http.StatusBadRequest, "unsupported_grant_type", "authorization_code or refresh_token")
		return
	}
	at := random()
	s.access[at] = &grant{account: g.account, scope: g.scope, expires: now.Add(s.AccessTTL), parent: rt}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(s.AccessTTL.Seconds()),
		"refresh_token": rt, "scope": g.scope})
}

// revoke revokes a token (RFC 7009): a refresh token takes its access
// tokens along. An unknown token is answered 200 too.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("token") == "" {
		fail(w, http.StatusBadRequest, "invalid_request", "token is required")
		return
	}
	if !s.client(r) {
		fail(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	tok := r.PostForm.Get("token")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.refresh[tok]; ok {
		delete(s.refresh, tok)
		for k, g := range s.access {
			if g.parent == tok {
				delete(s.access, k)
			}
		}
	}
	delete(s.access, tok)
	w.WriteHeader(http.StatusOK)
}

// introspect says whether an access token is active and whose it is
// (RFC 7662), with the account as username and email (Dovecot's
// username_attribute).
func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		fail(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	tok := r.PostForm.Get("token")
	if tok == "" {
		// Dovecot's GET modes put it in the query or the header.
		tok = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	s.mu.Lock()
	g := s.access[tok]
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if g == nil || !g.expires.After(s.clock.Now()) {
		_ = json.NewEncoder(w).Encode(map[string]any{"active": false})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"active": true, "scope": g.scope, "client_id": s.ClientID, "token_type": "Bearer",
		"username": g.account, "email": g.account, "exp": g.expires.Unix()})
}

// DovecotAddr is where the test Dovecot asks to introspect tokens
// (.ci/mail/oauth2.conf.ext): a fixed loopback port.
const DovecotAddr = "127.0.0.1:10090"

// StartForDovecot starts a server at DovecotAddr, where the test Dovecot
// checks XOAUTH2 and OAUTHBEARER tokens. One test at a time holds the
// port, across processes (go test runs packages at once): it waits for a
// lock file that the test before it holds until it ends.
func StartForDovecot(t testing.TB, clock apikit.Clock) *Server {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "leadline-oauthtest-10090.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("oauthtest: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("oauthtest: lock: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
	return StartAt(t, clock, DovecotAddr)
}
