package console

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/oauth"
	"github.com/leadline/leadline/senders"
)

// Mailboxes at Google and Microsoft, connected with OAuth 2.0 (package
// oauth): Settings › Mail providers registers the workspace's OAuth app
// with each provider (as `leadline oauth set`); a mailbox's page connects
// its account ("Connect Google account": the authorization-code flow with
// PKCE, its state bound to the member's session), and the provider sends
// the browser back to /oauth/callback, a public page (the browser of
// `leadline senders connect` may hold no session; a state bound to a
// session is finished in that session only).
func (c *Console) routesOAuth() {
	c.handle("GET /settings/mail", apikit.RoleManager, c.mailProvidersPage)
	c.handle("POST /settings/mail", apikit.RoleManager, c.setMailProvider)
	c.handle("GET /senders/{id}/connect/{provider}", apikit.RoleManager, c.connectSender)
	c.handle("GET /oauth/callback", "", c.oauthCallback)
}

// CallbackPath is where a provider sends the browser back, under the
// console's prefix.
const CallbackPath = "/oauth/callback"

// CallbackURL is the redirect URI to register with a provider: publicURL
// (the server's public base) and the console's default prefix.
func CallbackURL(publicURL string) string {
	return strings.TrimRight(publicURL, "/") + DefaultPrefix + CallbackPath
}

// callbackURL is the redirect URI of a connect started by r: the public
// URL's, else the request's own scheme and host.
func (c *Console) callbackURL(r *http.Request) string {
	base := c.opts.PublicURL
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return base + c.prefix + CallbackPath
}

// mailProvider is one provider's row of Settings › Mail providers.
type mailProvider struct {
	oauth.Provider
	App *oauth.App
	// Form is what was typed, kept when the app is refused.
	Form oauth.AppInput
}

type mailProvidersData struct {
	Providers []mailProvider
	// Callback is the redirect URI to register with the providers.
	Callback string
}

func (c *Console) mailProvidersData(rq *Request) (*mailProvidersData, error) {
	apps, err := c.pl.OAuth.Apps(rq.Ctx, rq.P.WorkspaceID)
	if err != nil {
		return nil, err
	}
	d := &mailProvidersData{Callback: c.callbackURL(rq.R)}
	for _, name := range oauth.Names {
		mp := mailProvider{Provider: oauth.Providers[name]}
		for i := range apps {
			if apps[i].Provider == name {
				a := apps[i]
				mp.App = &a
				mp.Form = oauth.AppInput{ClientID: a.ClientID, SecretEnv: apikit.Deref(a.SecretEnv), AuthURL: apikit.Deref(a.AuthURL), TokenURL: apikit.Deref(a.TokenURL)}
			}
		}
		d.Providers = append(d.Providers, mp)
	}
	return d, nil
}

func (c *Console) mailProvidersPage(rq *Request) error {
	if err := unscoped(rq.P); err != nil {
		return err
	}
	d, err := c.mailProvidersData(rq)
	if err != nil {
		return err
	}
	return rq.renderSettings(http.StatusOK, "mail", page{Data: d})
}

// setMailProvider registers or changes one provider's app, as `leadline
// oauth set` does. A typed client secret is stored sealed and never shown
// again, not even when the form is refused.
func (c *Console) setMailProvider(rq *Request) error {
	if err := unscoped(rq.P); err != nil {
		return err
	}
	f := rq.R.PostForm
	in := oauth.AppInput{Provider: f.Get("provider"), ClientID: f.Get("client_id"), SecretEnv: strings.TrimSpace(f.Get("secret_env")),
		Secret: f.Get("secret"), AuthURL: f.Get("auth_url"), TokenURL: f.Get("token_url")}
	if _, err := c.pl.OAuth.SetApp(rq.Ctx, rq.P.WorkspaceID, in); err != nil {
		ae, err := refused(err)
		if err != nil {
			return err
		}
		d, derr := c.mailProvidersData(rq)
		if derr != nil {
			return derr
		}
		in.Secret = ""
		for i := range d.Providers {
			if d.Providers[i].Name == in.Provider {
				d.Providers[i].Form = in
			}
		}
		return rq.renderSettings(StatusOf(ae.Code), "mail", page{Data: d, Error: ae})
	}
	rq.Flash(fmt.Sprintf("The %s app is saved.", oauth.Providers[in.Provider].Label))
	rq.Redirect("/settings/mail")
	return nil
}

// connectSender starts connecting a mailbox's account: the browser goes
// to the provider, which sends it back to the callback.
func (c *Console) connectSender(rq *Request) error {
	s, err := c.visibleSender(rq)
	if err != nil {
		return err
	}
	link, _, err := c.pl.OAuth.Begin(rq.Ctx, s, rq.R.PathValue("provider"), oauth.Bind(rq.token), c.callbackURL(rq.R))
	if err != nil {
		return err
	}
	http.Redirect(rq.W, rq.R, link, http.StatusSeeOther)
	return nil
}

type connectedData struct {
	Sender   *senders.Sender
	Provider string
	// InConsole: the browser holds a console session (else the connect
	// was the command line's, which is told).
	InConsole bool
}

// oauthCallback finishes a connect: the provider sent the browser back
// with a code (or its refusal) and the state.
func (c *Console) oauthCallback(rq *Request) error {
	q := rq.R.URL.Query()
	session := cookieValue(rq.R, sessionCookie)
	bound := ""
	if session != "" {
		bound = oauth.Bind(session)
	}
	errCode := q.Get("error")
	if d := q.Get("error_description"); errCode != "" && d != "" {
		errCode += ": " + d
	}
	id, err := c.pl.OAuth.Finish(rq.Ctx, q.Get("state"), bound, q.Get("code"), errCode)
	if err != nil {
		return err
	}
	s, err := c.pl.AccountConnected(rq.Ctx, id)
	if err != nil {
		return err
	}
	conn, err := c.pl.OAuth.Connection(rq.Ctx, id)
	if err != nil {
		return err
	}
	d := connectedData{Sender: s, Provider: oauth.Providers[conn.Provider].Label, InConsole: session != ""}
	return rq.Render(http.StatusOK, "oauth_connected", page{Title: "Account connected", Data: d})
}
