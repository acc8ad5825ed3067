// Package console is leadline's web application: server-rendered pages
// (html/template, htmx) through which members sign in and work. Every page
// acts as the signed-in member's apikit.Principal, built exactly as an API
// key's is (role and client scope), through the same domain services the
// API calls: the console adds no rule and skips none.
//
// New returns one http.Handler: `leadline serve` mounts it at /app/, and a
// Go program embedding leadline can mount it the same way. docs/CONSOLE.md
// says how to add a page.
package console

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/transports/email"
)

// DefaultPrefix is where the console is mounted unless Options say
// otherwise.
const DefaultPrefix = "/app"

// Options configure the console.
type Options struct {
	// Prefix is the path the console is mounted at, without a trailing
	// slash (default /app). The handler serves the paths under it.
	Prefix string
	// PublicURL is the server's public base URL (https://leadline.example.com),
	// the base of invite links; empty: the request's own scheme and host.
	PublicURL string
	// Logger gets the errors a page could not show (default: the
	// platform's logger).
	Logger *slog.Logger
	// SignInLimits bound failed sign-ins (default DefaultSignInLimits).
	SignInLimits SignInLimits
	// DNS answers the domain check an email sender's page shows
	// (default: the system's resolver).
	DNS email.Resolver
}

// Console is the web application on one platform.
type Console struct {
	pl      *platform.Platform
	opts    Options
	prefix  string
	mux     *http.ServeMux
	pages   *pages
	log     *slog.Logger
	limiter *signInLimiter
	// domains checks email senders' domains for their pages.
	domains *email.DomainChecker
	// publicHost is the host of Options.PublicURL, "" without one.
	publicHost string
	// publicScheme is the scheme of Options.PublicURL (http or https), ""
	// without one: the cookies' Secure follows it.
	publicScheme string
	// registered are the patterns handle registered (without the prefix),
	// with the role each needs: what the tests sweep page by page.
	registered []route
}

// route is a registered pattern ("GET /leads/{id}") and the role it needs
// ("" for the pages before sign-in).
type route struct {
	Pattern string
	Role    apikit.Role
}

// New returns the console on pl as one handler for the paths under
// opts.Prefix.
func New(pl *platform.Platform, opts Options) http.Handler {
	return newConsole(pl, opts)
}

func newConsole(pl *platform.Platform, opts Options) *Console {
	opts.Prefix = strings.TrimRight(opts.Prefix, "/")
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	opts.PublicURL = strings.TrimRight(opts.PublicURL, "/")
	if opts.Logger == nil {
		opts.Logger = pl.Logger
	}
	if opts.SignInLimits == (SignInLimits{}) {
		opts.SignInLimits = DefaultSignInLimits
	}
	c := &Console{pl: pl, opts: opts, prefix: opts.Prefix, mux: http.NewServeMux(), log: opts.Logger,
		limiter: newSignInLimiter(pl.Clock, opts.SignInLimits, pl.Workspaces),
		domains: email.NewDomainChecker(email.DomainConfig{Resolver: opts.DNS, Clock: pl.Clock})}
	if u, err := url.Parse(opts.PublicURL); err == nil {
		c.publicHost, c.publicScheme = u.Host, strings.ToLower(u.Scheme)
	}
	c.pages = loadPages(c.prefix)
	c.routes()
	return c
}

// routes registers every page. Each area registers its own routes in its
// file (console/<area>.go).
func (c *Console) routes() {
	c.mux.Handle("GET "+c.prefix+"/assets/", c.assets())
	c.mux.Handle("GET "+c.prefix, http.RedirectHandler(c.prefix+"/", http.StatusMovedPermanently))
	c.handle("GET /{$}", apikit.RoleClientViewer, c.home)
	c.handle("/", "", c.notFound)
	c.routesAuth()
	c.routesAccount()
	c.routesMembers()
	c.routesLeads()
	c.routesInbox()
	c.routesTasks()
	c.routesReports()
	c.routesSettings()
	c.routesSequences()
	c.routesSenders()
	c.routesOAuth()
}

// ServeHTTP serves a console path with the headers every console answer
// carries.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	c.mux.ServeHTTP(w, r)
}

// CSP is the Content-Security-Policy of every console answer: everything
// from this server, nothing inline, no frames, forms only to itself.
const CSP = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"

// home is the console's first page: the leads.
func (c *Console) home(rq *Request) error {
	rq.Redirect("/leads")
	return nil
}

func (c *Console) notFound(rq *Request) error {
	return apikit.Errorf(apikit.ENotFound, "Check the address, or start from the menu.", "There is no console page at %s.", rq.R.URL.Path)
}

// InviteLink is the link an invite token is used at: publicURL (or, when
// it is empty, http://127.0.0.1:8080), the console's default prefix, then
// /invite/TOKEN.
func InviteLink(publicURL, token string) string {
	base := strings.TrimRight(publicURL, "/")
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	return base + DefaultPrefix + "/invite/" + url.PathEscape(token)
}
