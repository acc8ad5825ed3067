-- Manual tasks created by a sequence's task step. One task per visit of a
-- step by an enrollment (enrollment, step, step_started_at), so that a
-- resumed enrollment finds its task instead of making another.
CREATE TABLE tasks (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    client_id uuid REFERENCES clients(id),
    lead_id uuid NOT NULL REFERENCES leads(id),
    enrollment_id uuid NOT NULL REFERENCES enrollments(id),
    sequence_id uuid NOT NULL REFERENCES sequences(id),
    step_id TEXT NOT NULL,
    step_started_at timestamptz NOT NULL,
    title TEXT NOT NULL,
    due_at timestamptz NOT NULL,
    status TEXT NOT NULL,
    note TEXT,
    completed_by uuid REFERENCES members(id),
    completed_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX tasks_visit ON tasks (enrollment_id, step_id, step_started_at);
CREATE INDEX tasks_status_due ON tasks (workspace_id, status, due_at);
CREATE INDEX tasks_lead ON tasks (lead_id);
CREATE INDEX tasks_sequence ON tasks (sequence_id, status);
