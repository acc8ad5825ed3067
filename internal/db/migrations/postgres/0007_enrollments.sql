-- Enrollments: one lead in one sequence. next_run_at is when the runner
-- should look at it next; held is set while its sequence is not active, so
-- that the due index holds only work that can run.
CREATE TABLE enrollments (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    sequence_id uuid NOT NULL REFERENCES sequences(id),
    lead_id uuid NOT NULL REFERENCES leads(id),
    client_id uuid REFERENCES clients(id),
    sender_id uuid REFERENCES senders(id),
    email_sender_id uuid REFERENCES senders(id),
    status TEXT NOT NULL,
    step_id TEXT NOT NULL,
    step_started_at timestamptz NOT NULL,
    attempt INTEGER NOT NULL DEFAULT 0,
    next_run_at timestamptz,
    held boolean NOT NULL DEFAULT false,
    waiting_for TEXT,
    waiting_until timestamptz,
    last_error_code TEXT,
    last_error TEXT,
    failed_at timestamptz,
    ended_at timestamptz,
    lease_until timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
-- A lead has at most one live enrollment in the workspace.
CREATE UNIQUE INDEX enrollments_live ON enrollments (workspace_id, lead_id) WHERE status IN ('active', 'paused');
CREATE INDEX enrollments_lead ON enrollments (lead_id, created_at);
CREATE INDEX enrollments_sequence ON enrollments (sequence_id, status, id);
-- why-not-sending groups a sequence's live enrollments by what they wait for.
CREATE INDEX enrollments_waiting ON enrollments (sequence_id, status, waiting_for, next_run_at);
CREATE INDEX enrollments_sender ON enrollments (sender_id, status);
CREATE INDEX enrollments_due ON enrollments (next_run_at) WHERE status = 'active' AND NOT held;

-- Actions the runner performed or is performing, with the idempotency key
-- the transport received. A 'sending' row older than its lease is a
-- crash between the transport call and its record: the runner asks the
-- transport about the key instead of sending again.
CREATE TABLE actions (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    enrollment_id uuid NOT NULL REFERENCES enrollments(id),
    sequence_id uuid NOT NULL,
    step_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    sender_id uuid NOT NULL REFERENCES senders(id),
    lead_id uuid NOT NULL REFERENCES leads(id),
    action TEXT NOT NULL,
    idem_key TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    with_note boolean NOT NULL DEFAULT false,
    day TEXT NOT NULL,
    error_code TEXT,
    created_at timestamptz NOT NULL,
    done_at timestamptz
);
CREATE INDEX actions_enrollment ON actions (enrollment_id, step_id);
CREATE INDEX actions_sending ON actions (created_at) WHERE status = 'sending';
CREATE INDEX actions_lead_sender ON actions (lead_id, sender_id);

-- Per sequence step: how many enrollments entered, finished and failed it.
CREATE TABLE step_stats (
    sequence_id uuid NOT NULL REFERENCES sequences(id),
    step_id TEXT NOT NULL,
    entered INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (sequence_id, step_id)
);
