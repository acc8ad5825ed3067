package console

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/server"
)

// Request is what a page handler gets: the request, the writer, and for a
// signed-in page the member's principal (also carried by Ctx, as the API's
// handlers carry a key's) and the form's CSRF token.
type Request struct {
	W http.ResponseWriter
	R *http.Request
	// P is the signed-in member as a principal: their workspace, role
	// and client scope. The zero Principal on public pages.
	P apikit.Principal
	// Ctx is the request's context carrying P: pass it to the services.
	Ctx context.Context

	c *Console
	// token is the session token (signed-in pages) or the pre-session
	// token (public pages), which the CSRF token is derived from.
	token string
	csrf  string
	flash string
	// refused is the refusal of a query parameter the page is shown
	// without, or of the form whose page this is (input.go); rendering
	// is set while a page is written.
	refused   *apikit.Error
	rendering bool
}

// handler is a page: it writes an answer through rq (Render, Redirect)
// or returns an error, which is shown with its message and remedy (an
// *apikit.Error) or as an internal error (any other, logged).
type handler func(rq *Request) error

// handle registers h at pattern ("METHOD /path", the path under the
// prefix). A role makes the page need a session whose member holds at
// least that role, the role the API asks for the same action; "" makes it
// public. Every method but GET and HEAD needs the form's CSRF token.
func (c *Console) handle(pattern string, role apikit.Role, h handler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	c.registered = append(c.registered, route{Pattern: pattern, Role: role})
	full := c.prefix + path
	if method != "" {
		full = method + " " + full
	}
	c.mux.HandleFunc(full, func(w http.ResponseWriter, r *http.Request) {
		rq := &Request{W: w, R: r, Ctx: r.Context(), c: c}
		if err := c.serve(rq, role, h); err != nil {
			rq.Fail(err)
		}
	})
}

func (c *Console) serve(rq *Request, role apikit.Role, h handler) error {
	r := rq.R
	write := r.Method != http.MethodGet && r.Method != http.MethodHead
	rq.W.Header().Set("Cache-Control", "no-store")
	if role == "" {
		rq.token = c.preSession(rq)
	} else {
		token := cookieValue(r, sessionCookie)
		p, err := c.pl.Workspaces.SessionPrincipal(r.Context(), token)
		if err != nil {
			if apikit.ErrorCode(err) == apikit.EUnauthorized {
				c.clearCookie(rq, sessionCookie)
				c.toSignIn(rq)
				return nil
			}
			return err
		}
		rq.P, rq.Ctx, rq.token = p, apikit.WithPrincipal(r.Context(), p), token
		if !p.Role.AtLeast(role) {
			return roleRefusal(role, p)
		}
	}
	rq.csrf = csrfToken(rq.token)
	if write {
		if err := c.checkWrite(rq); err != nil {
			return err
		}
	}
	if answered, err := rq.checkInput(write); answered || err != nil {
		return err
	}
	rq.flash = c.takeFlash(rq)
	return h(rq)
}

// roleRefusal is the API's refusal of an action that needs role, as the
// member sees it.
func roleRefusal(role apikit.Role, p apikit.Principal) error {
	return apikit.Forbidden(fmt.Sprintf("This needs the %s role; you are a %s.", role, p.Role),
		"Ask a manager of the workspace to do it, or to change your role.")
}

// checkWrite refuses a write whose form lacks the CSRF token, or that
// another site's page sent: its Origin, when the browser sends one, must
// be the request's host or the public URL's (a proxy in front may pass
// another Host).
func (c *Console) checkWrite(rq *Request) error {
	r := rq.R
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		if u, err := url.Parse(o); err != nil || (u.Host != r.Host && u.Host != c.publicHost) {
			return csrfRefusal()
		}
	}
	r.Body = http.MaxBytesReader(rq.W, r.Body, maxForm+64<<10)
	if err := r.ParseMultipartForm(maxForm); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		return apikit.Invalid("The form could not be read: it is too large or malformed.",
			fmt.Sprintf("Send at most %d MiB; split a larger CSV file, or use `leadline import`.", maxForm>>20))
	}
	sent := r.PostFormValue(csrfField)
	if sent == "" {
		sent = r.Header.Get("X-CSRF-Token")
	}
	if !csrfValid(rq.token, sent) {
		return csrfRefusal()
	}
	return nil
}

// maxForm is the largest file the console reads (a CSV upload), the API's
// largest body; a form may be 64 KiB larger.
const maxForm = 2 << 20

// toSignIn sends a visitor without a session to the sign-in page, back
// to where they were going after it.
func (c *Console) toSignIn(rq *Request) {
	next := ""
	if rq.R.Method == http.MethodGet && rq.R.Header.Get("HX-Request") == "" {
		next = rq.R.URL.RequestURI()
	}
	target := c.prefix + "/signin"
	if next != "" && next != c.prefix+"/" {
		target += "?next=" + url.QueryEscape(next)
	}
	if rq.R.Header.Get("HX-Request") != "" {
		rq.W.Header().Set("HX-Redirect", target)
		rq.W.WriteHeader(http.StatusUnauthorized)
		return
	}
	http.Redirect(rq.W, rq.R, target, http.StatusSeeOther)
}

// Can reports whether the signed-in member holds at least role: pages
// show write controls only to those who may use them.
func (rq *Request) Can(role apikit.Role) bool { return rq.P.Role.AtLeast(role) }

// Path is the console's path of p (a path under the prefix, like
// "/leads").
func (rq *Request) Path(p string) string { return rq.c.prefix + p }

// Redirect answers a form with a redirect to the console path p (303: the
// browser then GETs it). An htmx request is told through HX-Redirect.
func (rq *Request) Redirect(p string) {
	if rq.R.Header.Get("HX-Request") != "" {
		rq.W.Header().Set("HX-Redirect", rq.Path(p))
		rq.W.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(rq.W, rq.R, rq.Path(p), http.StatusSeeOther)
}

// Refuse shows the form page name again (pg), with err's message and
// remedy and the status the API gives its code. An internal error, or one
// whose code is among pass (a page that is not there, say), is returned
// instead, for Fail to show on its own.
func (rq *Request) Refuse(err error, name string, pg page, pass ...string) error {
	ae := apikit.AsError(err)
	if ae.Code == apikit.EInternal || slices.Contains(pass, ae.Code) {
		return err
	}
	pg.Error = ae
	rq.retryAfter(err)
	return rq.Render(StatusOf(ae.Code), name, pg)
}

// retryAfter sets Retry-After, in whole seconds, when err says how long
// to wait (apikit.WithRetryAfter).
func (rq *Request) retryAfter(err error) {
	if d, ok := apikit.RetryAfter(err); ok {
		rq.W.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
	}
}

// Fail shows err: an *apikit.Error with its message and remedy and the
// status the API gives its code; any other error as E_INTERNAL, logged
// with its cause.
func (rq *Request) Fail(err error) {
	ae := apikit.AsError(err)
	if ae.Code == apikit.EInternal {
		rq.c.log.Error("console", "path", rq.R.URL.Path, "err", err)
	}
	status := StatusOf(ae.Code)
	rq.retryAfter(err)
	if rq.R.Header.Get("HX-Request") != "" {
		// htmx swaps 2xx answers only: the error box replaces the
		// target, and says what went wrong.
		rq.W.Header().Set("HX-Retarget", "#htmx-error")
		rq.W.Header().Set("HX-Reswap", "innerHTML")
		rq.renderBlock(http.StatusOK, "error", "error-box", ae)
		return
	}
	rq.render(status, "error", page{Title: errorTitle(ae.Code), Error: ae})
}

// StatusOf is the HTTP status the API answers an error code with.
var StatusOf = server.StatusOf

func errorTitle(code string) string {
	switch code {
	case apikit.ENotFound:
		return "Not found"
	case apikit.EForbidden:
		return "Not allowed"
	case apikit.EInternal:
		return "Something went wrong"
	}
	return "That did not work"
}
