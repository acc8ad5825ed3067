CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    timezone TEXT NOT NULL,
    plan TEXT NOT NULL,
    suspended INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE members (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX members_email ON members (workspace_id, lower(email));

CREATE TABLE clients (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX clients_name ON clients (workspace_id, name);

CREATE TABLE stages (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX stages_name ON stages (workspace_id, name);

CREATE TABLE tags (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX tags_name ON tags (workspace_id, name);

CREATE TABLE lists (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX lists_name ON lists (workspace_id, name);

CREATE TABLE blacklist (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX blacklist_value ON blacklist (workspace_id, kind, value);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    member_id TEXT NOT NULL REFERENCES members(id),
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    expires_at TEXT,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at TEXT
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id);

CREATE TABLE api_key_clients (
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    client_id TEXT NOT NULL REFERENCES clients(id),
    PRIMARY KEY (key_id, client_id)
);

CREATE TABLE events (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    lead_id TEXT,
    kind TEXT NOT NULL,
    member_id TEXT,
    key_id TEXT,
    data TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE INDEX events_lead ON events (lead_id, created_at, id) WHERE lead_id IS NOT NULL;
CREATE INDEX events_workspace ON events (workspace_id, created_at);

CREATE TABLE rate_windows (
    key_id TEXT NOT NULL,
    class TEXT NOT NULL,
    window_start TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (key_id, class, window_start)
);

CREATE TABLE idempotency (
    key_id TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    state TEXT NOT NULL,
    status INTEGER NOT NULL DEFAULT 0,
    headers TEXT NOT NULL DEFAULT '{}',
    body BLOB,
    locked_until TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (key_id, idem_key)
);
