-- Senders: LinkedIn accounts and mailboxes, with their configuration and
-- health. Names are unique in a workspace: setup files address them by name.
CREATE TABLE senders (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    client_id TEXT REFERENCES clients(id),
    name TEXT NOT NULL,
    channel TEXT NOT NULL,
    address TEXT,
    timezone TEXT NOT NULL,
    transport TEXT NOT NULL,
    status TEXT NOT NULL,
    premium INTEGER NOT NULL DEFAULT 0,
    monthly_cost REAL NOT NULL DEFAULT 0,
    schedule TEXT NOT NULL,
    caps TEXT NOT NULL,
    warmup TEXT,
    health TEXT NOT NULL,
    health_reasons TEXT NOT NULL DEFAULT '[]',
    last_error TEXT,
    health_checked_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX senders_name ON senders (workspace_id, name);
CREATE INDEX senders_client ON senders (workspace_id, client_id);

-- What each sender used per local day and action. The row of a day and
-- action is the lock that keeps two runners from passing a cap together.
-- Notes on invitations are counted per calendar month under the first day
-- of the month and the action 'invite_note'.
CREATE TABLE sender_usage (
    sender_id TEXT NOT NULL REFERENCES senders(id),
    day TEXT NOT NULL,
    action TEXT NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (sender_id, day, action)
);

-- Invitations a LinkedIn sender sent, for acceptance rates, pending counts
-- and the automatic withdrawal of stale ones.
CREATE TABLE invitations (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    sender_id TEXT NOT NULL REFERENCES senders(id),
    lead_id TEXT NOT NULL REFERENCES leads(id),
    with_note INTEGER NOT NULL DEFAULT 0,
    sent_at TEXT NOT NULL,
    accepted_at TEXT,
    withdrawn_at TEXT
);
CREATE UNIQUE INDEX invitations_lead ON invitations (sender_id, lead_id);
CREATE INDEX invitations_sent ON invitations (sender_id, sent_at);
CREATE INDEX invitations_pending ON invitations (sender_id, sent_at) WHERE accepted_at IS NULL AND withdrawn_at IS NULL;

-- Engine events name the sender, sequence, enrollment and step they concern.
ALTER TABLE events ADD COLUMN sender_id TEXT;
ALTER TABLE events ADD COLUMN sequence_id TEXT;
ALTER TABLE events ADD COLUMN enrollment_id TEXT;
ALTER TABLE events ADD COLUMN step_id TEXT;
