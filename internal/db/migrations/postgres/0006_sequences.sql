-- Sequences: steps as a JSON array (validated as a graph in Go), the
-- senders they rotate between as a JSON array of ids.
CREATE TABLE sequences (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    client_id uuid REFERENCES clients(id),
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    sender_ids jsonb NOT NULL DEFAULT '[]',
    steps jsonb NOT NULL DEFAULT '[]',
    activated_at timestamptz,
    paused_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX sequences_name ON sequences (workspace_id, name);
CREATE INDEX sequences_client ON sequences (workspace_id, client_id);
