-- Members sign in to the console (package console) with a password, set
-- through a one-time invite link. Only hashes are kept: the password's
-- argon2id hash, and the SHA-256 of each session and invite token.
CREATE TABLE member_passwords (
    member_id uuid PRIMARY KEY REFERENCES members(id),
    hash text NOT NULL,
    updated_at timestamptz NOT NULL
);

-- A member's client scope, as a key's is in api_key_clients: none means
-- the whole workspace.
CREATE TABLE member_clients (
    member_id uuid NOT NULL REFERENCES members(id),
    client_id uuid NOT NULL REFERENCES clients(id),
    PRIMARY KEY (member_id, client_id)
);

-- A signed-in browser. A session idle for 12 hours has ended.
CREATE TABLE member_sessions (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    member_id uuid NOT NULL REFERENCES members(id),
    token_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
);
CREATE INDEX member_sessions_member ON member_sessions (member_id);

-- An invitation to join a workspace (or set a new password), valid once
-- for 24 hours. client_ids is a JSON array of the invited member's
-- clients.
CREATE TABLE member_invites (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    email text NOT NULL,
    role text NOT NULL,
    client_ids jsonb NOT NULL DEFAULT '[]',
    token_hash text NOT NULL UNIQUE,
    invited_by uuid,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
);
CREATE INDEX member_invites_workspace ON member_invites (workspace_id, created_at);
