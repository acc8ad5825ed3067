-- A sequence that has due work it cannot send for 24 hours is stalled
-- until an action goes out again.
ALTER TABLE sequences ADD COLUMN stalled_at TEXT;
-- The last action of a sequence, for the stall check.
CREATE INDEX actions_sequence ON actions (sequence_id, created_at);
-- What an enrollment waits on, when it is a sender's limit: the sender and
-- the action, for why-not-sending and the running-dry alert.
ALTER TABLE enrollments ADD COLUMN waiting_sender_id TEXT;
ALTER TABLE enrollments ADD COLUMN waiting_action TEXT;
