-- Webhook subscriptions. The secret signs deliveries, so it is kept; the
-- API shows it once, when the webhook is created.
CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    description TEXT,
    secret TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    disabled_at TEXT,
    deleted_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX webhooks_workspace ON webhooks (workspace_id) WHERE deleted_at IS NULL;

-- Deliveries: the outbox. One row per webhook and event, written in the
-- transaction of the event itself; the worker claims due rows with a lease.
CREATE TABLE deliveries (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    webhook_id TEXT NOT NULL REFERENCES webhooks(id),
    event_id TEXT NOT NULL,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    lease_until TEXT,
    last_status_code INTEGER,
    last_error TEXT,
    replay_of TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_log ON deliveries (workspace_id, updated_at, id);
CREATE INDEX deliveries_webhook ON deliveries (webhook_id, updated_at, id);
CREATE INDEX deliveries_created ON deliveries (created_at);
