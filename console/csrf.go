package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"strings"

	"github.com/leadline/leadline/apikit"
)

// Cookies. Every cookie is HttpOnly, SameSite=Lax, limited to the
// console's path, and Secure when the public URL is https; without a
// public URL, unless the request came to a loopback address over plain
// HTTP (a server on the developer's machine).
const (
	// sessionCookie holds the session token; the database keeps only its
	// hash (package workspace).
	sessionCookie = "leadline_session"
	// preCookie holds a random token for the forms shown before a session
	// exists (sign-in, invite): their CSRF token is derived from it, a
	// double submit that another site cannot read or set.
	preCookie = "leadline_pre"
	// flashCookie carries a one-time message to the next page, signed
	// with the session token.
	flashCookie = "leadline_flash"
)

// csrfField is the name of every form's CSRF field ({{template "csrf" .}});
// htmx requests may send the token as X-CSRF-Token instead.
const csrfField = "csrf"

// mac is HMAC-SHA256 of msg under key, in base64url.
func mac(key, msg string) string {
	h := hmac.New(sha256.New, []byte(key))
	h.Write([]byte(msg))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// csrfToken is the CSRF token of the forms of a session (or pre-session)
// token: derived from it, so nothing more is stored, and unknown to
// another site, which cannot read the cookie.
func csrfToken(token string) string {
	if token == "" {
		return ""
	}
	return mac(token, "leadline csrf")
}

func csrfValid(token, sent string) bool {
	want := csrfToken(token)
	return want != "" && hmac.Equal([]byte(want), []byte(sent))
}

func csrfRefusal() *apikit.Error {
	return apikit.Forbidden("The form was refused: its security token is missing or out of date.",
		"Go back, reload the page and send the form again. If you signed in or out in another tab, the page's token changed.")
}

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func cookieValue(r *http.Request, name string) string {
	if c, err := r.Cookie(name); err == nil {
		return c.Value
	}
	return ""
}

// secure reports whether the request's cookies must be Secure. With a
// public URL, its scheme says: behind a proxy that ends TLS, the request
// comes over plain HTTP to an internal address, yet the browser is on
// https. Without one, always but for plain HTTP to a loopback host.
func (c *Console) secure(r *http.Request) bool {
	if r.TLS != nil || c.publicScheme == "https" {
		return true
	}
	if c.publicScheme != "" {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

func (c *Console) setCookie(rq *Request, name, value string) {
	http.SetCookie(rq.W, &http.Cookie{Name: name, Value: value, Path: c.prefix + "/", HttpOnly: true,
		Secure: c.secure(rq.R), SameSite: http.SameSiteLaxMode})
}

func (c *Console) clearCookie(rq *Request, name string) {
	http.SetCookie(rq.W, &http.Cookie{Name: name, Value: "", Path: c.prefix + "/", MaxAge: -1, HttpOnly: true,
		Secure: c.secure(rq.R), SameSite: http.SameSiteLaxMode})
}

// preSession returns the request's pre-session token, setting a new one
// when it has none.
func (c *Console) preSession(rq *Request) string {
	if t := cookieValue(rq.R, preCookie); len(t) == 43 {
		return t
	}
	t := randomToken()
	c.setCookie(rq, preCookie, t)
	return t
}

// Flash shows msg once, on the next page the member opens (after a
// redirect).
func (rq *Request) Flash(msg string) {
	v := base64.RawURLEncoding.EncodeToString([]byte(msg))
	rq.c.setCookie(rq, flashCookie, v+"."+mac(rq.token, "flash "+v))
}

// takeFlash returns the flash the request carries, if it is this
// session's, and clears it.
func (c *Console) takeFlash(rq *Request) string {
	raw := cookieValue(rq.R, flashCookie)
	if raw == "" || rq.R.Header.Get("HX-Request") != "" {
		return ""
	}
	c.clearCookie(rq, flashCookie)
	v, sig, ok := strings.Cut(raw, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(mac(rq.token, "flash "+v))) {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return ""
	}
	return string(b)
}
