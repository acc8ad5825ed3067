-- Senders' secrets typed in the console or given to `leadline senders
-- secret set`, by the name the sender's settings give them (password_env,
-- token_env, api_key_env, webhook_secret_env). Kept sealed under the
-- server's secret key (internal/secret, SenderSecrets); the transports
-- read a stored secret before the environment variable of the same name.
CREATE TABLE sender_secrets (
    sender_id TEXT NOT NULL REFERENCES senders(id),
    name TEXT NOT NULL,
    secret TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (sender_id, name)
);
