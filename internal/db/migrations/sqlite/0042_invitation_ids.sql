-- What the provider calls a LinkedIn invitation and the person it went to:
-- an acceptance that names neither the lead nor an id the lead holds is
-- matched through leadline's own sent invitation, and polling finds
-- acceptances by comparing the account's pending invitations with these.
ALTER TABLE invitations ADD COLUMN provider_id TEXT;
ALTER TABLE invitations ADD COLUMN member_id TEXT;
CREATE INDEX invitations_member ON invitations (sender_id, member_id) WHERE member_id IS NOT NULL;
CREATE INDEX invitations_provider ON invitations (sender_id, provider_id) WHERE provider_id IS NOT NULL;
