-- CSV imports sent over HTTP (POST /v1/leads/import): a job per file, run
-- by the server process that took it, polled at GET /v1/imports/{id}. A
-- running job writes its counts (and updated_at) after every batch; one
-- whose updated_at is older than two minutes was left by a process that
-- stopped, and is marked failed.
CREATE TABLE imports (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    client_id uuid,
    key_id uuid,
    status text NOT NULL,
    dry_run boolean NOT NULL DEFAULT false,
    rows integer NOT NULL DEFAULT 0,
    created integer NOT NULL DEFAULT 0,
    updated integer NOT NULL DEFAULT 0,
    unchanged integer NOT NULL DEFAULT 0,
    rejected integer NOT NULL DEFAULT 0,
    errors jsonb NOT NULL DEFAULT '[]',
    columns jsonb NOT NULL DEFAULT '{}',
    error text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    finished_at timestamptz
);
CREATE INDEX imports_running ON imports (status, updated_at) WHERE status = 'running';
