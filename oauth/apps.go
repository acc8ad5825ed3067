// Package oauth connects mailboxes at Google and Microsoft with OAuth 2.0:
// the OAuth app a workspace registers once per provider (apps.go), the
// authorization-code flow with PKCE that connects a sender's account
// (connect.go), and the access tokens the email transport signs in with
// (tokens.go: senders.Tokens), refreshed from the sender's refresh token,
// which is kept sealed under the server's secret key. No token, client
// secret or code verifier is ever logged, answered or stored in the clear.
package oauth

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/senders"
)

// The providers leadline connects mailboxes at.
const (
	Google    = "google"
	Microsoft = "microsoft"
)

// Provider is what leadline knows of a provider's OAuth 2.0: its
// documented endpoints, the scopes IMAP and SMTP need, and the extra
// parameters of its authorization request.
type Provider struct {
	Name, Label       string
	AuthURL, TokenURL string
	Scopes            []string
	// Params are added to the authorization request.
	Params map[string]string
}

// Providers are the providers by name. Google: "Using OAuth 2.0 to Access
// Google APIs" and "IMAP, POP, and SMTP" (the XOAUTH2 protocol) name the
// endpoints and the scope https://mail.google.com/; a refresh token is
// given with access_type=offline, and again on a new consent with
// prompt=consent. Microsoft: "Authenticate an IMAP, POP or SMTP connection
// using OAuth" names the scopes, and the identity platform's
// authorization-code flow the endpoints (the common tenant; a
// single-tenant app registers its tenant's URLs as the app's auth_url and
// token_url).
var Providers = map[string]Provider{
	Google: {Name: Google, Label: "Google", AuthURL: "https://accounts.google.com/o/oauth2/v2/auth", TokenURL: "https://oauth2.googleapis.com/token",
		Scopes: []string{"https://mail.google.com/"}, Params: map[string]string{"access_type": "offline", "prompt": "consent"}},
	Microsoft: {Name: Microsoft, Label: "Microsoft", AuthURL: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
		TokenURL: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
		Scopes:   []string{"https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send", "offline_access"}},
}

// Names are the providers' names, in order.
var Names = []string{Google, Microsoft}

// ProviderOf returns the provider name, or E_PAYLOAD_INVALID.
func ProviderOf(name string) (Provider, error) {
	p, ok := Providers[name]
	if !ok {
		return Provider{}, apikit.Invalid(fmt.Sprintf("%q is not a provider leadline connects mailboxes at.", name), "Use google or microsoft.")
	}
	return p, nil
}

// App is the OAuth app a workspace registered with a provider. Its client
// secret is never shown: SecretEnv names the environment variable that
// holds it, or SecretStored says it was typed in and is kept sealed.
type App struct {
	bun.BaseModel `bun:"table:oauth_apps"`
	WorkspaceID   string    `bun:"workspace_id,pk"`
	Provider      string    `bun:"provider,pk"`
	ClientID      string    `bun:"client_id"`
	SecretEnv     *string   `bun:"secret_env"`
	Secret        *string   `bun:"secret" json:"-"`
	AuthURL       *string   `bun:"auth_url"`
	TokenURL      *string   `bun:"token_url"`
	UpdatedAt     time.Time `bun:"updated_at"`
}

// SecretStored reports whether the client secret was typed in and is
// kept sealed.
func (a *App) SecretStored() bool { return a.Secret != nil }

// Endpoints are the app's authorization and token endpoints: its own when
// it registered them, else the provider's.
func (a *App) Endpoints() (auth, token string) {
	p := Providers[a.Provider]
	return or(a.AuthURL, p.AuthURL), or(a.TokenURL, p.TokenURL)
}

// AppInput registers or changes a workspace's OAuth app. The client
// secret is SecretEnv (an environment variable's name) or Secret (typed
// in, stored sealed); with neither, a changed app keeps the one it has.
// AuthURL and TokenURL replace the provider's endpoints ("" keeps them).
type AppInput struct {
	Provider, ClientID, SecretEnv, Secret string
	AuthURL, TokenURL                     string
}

// Service keeps the workspaces' OAuth apps, the connects in progress and
// the senders' connected accounts.
type Service struct {
	db    *db.DB
	clock apikit.Clock
	key   secret.Key
	log   *slog.Logger
	// HTTPClient calls the providers' token endpoints (default: a client
	// with a 30-second timeout).
	HTTPClient *http.Client
	// Getenv reads the environment variable a client secret is named by
	// (default os.Getenv).
	Getenv func(string) string

	mu         sync.Mutex
	tokens     map[string]access
	refreshing sync.Mutex
}

// NewService returns the service on d, sealing under key.
func NewService(d *db.DB, clock apikit.Clock, key secret.Key, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{db: d, clock: clock, key: key, log: log, HTTPClient: &http.Client{Timeout: 30 * time.Second}, Getenv: os.Getenv,
		tokens: map[string]access{}}
}

// SetApp registers workspace workspaceID's OAuth app with in.Provider, or
// changes it. Returns E_PAYLOAD_INVALID for an unknown provider, a missing
// client id or secret, a secret given both ways, or an endpoint that is
// not an https URL (http on loopback only); E_CONFLICT when a secret is
// typed in on a server without a secret key. Nothing changes then.
func (svc *Service) SetApp(ctx context.Context, workspaceID string, in AppInput) (*App, error) {
	p, err := ProviderOf(in.Provider)
	if err != nil {
		return nil, err
	}
	in.ClientID = strings.TrimSpace(in.ClientID)
	if in.ClientID == "" || len(in.ClientID) > 512 || strings.ContainsFunc(in.ClientID, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, apikit.Invalid("The client id is missing or holds spaces.", fmt.Sprintf("Copy the client id of the app registered with %s.", p.Label))
	}
	if in.SecretEnv != "" && in.Secret != "" {
		return nil, apikit.Invalid("The client secret is given twice: typed in and as an environment variable.", "Give one of them.")
	}
	if err := senders.CheckEnv("client secret's environment variable", in.SecretEnv, false); err != nil {
		return nil, apikit.Invalid(strings.ToUpper(err.Error()[:1])+err.Error()[1:]+".", "Name the variable, as in GOOGLE_CLIENT_SECRET.")
	}
	for _, u := range []struct{ name, v string }{{"auth_url", in.AuthURL}, {"token_url", in.TokenURL}} {
		if err := checkEndpoint(u.name, u.v); err != nil {
			return nil, err
		}
	}
	var out *App
	err = svc.db.InTx(ctx, func(ctx context.Context) error {
		old, err := svc.App(ctx, workspaceID, p.Name)
		if err != nil && apikit.ErrorCode(err) != apikit.ENotFound {
			return err
		}
		a := &App{WorkspaceID: workspaceID, Provider: p.Name, ClientID: in.ClientID, UpdatedAt: db.Now(ctx, svc.clock),
			AuthURL: optional(in.AuthURL), TokenURL: optional(in.TokenURL)}
		switch {
		case in.Secret != "":
			if svc.key.IsZero() {
				return apikit.Conflict("This server has no secret key, so it cannot store the client secret sealed.",
					fmt.Sprintf("Set %s on the server and workers (openssl rand -base64 32), or give the secret as an environment variable.", secret.EnvKey))
			}
			sealed, err := svc.key.SealString(in.Secret, secret.OAuthAppSecrets.AAD(workspaceID, p.Name))
			if err != nil {
				return err
			}
			a.Secret = &sealed
		case in.SecretEnv != "":
			a.SecretEnv = &in.SecretEnv
		case old != nil:
			a.Secret, a.SecretEnv = old.Secret, old.SecretEnv
		default:
			return apikit.Invalid(fmt.Sprintf("The %s app needs its client secret.", p.Label),
				"Type it in (it is stored sealed), or name the environment variable that holds it.")
		}
		if _, err := svc.db.IDB(ctx).NewInsert().Model(a).On("CONFLICT (workspace_id, provider) DO UPDATE").
			Set("client_id = EXCLUDED.client_id, secret_env = EXCLUDED.secret_env, secret = EXCLUDED.secret, auth_url = EXCLUDED.auth_url, token_url = EXCLUDED.token_url, updated_at = EXCLUDED.updated_at").
			Exec(ctx); err != nil {
			return err
		}
		out = a
		return nil
	})
	return out, err
}

// or is *p, or def when p is nil.
func or(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

func optional(v string) *string {
	if v = strings.TrimSpace(v); v == "" {
		return nil
	}
	return &v
}

// checkEndpoint refuses an endpoint that is not an https URL, or http on
// loopback (a test's authorization server).
func checkEndpoint(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err == nil && u.Host != "" && u.User == nil && u.Fragment == "" {
		if u.Scheme == "https" {
			return nil
		}
		if ip := net.ParseIP(u.Hostname()); u.Scheme == "http" && (u.Hostname() == "localhost" || ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return apikit.Invalid(fmt.Sprintf("%s %q is not an https URL.", name, v), "Leave it empty for the provider's documented endpoint, or give the https URL of your tenant's.")
}

// App returns workspace workspaceID's app with provider. Returns
// E_NOT_FOUND when it has none.
func (svc *Service) App(ctx context.Context, workspaceID, provider string) (*App, error) {
	a := new(App)
	err := svc.db.IDB(ctx).NewSelect().Model(a).Where("workspace_id = ? AND provider = ?", workspaceID, provider).Scan(ctx)
	if db.IsNoRows(err) {
		label := provider
		if p, ok := Providers[provider]; ok {
			label = p.Label
		}
		return nil, apikit.Errorf(apikit.ENotFound, "A manager registers it in Settings › Mail providers, or with leadline oauth set.",
			"This workspace has no %s OAuth app.", label)
	}
	return a, err
}

// Apps returns workspace workspaceID's apps, by provider.
func (svc *Service) Apps(ctx context.Context, workspaceID string) ([]App, error) {
	var out []App
	err := svc.db.IDB(ctx).NewSelect().Model(&out).Where("workspace_id = ?", workspaceID).Order("provider").Scan(ctx)
	return out, err
}

// clientSecret is app a's client secret.
func (svc *Service) clientSecret(a *App) (string, error) {
	if a.Secret != nil {
		v, err := svc.key.OpenString(*a.Secret, secret.OAuthAppSecrets.AAD(a.WorkspaceID, a.Provider))
		if err != nil {
			return "", fmt.Errorf("the %s app's stored client secret does not open under this server's key (%v); type it again", a.Provider, err)
		}
		return v, nil
	}
	name := apikit.Deref(a.SecretEnv)
	if v := svc.Getenv(name); name != "" && v != "" {
		return v, nil
	}
	return "", fmt.Errorf("the %s app's client secret is in %s, which is not set on this server: set it and restart", a.Provider, name)
}
