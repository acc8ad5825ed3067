-- Where the mailbox reader is in each smtp sender's inbox: the folder read,
-- its UIDVALIDITY and the last UID taken in, saved in the transaction that
-- queues what was read. The lease keeps one reader per inbox across
-- replicas: lease_owner holds it until lease_until.
CREATE TABLE mailboxes (
    sender_id TEXT PRIMARY KEY REFERENCES senders(id),
    folder TEXT NOT NULL DEFAULT '',
    uid_validity INTEGER NOT NULL DEFAULT 0,
    last_uid INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until TEXT,
    updated_at TEXT NOT NULL
);
