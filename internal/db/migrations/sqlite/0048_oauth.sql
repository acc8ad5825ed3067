-- OAuth 2.0 for mailboxes at Google and Microsoft (package oauth).
--
-- oauth_apps: the OAuth app a workspace registered with each provider
-- (leadline oauth set, Settings › Mail providers). The client secret is
-- named as an environment variable (secret_env) or typed once and kept
-- sealed under the server's secret key (secret; internal/secret,
-- OAuthAppSecrets). auth_url and token_url replace the provider's
-- documented endpoints when set (a single-tenant Microsoft app, a test).
CREATE TABLE oauth_apps (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    provider TEXT NOT NULL,
    client_id TEXT NOT NULL,
    secret_env TEXT,
    secret TEXT,
    auth_url TEXT,
    token_url TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (workspace_id, provider)
);

-- oauth_states: a connect in progress, from the link to the callback. id
-- is the SHA-256 of the state parameter (the state itself is never
-- stored); bound_to is the SHA-256 of the console session that started it
-- ("cli" for leadline senders connect); verifier is the PKCE code
-- verifier, sealed (OAuthVerifiers). finished_at and error say how it
-- ended, for the command line that waits for it.
CREATE TABLE oauth_states (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    sender_id TEXT NOT NULL REFERENCES senders(id),
    provider TEXT NOT NULL,
    bound_to TEXT NOT NULL,
    verifier TEXT,
    redirect_uri TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    finished_at TEXT,
    error TEXT
);
CREATE INDEX oauth_states_sender ON oauth_states (sender_id);

-- oauth_tokens: a sender's connected account. refresh_token is sealed
-- (OAuthTokens); access tokens are kept in memory only. refused_at is set
-- when the provider refused the refresh token (revoked, expired, consent
-- withdrawn): nothing asks it again until the account is reconnected.
CREATE TABLE oauth_tokens (
    sender_id TEXT PRIMARY KEY REFERENCES senders(id),
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    provider TEXT NOT NULL,
    refresh_token TEXT,
    connected_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    refused_at TEXT,
    refusal TEXT
);
