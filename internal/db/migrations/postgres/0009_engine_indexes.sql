-- Indexes for the engine's reads, each found by enrollments/plan_test.go.
-- The runner's running-dry check: a sender's enrollments held by its caps.
CREATE INDEX enrollments_waiting_sender ON enrollments (waiting_sender_id, waiting_for) WHERE status = 'active';
-- A sender's capacity and the enrollments list's sender filter read both
-- sender columns.
CREATE INDEX enrollments_email_sender ON enrollments (email_sender_id, status);
-- The enrollments list, newest first, and waking a workspace's waits.
CREATE INDEX enrollments_ws ON enrollments (workspace_id, id);
CREATE INDEX enrollments_ws_waiting ON enrollments (workspace_id, waiting_for) WHERE status = 'active';
-- The lead view's sender state.
CREATE INDEX invitations_by_lead ON invitations (lead_id);
-- The runner's hourly stall check reads the active sequences.
CREATE INDEX sequences_status ON sequences (status, id);
