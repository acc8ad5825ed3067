-- A list page's sequence numbers (enrollments.Service.StatsOf) read the
-- enrolments and the sent actions from indexes alone: the enrolments per
-- sequence, status and step; the sent actions per sequence, with what
-- counts them (action, enrollment) and what finds their invitation
-- (sender, lead), whose acceptance is then read through the invitations'
-- unique (sender_id, lead_id) index.
CREATE INDEX enrollments_sequence_steps ON enrollments (sequence_id, status, step_id);
CREATE INDEX actions_sequence_sent ON actions (sequence_id, action, enrollment_id, sender_id, lead_id) WHERE status = 'sent';
