-- CSV imports sent over HTTP (POST /v1/leads/import): a job per file, run
-- by the server process that took it, polled at GET /v1/imports/{id}. A
-- running job writes its counts (and updated_at) after every batch; one
-- whose updated_at is older than two minutes was left by a process that
-- stopped, and is marked failed.
CREATE TABLE imports (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    client_id TEXT,
    key_id TEXT,
    status TEXT NOT NULL,
    dry_run INTEGER NOT NULL DEFAULT 0,
    rows INTEGER NOT NULL DEFAULT 0,
    created INTEGER NOT NULL DEFAULT 0,
    updated INTEGER NOT NULL DEFAULT 0,
    unchanged INTEGER NOT NULL DEFAULT 0,
    rejected INTEGER NOT NULL DEFAULT 0,
    errors TEXT NOT NULL DEFAULT '[]',
    columns TEXT NOT NULL DEFAULT '{}',
    error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE INDEX imports_running ON imports (status, updated_at) WHERE status = 'running';
