CREATE TABLE workspaces (
    id uuid PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    timezone TEXT NOT NULL,
    plan TEXT NOT NULL,
    suspended boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

CREATE TABLE members (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    active boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX members_email ON members (workspace_id, lower(email));

CREATE TABLE clients (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    name TEXT NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX clients_name ON clients (workspace_id, name);

CREATE TABLE stages (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    name TEXT NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX stages_name ON stages (workspace_id, name);

CREATE TABLE tags (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    name TEXT NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX tags_name ON tags (workspace_id, name);

CREATE TABLE lists (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    name TEXT NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX lists_name ON lists (workspace_id, name);

CREATE TABLE blacklist (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX blacklist_value ON blacklist (workspace_id, kind, value);

CREATE TABLE api_keys (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    member_id uuid NOT NULL REFERENCES members(id),
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    expires_at timestamptz,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id);

CREATE TABLE api_key_clients (
    key_id uuid NOT NULL REFERENCES api_keys(id),
    client_id uuid NOT NULL REFERENCES clients(id),
    PRIMARY KEY (key_id, client_id)
);

CREATE TABLE events (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    lead_id uuid,
    kind TEXT NOT NULL,
    member_id uuid,
    key_id uuid,
    data jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL
);
CREATE INDEX events_lead ON events (lead_id, created_at, id) WHERE lead_id IS NOT NULL;
CREATE INDEX events_workspace ON events (workspace_id, created_at);

CREATE TABLE rate_windows (
    key_id uuid NOT NULL,
    class TEXT NOT NULL,
    window_start timestamptz NOT NULL,
    count integer NOT NULL,
    PRIMARY KEY (key_id, class, window_start)
);

CREATE TABLE idempotency (
    key_id uuid NOT NULL,
    idem_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    state TEXT NOT NULL,
    status INTEGER NOT NULL DEFAULT 0,
    headers jsonb NOT NULL DEFAULT '{}',
    body bytea,
    locked_until timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (key_id, idem_key)
);
