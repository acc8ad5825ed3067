-- Replies that move leads on (docs/SEQUENCES.md). A sequence keeps what each
-- reply intent does beyond stopping (on_reply, by intent) and what a booked
-- meeting does (on_meeting_booked).
ALTER TABLE sequences ADD COLUMN on_reply jsonb;
ALTER TABLE sequences ADD COLUMN on_meeting_booked jsonb;
-- An enrollment a sequence's rule made names that sequence: the replies
-- before it do not stop it, and the bound on how often rules move a lead
-- counts these (read by the lead, enrollments_lead).
ALTER TABLE enrollments ADD COLUMN rule_of uuid REFERENCES sequences(id);
-- One row per rule that ran: once per sequence and trigger (a reply's
-- message, a booking), so that a reply taken in twice, or by two replicas,
-- runs its rule once; with what the rule did and what it refused, and why.
CREATE TABLE rule_runs (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    sequence_id uuid NOT NULL REFERENCES sequences(id),
    lead_id uuid NOT NULL REFERENCES leads(id),
    trigger_key TEXT NOT NULL,
    rule TEXT NOT NULL,
    thread_id uuid REFERENCES threads(id),
    message_id uuid REFERENCES messages(id),
    booking_id uuid REFERENCES bookings(id),
    outcomes jsonb NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX rule_runs_trigger ON rule_runs (workspace_id, sequence_id, trigger_key);
CREATE INDEX rule_runs_thread ON rule_runs (thread_id, created_at);
