-- Sequences: steps as a JSON array (validated as a graph in Go), the
-- senders they rotate between as a JSON array of ids.
CREATE TABLE sequences (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    client_id TEXT REFERENCES clients(id),
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    sender_ids TEXT NOT NULL DEFAULT '[]',
    steps TEXT NOT NULL DEFAULT '[]',
    activated_at TEXT,
    paused_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX sequences_name ON sequences (workspace_id, name);
CREATE INDEX sequences_client ON sequences (workspace_id, client_id);
