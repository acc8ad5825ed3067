-- Senders: LinkedIn accounts and mailboxes, with their configuration and
-- health. Names are unique in a workspace: setup files address them by name.
CREATE TABLE senders (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    client_id uuid REFERENCES clients(id),
    name TEXT NOT NULL,
    channel TEXT NOT NULL,
    address TEXT,
    timezone TEXT NOT NULL,
    transport TEXT NOT NULL,
    status TEXT NOT NULL,
    premium boolean NOT NULL DEFAULT false,
    monthly_cost double precision NOT NULL DEFAULT 0,
    schedule jsonb NOT NULL,
    caps jsonb NOT NULL,
    warmup jsonb,
    health TEXT NOT NULL,
    health_reasons jsonb NOT NULL DEFAULT '[]',
    last_error TEXT,
    health_checked_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX senders_name ON senders (workspace_id, name);
CREATE INDEX senders_client ON senders (workspace_id, client_id);

-- What each sender used per local day and action. The row of a day and
-- action is the lock that keeps two runners from passing a cap together.
-- Notes on invitations are counted per calendar month under the first day
-- of the month and the action 'invite_note'.
CREATE TABLE sender_usage (
    sender_id uuid NOT NULL REFERENCES senders(id),
    day TEXT NOT NULL,
    action TEXT NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (sender_id, day, action)
);

-- Invitations a LinkedIn sender sent, for acceptance rates, pending counts
-- and the automatic withdrawal of stale ones.
CREATE TABLE invitations (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    sender_id uuid NOT NULL REFERENCES senders(id),
    lead_id uuid NOT NULL REFERENCES leads(id),
    with_note boolean NOT NULL DEFAULT false,
    sent_at timestamptz NOT NULL,
    accepted_at timestamptz,
    withdrawn_at timestamptz
);
CREATE UNIQUE INDEX invitations_lead ON invitations (sender_id, lead_id);
CREATE INDEX invitations_sent ON invitations (sender_id, sent_at);
CREATE INDEX invitations_pending ON invitations (sender_id, sent_at) WHERE accepted_at IS NULL AND withdrawn_at IS NULL;

-- Engine events name the sender, sequence, enrollment and step they concern.
ALTER TABLE events ADD COLUMN sender_id uuid;
ALTER TABLE events ADD COLUMN sequence_id uuid;
ALTER TABLE events ADD COLUMN enrollment_id uuid;
ALTER TABLE events ADD COLUMN step_id TEXT;
