-- The inbound queue: what a provider pushes (a scheduling provider's
-- booking, later a provider's webhook) is written here in the request that
-- receives it, and taken in by whichever worker holds its lease, through
-- the same path as what the runner polls. A row is deleted in the
-- transaction that takes it in; one that fails waits and is tried again.
CREATE TABLE inbound (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    source TEXT NOT NULL,
    dedupe TEXT NOT NULL,
    payload TEXT NOT NULL,
    received_at TEXT NOT NULL,
    due_at TEXT NOT NULL,
    lease_until TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
);
CREATE UNIQUE INDEX inbound_dedupe ON inbound (workspace_id, source, dedupe);
CREATE INDEX inbound_due ON inbound (due_at);
