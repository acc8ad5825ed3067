-- Sender guards (spacing, hourly caps, holidays, acceptance and bounce
-- rates, stale invitations, free accounts' notes): what each sender's
-- setup sets for them ('{}': the defaults), when a manager last resumed a
-- guard that stopped it, the moment its next action may run (spacing),
-- and the emails it sent with their hard bounces (the bounce rate).
ALTER TABLE senders ADD COLUMN guards jsonb NOT NULL DEFAULT '{}';
ALTER TABLE senders ADD COLUMN guards_resumed jsonb NOT NULL DEFAULT '{}';
CREATE TABLE sender_pace (
    sender_id uuid PRIMARY KEY REFERENCES senders(id),
    next_at timestamptz NOT NULL
);
CREATE TABLE email_sends (
    id uuid PRIMARY KEY,
    sender_id uuid NOT NULL REFERENCES senders(id),
    lead_id uuid NOT NULL REFERENCES leads(id),
    sent_at timestamptz NOT NULL,
    hard_bounced_at timestamptz
);
CREATE INDEX email_sends_sent ON email_sends (sender_id, sent_at);
CREATE INDEX email_sends_lead ON email_sends (sender_id, lead_id, sent_at);
