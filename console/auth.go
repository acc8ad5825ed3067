package console

import (
	"net"
	"net/http"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/workspace"
)

// Sign-in, sign-out and invites: the public pages. The rules (passwords,
// sessions, invites) are package workspace's; these pages hold the
// cookies.
func (c *Console) routesAuth() {
	c.handle("GET /signin", "", c.signInPage)
	c.handle("POST /signin", "", c.signIn)
	c.handle("POST /signout", apikit.RoleClientViewer, c.signOut)
	c.handle("GET /invite/{token}", "", c.invitePage)
	c.handle("POST /invite/{token}", "", c.acceptInvite)
}

type signInData struct {
	Email, Workspace, Next string
	AskWorkspace           bool
	SignedOut              bool
}

func (c *Console) signInPage(rq *Request) error {
	d := signInData{Next: c.safeNext(rq.R.URL.Query().Get("next")), SignedOut: rq.R.URL.Query().Has("out")}
	return rq.Render(http.StatusOK, "signin", page{Title: "Sign in", Data: d})
}

// safeNext is next when it is a path of the console, else "".
func (c *Console) safeNext(next string) string {
	if !strings.HasPrefix(next, c.prefix+"/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return ""
	}
	return next
}

// clientAddress is the address a request came from (the connection's:
// a proxy in front should be the only client of a private address).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (c *Console) signIn(rq *Request) error {
	r := rq.R
	in := workspace.SignInInput{Email: strings.TrimSpace(r.PostFormValue("email")), Password: r.PostFormValue("password"),
		Workspace: strings.TrimSpace(r.PostFormValue("workspace"))}
	d := signInData{Email: in.Email, Workspace: in.Workspace, Next: c.safeNext(r.PostFormValue("next")), AskWorkspace: in.Workspace != ""}
	fail := func(err error) error {
		d.AskWorkspace = d.AskWorkspace || apikit.ErrorCode(err) == apikit.EConflict
		return rq.Refuse(err, "signin", page{Title: "Sign in", Data: d})
	}
	// A slot to hash in first: a refusal then costs nothing.
	ctx, leave, err := c.pl.Workspaces.HoldPasswordSlot(r.Context())
	if err != nil {
		return fail(err)
	}
	defer leave()
	// The attempt is counted before the password is checked; a wrong
	// password or an unknown email (E_UNAUTHORIZED) leaves it counted.
	att, err := c.limiter.reserve(ctx, clientAddress(r), in.Email)
	if err != nil {
		return fail(err)
	}
	token, err := c.pl.Workspaces.SignIn(ctx, in)
	if err != nil {
		if apikit.ErrorCode(err) != apikit.EUnauthorized {
			if err := c.limiter.release(ctx, att); err != nil {
				return err
			}
		}
		return fail(err)
	}
	if err := c.limiter.succeeded(ctx, att, in.Email); err != nil {
		return err
	}
	return c.startSession(rq, token, d.Next)
}

// startSession ends the session the browser held, if any (a session id
// is never reused across a sign-in), sets the new one's cookie, and goes
// on to next (default: the console's first page).
func (c *Console) startSession(rq *Request, token, next string) error {
	if old := cookieValue(rq.R, sessionCookie); old != "" {
		if err := c.pl.Workspaces.SignOut(rq.R.Context(), old); err != nil {
			return err
		}
	}
	c.setCookie(rq, sessionCookie, token)
	c.clearCookie(rq, preCookie)
	if next == "" {
		next = c.prefix + "/"
	}
	http.Redirect(rq.W, rq.R, next, http.StatusSeeOther)
	return nil
}

func (c *Console) signOut(rq *Request) error {
	if err := c.pl.Workspaces.SignOut(rq.R.Context(), rq.token); err != nil {
		return err
	}
	c.clearCookie(rq, sessionCookie)
	c.clearCookie(rq, flashCookie)
	http.Redirect(rq.W, rq.R, c.prefix+"/signin?out", http.StatusSeeOther)
	return nil
}

type inviteData struct {
	Invite *workspace.Invite
	Min    int
}

func (c *Console) invitePage(rq *Request) error {
	inv, err := c.pl.Workspaces.InviteByToken(rq.R.Context(), rq.R.PathValue("token"))
	if err != nil {
		return err
	}
	return rq.Render(http.StatusOK, "invite", page{Title: "Set your password", Data: inviteData{Invite: inv, Min: workspace.MinPasswordLength}})
}

func (c *Console) acceptInvite(rq *Request) error {
	token := rq.R.PathValue("token")
	inv, err := c.pl.Workspaces.InviteByToken(rq.R.Context(), token)
	if err != nil {
		return err
	}
	again := func(err error) error {
		return rq.Refuse(err, "invite", page{Title: "Set your password", Data: inviteData{Invite: inv, Min: workspace.MinPasswordLength}},
			apikit.ENotFound)
	}
	password := rq.R.PostFormValue("password")
	if password != rq.R.PostFormValue("confirm") {
		return again(apikit.Invalid("The two passwords differ.", "Type the same password in both fields."))
	}
	session, err := c.pl.Workspaces.AcceptInvite(rq.R.Context(), token, password)
	if err != nil {
		return again(err)
	}
	return c.startSession(rq, session, "")
}
