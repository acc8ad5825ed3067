package console

import (
	"net/http"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/workspace"
)

// The account page: the signed-in member's own email, role and clients,
// and a form to change the password. Every role has it; the rule is
// workspace.Service.ChangePassword's. A member who forgot the password
// gets a new invite link from a manager (`leadline members invite`, or
// the members page), which sets it the same way.
func (c *Console) routesAccount() {
	c.handle("GET /account", apikit.RoleClientViewer, c.accountPage)
	c.handle("POST /account/password", apikit.RoleClientViewer, c.changePassword)
}

type accountData struct {
	Min int
}

func (c *Console) accountPage(rq *Request) error {
	return rq.Render(http.StatusOK, "account", page{Title: "Your account", Nav: "account", Data: accountData{Min: workspace.MinPasswordLength}})
}

// changePassword checks the current password against the sign-in
// limits of the member's account (a session left open somewhere must not
// become a way to guess it), changes it, and carries on in the new
// session: the change ended every other one.
func (c *Console) changePassword(rq *Request) error {
	r := rq.R
	again := func(err error) error {
		return rq.Refuse(err, "account", page{Title: "Your account", Nav: "account", Data: accountData{Min: workspace.MinPasswordLength}})
	}
	password := r.PostFormValue("password")
	if password != r.PostFormValue("confirm") {
		return again(apikit.Invalid("The two new passwords differ.", "Type the same new password in both fields."))
	}
	// A slot to hash in first, as sign-in does; then the attempt is
	// counted before the current password is checked, and a wrong one
	// leaves it counted.
	ctx, leave, err := c.pl.Workspaces.HoldPasswordSlot(rq.Ctx)
	if err != nil {
		return again(err)
	}
	defer leave()
	att, err := c.limiter.reserve(ctx, clientAddress(r), rq.P.MemberEmail)
	if err != nil {
		return again(err)
	}
	token, err := c.pl.Workspaces.ChangePassword(ctx, rq.P, r.PostFormValue("current"), password)
	if err != nil {
		if !workspace.IsCurrentPasswordWrong(err) {
			if err := c.limiter.release(ctx, att); err != nil {
				return err
			}
		}
		return again(err)
	}
	if err := c.limiter.succeeded(ctx, att, rq.P.MemberEmail); err != nil {
		return err
	}
	c.setCookie(rq, sessionCookie, token)
	rq.token = token
	rq.Flash("Your password is changed. Every other session of yours is signed out.")
	rq.Redirect("/account")
	return nil
}
