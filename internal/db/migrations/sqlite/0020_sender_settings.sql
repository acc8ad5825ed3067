-- A sender's transport settings (smtp, imap, unipile): where and how its
-- transport connects. No secret is stored: the settings name environment
-- variables, read when the transport connects.
ALTER TABLE senders ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
