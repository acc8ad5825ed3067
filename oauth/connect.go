package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/oauth2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/senders"
)

// StateTTL is how long a connect link can be followed.
const StateTTL = 15 * time.Minute

// BoundCLI is what a connect started by `leadline senders connect` is
// bound to: the command holds its state and waits for it, so the browser
// that follows the link needs no console session.
const BoundCLI = "cli"

// Bind is what a connect started in a console session is bound to: a
// hash of the session's token, so that only the browser holding that
// session can finish it.
func Bind(session string) string {
	sum := sha256.Sum256([]byte("leadline oauth state binding\x00" + session))
	return hex.EncodeToString(sum[:])
}

// stateRow is a connect in progress.
type stateRow struct {
	bun.BaseModel `bun:"table:oauth_states"`
	ID            string     `bun:"id,pk"`
	WorkspaceID   string     `bun:"workspace_id"`
	SenderID      string     `bun:"sender_id"`
	Provider      string     `bun:"provider"`
	BoundTo       string     `bun:"bound_to"`
	Verifier      *string    `bun:"verifier"`
	RedirectURI   string     `bun:"redirect_uri"`
	CreatedAt     time.Time  `bun:"created_at"`
	ExpiresAt     time.Time  `bun:"expires_at"`
	FinishedAt    *time.Time `bun:"finished_at"`
	Error         *string    `bun:"error"`
}

// stateID is the id a state parameter is stored under: its hash, so that
// a copy of the database cannot finish a connect.
func stateID(state string) string {
	sum := sha256.Sum256([]byte(state))
	return hex.EncodeToString(sum[:])
}

// config is app a's OAuth 2.0 client, redirected to redirectURI.
func (svc *Service) config(a *App, redirectURI string) (*oauth2.Config, error) {
	cs, err := svc.clientSecret(a)
	if err != nil {
		return nil, err
	}
	auth, token := a.Endpoints()
	return &oauth2.Config{ClientID: a.ClientID, ClientSecret: cs, RedirectURL: redirectURI, Scopes: Providers[a.Provider].Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: auth, TokenURL: token, AuthStyle: oauth2.AuthStyleInParams}}, nil
}

// Begin starts connecting sender s's account at provider: it returns the
// provider's authorization URL, which asks for the scopes IMAP and SMTP
// need with a PKCE challenge (S256) and a new state, and the state itself
// (the command line waits for it with Status). boundTo is Bind of the
// console session, or BoundCLI; redirectURI is the public URL of
// /app/oauth/callback. Returns E_PAYLOAD_INVALID for an unknown provider
// or a sender that is not a mailbox, E_NOT_FOUND when the workspace has no
// app with the provider, and E_CONFLICT when its client secret cannot be
// read or the server has no secret key.
func (svc *Service) Begin(ctx context.Context, s *senders.Sender, provider, boundTo, redirectURI string) (authURL, state string, err error) {
	p, err := ProviderOf(provider)
	if err != nil {
		return "", "", err
	}
	if s.Channel != senders.Email {
		return "", "", apikit.Invalid(fmt.Sprintf("Sender %q is not a mailbox.", s.Name), "Connect a Google or Microsoft account to an email sender.")
	}
	if svc.key.IsZero() {
		return "", "", apikit.Conflict("This server has no secret key, so it cannot keep the account's refresh token sealed.",
			fmt.Sprintf("Set %s on the server and workers (openssl rand -base64 32) and restart them.", secret.EnvKey))
	}
	a, err := svc.App(ctx, s.WorkspaceID, p.Name)
	if err != nil {
		return "", "", err
	}
	cfg, err := svc.config(a, redirectURI)
	if err != nil {
		return "", "", apikit.Conflict(fmt.Sprintf("The %s app cannot be used: %v.", p.Label, err), "Fix the app in Settings › Mail providers, or with leadline oauth set.")
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", "", err
	}
	state = base64.RawURLEncoding.EncodeToString(raw)
	verifier := oauth2.GenerateVerifier()
	id := stateID(state)
	sealed, err := svc.key.SealString(verifier, secret.OAuthVerifiers.AAD(id))
	if err != nil {
		return "", "", err
	}
	now := db.Now(ctx, svc.clock)
	row := &stateRow{ID: id, WorkspaceID: s.WorkspaceID, SenderID: s.ID, Provider: p.Name, BoundTo: boundTo, Verifier: &sealed,
		RedirectURI: redirectURI, CreatedAt: now, ExpiresAt: now.Add(StateTTL)}
	if _, err := svc.db.IDB(ctx).NewInsert().Model(row).Exec(ctx); err != nil {
		return "", "", err
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	for k, v := range p.Params {
		opts = append(opts, oauth2.SetAuthURLParam(k, v))
	}
	if s.Address != nil {
		opts = append(opts, oauth2.SetAuthURLParam("login_hint", *s.Address))
	}
	return cfg.AuthCodeURL(state, opts...), state, nil
}

// Finish ends the connect of state: the provider sent the browser back
// with code (or with errCode, its refusal). It exchanges the code with the
// PKCE verifier, keeps the refresh token sealed as the sender's, and
// returns the sender's id. A state is used once.
// Returns E_NOT_FOUND for a state that is unknown, used or expired;
// E_FORBIDDEN when boundTo is not what the connect was bound to (another
// console session); E_PAYLOAD_INVALID when the provider refused or gave
// no refresh token; E_CONFLICT when the token endpoint refused the code.
func (svc *Service) Finish(ctx context.Context, state, boundTo, code, errCode string) (string, error) {
	row := new(stateRow)
	err := svc.db.IDB(ctx).NewSelect().Model(row).Where("id = ?", stateID(state)).Scan(ctx)
	now := svc.clock.Now()
	if db.IsNoRows(err) || err == nil && (row.FinishedAt != nil || !row.ExpiresAt.After(now)) {
		return "", errLinkGone()
	}
	if err != nil {
		return "", err
	}
	if row.BoundTo != BoundCLI && row.BoundTo != boundTo {
		return "", apikit.Forbidden("This connect was started in another console session.", "Start it again from the sender's page in this browser.")
	}
	label := Providers[row.Provider].Label
	fail := func(e *apikit.Error) (string, error) {
		msg := e.Message
		if _, err := svc.db.IDB(ctx).NewUpdate().Model(row).Set("finished_at = ?, error = ?, verifier = NULL", now, msg).WherePK().Exec(ctx); err != nil {
			return "", err
		}
		return "", e
	}
	if errCode != "" || code == "" {
		if errCode == "" {
			errCode = "no code"
		}
		why := fmt.Sprintf("%s did not connect the account (%s).", label, oneLine(errCode, 80))
		if strings.HasPrefix(errCode, "access_denied") {
			why = fmt.Sprintf("Access to the account was refused at %s (%s), so nothing was connected.", label, oneLine(errCode, 80))
		}
		return fail(apikit.Invalid(why, "Start again from the sender's page (Connect account) and allow leadline to read and send the mailbox's mail; "+
			"if the provider does not offer that, an admin of the account's organisation must allow the app first."))
	}
	verifier, err := svc.key.OpenString(apikit.Deref(row.Verifier), secret.OAuthVerifiers.AAD(row.ID))
	if err != nil {
		return "", fmt.Errorf("oauth: the connect's verifier does not open: %w", err)
	}
	a, err := svc.App(ctx, row.WorkspaceID, row.Provider)
	if err != nil {
		return fail(apikit.AsError(err))
	}
	cfg, err := svc.config(a, row.RedirectURI)
	if err != nil {
		return fail(apikit.Conflict(fmt.Sprintf("The %s app cannot be used: %v.", label, err), "Fix the app in Settings › Mail providers."))
	}
	tok, err := cfg.Exchange(svc.httpContext(ctx), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return fail(apikit.Conflict(fmt.Sprintf("%s refused the authorization code: %s.", label, describe(err)),
			"Start again; if it fails again, check the app's client id, secret and redirect URI ("+row.RedirectURI+")."))
	}
	if tok.RefreshToken == "" {
		return fail(apikit.Invalid(fmt.Sprintf("%s gave no refresh token, so leadline could not keep the account connected.", label),
			"Remove leadline's access in the account's security settings and connect again."))
	}
	err = svc.db.InTx(ctx, func(ctx context.Context) error {
		if err := svc.keep(ctx, row.SenderID, row.WorkspaceID, row.Provider, tok.RefreshToken, true); err != nil {
			return err
		}
		_, err := svc.db.IDB(ctx).NewUpdate().Model(row).Set("finished_at = ?, error = NULL, verifier = NULL", now).WherePK().Exec(ctx)
		return err
	})
	if err != nil {
		return "", err
	}
	svc.remember(row.SenderID, tok, now)
	return row.SenderID, nil
}

// Status is how a connect ended: done, or the refusal's message; neither
// while it is still open. Returns E_NOT_FOUND for a state that is unknown
// or was swept (SweepStates), and a refusal when it expired unfinished.
func (svc *Service) Status(ctx context.Context, state string) (done bool, err error) {
	row := new(stateRow)
	if err := svc.db.IDB(ctx).NewSelect().Model(row).Where("id = ?", stateID(state)).Scan(ctx); err != nil {
		if db.IsNoRows(err) {
			return false, errLinkGone()
		}
		return false, err
	}
	switch {
	case row.Error != nil:
		return false, errors.New(*row.Error)
	case row.FinishedAt != nil:
		return true, nil
	case !row.ExpiresAt.After(svc.clock.Now()):
		return false, fmt.Errorf("the link expired before the browser came back (links last %d minutes); start again", int(StateTTL.Minutes()))
	}
	return false, nil
}

// errLinkGone is the answer for a connect's state that is unknown, used
// or expired: the same whether its row is still there or was swept.
func errLinkGone() error {
	return apikit.Errorf(apikit.ENotFound, "Start again from the sender's page (Connect account), or with leadline senders connect.",
		"This connect link is unknown, was used already or expired (links last %d minutes).", int(StateTTL.Minutes()))
}

// SweepStates deletes the connects whose links expired by now, finished
// or not: Finish refuses them from their expiry on (StateTTL after Begin),
// and answers a swept one the same way. The runner calls it with its
// hourly checks (platform.NewRunner); several workers may run it at once.
func (svc *Service) SweepStates(ctx context.Context, now time.Time) error {
	_, err := svc.db.IDB(ctx).NewDelete().Model((*stateRow)(nil)).Where("expires_at <= ?", now.UTC()).Exec(ctx)
	return err
}

// describe is an OAuth error as it may be shown: the provider's error code
// and description, never a body that could hold a token.
func describe(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			s := re.ErrorCode
			if re.ErrorDescription != "" {
				s += ": " + oneLine(re.ErrorDescription, 200)
			}
			return s
		}
		if re.Response != nil {
			return "the token endpoint answered " + re.Response.Status
		}
		return "the token endpoint refused"
	}
	// Not the provider's answer (which could hold a token): the call
	// itself failed, and says where to.
	return oneLine(err.Error(), 200)
}

// oneLine is s cut to n bytes, without control characters.
func oneLine(s string, n int) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			r = ' '
		}
		out = append(out, r)
	}
	if s = string(out); len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
