-- A/B variants. A sequence keeps, per step, the variant that won (by
-- evidence or by a manager's pick); an action, and the message it puts in
-- its thread, name the variant they sent.
ALTER TABLE sequences ADD COLUMN variant_winners TEXT;
ALTER TABLE actions ADD COLUMN variant_id TEXT;
ALTER TABLE messages ADD COLUMN variant_id TEXT;
-- One row per enrollment that got a variant at a step (the first time it
-- was sent, on a loop), with what came of it: the numbers per variant and
-- the evidence a winner is picked by are sums over these rows, read by
-- the sequence and step.
CREATE TABLE variant_sends (
    enrollment_id TEXT NOT NULL,
    step_id TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    sequence_id TEXT NOT NULL,
    variant_id TEXT NOT NULL,
    lead_id TEXT NOT NULL,
    sender_id TEXT NOT NULL,
    action TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    accepted INTEGER NOT NULL DEFAULT 0,
    replied INTEGER NOT NULL DEFAULT 0,
    positive INTEGER NOT NULL DEFAULT 0,
    meeting INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (enrollment_id, step_id)
);
CREATE INDEX variant_sends_sequence ON variant_sends (sequence_id, step_id, variant_id);
CREATE INDEX variant_sends_lead ON variant_sends (lead_id, sender_id);
