-- A reply names the message it answers (In-Reply-To, References): the
-- inbox finds leadline's sent message, and so the lead, by its provider id.
CREATE INDEX messages_provider_id ON messages (workspace_id, provider_message_id);
