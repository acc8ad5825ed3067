package oauth

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/oauth2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/senders"
)

// RefreshBefore is how long before an access token expires it is
// refreshed: a connection signed in with it has that long to be used.
const RefreshBefore = 5 * time.Minute

// Connection is a sender's connected account, as its page shows it.
type Connection struct {
	bun.BaseModel `bun:"table:oauth_tokens"`
	SenderID      string     `bun:"sender_id,pk"`
	WorkspaceID   string     `bun:"workspace_id"`
	Provider      string     `bun:"provider"`
	RefreshToken  *string    `bun:"refresh_token" json:"-"`
	ConnectedAt   time.Time  `bun:"connected_at"`
	UpdatedAt     time.Time  `bun:"updated_at"`
	RefusedAt     *time.Time `bun:"refused_at"`
	Refusal       *string    `bun:"refusal"`
}

// ProviderLabel is the connection's provider as people name it ("Google",
// "Microsoft"), or its internal name when leadline knows no such
// provider.
func (c *Connection) ProviderLabel() string {
	if p, ok := Providers[c.Provider]; ok && p.Label != "" {
		return p.Label
	}
	return c.Provider
}

// access is an access token in memory, with when it expires by the clock.
type access struct {
	token   string
	expires time.Time
}

var _ senders.Tokens = (*Service)(nil)

// Connection returns sender senderID's connected account, nil when it has
// none.
func (svc *Service) Connection(ctx context.Context, senderID string) (*Connection, error) {
	c := new(Connection)
	err := svc.db.IDB(ctx).NewSelect().Model(c).Where("sender_id = ?", senderID).Scan(ctx)
	if db.IsNoRows(err) {
		return nil, nil
	}
	return c, err
}

// keep stores refreshToken sealed as sender senderID's; connected marks a
// new connection (the refusal, if any, is cleared).
func (svc *Service) keep(ctx context.Context, senderID, workspaceID, provider, refreshToken string, connected bool) error {
	sealed, err := svc.key.SealString(refreshToken, secret.OAuthTokens.AAD(senderID))
	if err != nil {
		return err
	}
	now := db.Now(ctx, svc.clock)
	if !connected {
		_, err := svc.db.IDB(ctx).NewUpdate().Model((*Connection)(nil)).Set("refresh_token = ?, updated_at = ?", sealed, now).
			Where("sender_id = ?", senderID).Exec(ctx)
		return err
	}
	c := &Connection{SenderID: senderID, WorkspaceID: workspaceID, Provider: provider, RefreshToken: &sealed, ConnectedAt: now, UpdatedAt: now}
	_, err = svc.db.IDB(ctx).NewInsert().Model(c).On("CONFLICT (sender_id) DO UPDATE").
		Set("workspace_id = EXCLUDED.workspace_id, provider = EXCLUDED.provider, refresh_token = EXCLUDED.refresh_token, connected_at = EXCLUDED.connected_at, updated_at = EXCLUDED.updated_at, refused_at = NULL, refusal = NULL").
		Exec(ctx)
	return err
}

// remember keeps tok's access token in memory until it expires.
func (svc *Service) remember(senderID string, tok *oauth2.Token, now time.Time) {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	svc.tokens[senderID] = access{token: tok.AccessToken, expires: now.Add(lifetime(tok))}
}

// inMemory is sender senderID's access token while it has more than
// RefreshBefore left at now.
func (svc *Service) inMemory(senderID string, now time.Time) (string, bool) {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	a, ok := svc.tokens[senderID]
	return a.token, ok && a.expires.Sub(now) > RefreshBefore
}

// forget drops sender senderID's access token.
func (svc *Service) forget(senderID string) {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	delete(svc.tokens, senderID)
}

// lifetime is how long tok lasts from when it was given: its expires_in
// (read again, since the oauth2 package dates it by the system's clock,
// not the platform's), else an hour, the providers' usual.
func lifetime(tok *oauth2.Token) time.Duration {
	var secs float64
	switch v := tok.Extra("expires_in").(type) {
	case float64:
		secs = v
	case string:
		secs, _ = strconv.ParseFloat(v, 64)
	}
	if secs <= 0 {
		return time.Hour
	}
	return time.Duration(secs) * time.Second
}

// httpContext carries the service's HTTP client to the oauth2 package.
func (svc *Service) httpContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, svc.HTTPClient)
}

// AccessToken returns an access token for sender s's account at provider
// (senders.Tokens): the one in memory while it has more than
// RefreshBefore left and fresh is false, else a new one from the refresh
// token. A refresh the provider refuses with invalid_grant (revoked,
// expired, consent withdrawn) is recorded, and the account is not asked
// again until it is connected again.
func (svc *Service) AccessToken(ctx context.Context, s *senders.Sender, provider string, fresh bool) (string, error) {
	now := svc.clock.Now()
	if a, ok := svc.inMemory(s.ID, now); ok && !fresh {
		return a, nil
	}
	// One refresh at a time: two connections of a sender must not spend a
	// rotating refresh token twice, and the second finds the first's token.
	svc.refreshing.Lock()
	defer svc.refreshing.Unlock()
	if a, ok := svc.inMemory(s.ID, now); ok && !fresh {
		return a, nil
	}
	c, err := svc.Connection(ctx, s.ID)
	if err != nil {
		return "", err
	}
	label := provider
	if p, ok := Providers[provider]; ok {
		label = p.Label
	}
	switch {
	case c == nil || c.RefreshToken == nil:
		return "", fmt.Errorf("%w: connect the %s account on the sender's page (Connect %s account) or with leadline senders connect", senders.ErrNotConnected, label, label)
	case c.Provider != provider:
		return "", fmt.Errorf("%w: the account connected is at %s, the settings name %s; connect a %s account", senders.ErrNotConnected, c.Provider, provider, label)
	case c.RefusedAt != nil:
		return "", fmt.Errorf("%w: %s; reconnect the account on the sender's page (Connect %s account) or with leadline senders connect", senders.ErrReconnect,
			apikit.Deref(c.Refusal), label)
	}
	rt, err := svc.key.OpenString(*c.RefreshToken, secret.OAuthTokens.AAD(s.ID))
	if err != nil {
		return "", fmt.Errorf("%w: the stored refresh token does not open under this server's key (%v); reconnect the account", senders.ErrReconnect, err)
	}
	app, err := svc.App(ctx, s.WorkspaceID, provider)
	if err != nil {
		return "", fmt.Errorf("%w: %s", senders.ErrNotConnected, apikit.AsError(err).Message)
	}
	cfg, err := svc.config(app, "")
	if err != nil {
		return "", err
	}
	tok, err := cfg.TokenSource(svc.httpContext(ctx), &oauth2.Token{RefreshToken: rt}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			svc.forget(s.ID)
			why := fmt.Sprintf("%s refused the refresh token (%s)", label, describe(err))
			if _, uerr := svc.db.IDB(ctx).NewUpdate().Model((*Connection)(nil)).Set("refused_at = ?, refusal = ?", db.Now(ctx, svc.clock), why).
				Where("sender_id = ?", s.ID).Exec(ctx); uerr != nil {
				return "", uerr
			}
			return "", fmt.Errorf("%w: %s; reconnect the account on the sender's page (Connect %s account) or with leadline senders connect", senders.ErrReconnect, why, label)
		}
		return "", fmt.Errorf("oauth: %s's token endpoint: %s", label, describe(err))
	}
	if tok.RefreshToken != "" && tok.RefreshToken != rt {
		// The provider rotated the refresh token: the new one is kept.
		if err := svc.keep(ctx, s.ID, s.WorkspaceID, provider, tok.RefreshToken, false); err != nil {
			return "", err
		}
	}
	svc.remember(s.ID, tok, now)
	return tok.AccessToken, nil
}
