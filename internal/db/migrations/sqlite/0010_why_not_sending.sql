-- why-not-sending groups a sequence's enrollments by status and what they
-- wait on; the index covers every column it reads, so that 100,000
-- enrollments are counted from the index alone.
DROP INDEX enrollments_waiting;
CREATE INDEX enrollments_waiting ON enrollments (sequence_id, status, waiting_for, waiting_sender_id, waiting_action, next_run_at);
