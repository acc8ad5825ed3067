-- The inbox: one thread per conversation between a sender and a lead on a
-- channel, with its messages. The thread carries what lists filter on:
-- intent, assignee, unread and the time of its last message.
CREATE TABLE threads (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    client_id uuid REFERENCES clients(id),
    sender_id uuid NOT NULL REFERENCES senders(id),
    lead_id uuid NOT NULL REFERENCES leads(id),
    channel TEXT NOT NULL,
    sequence_id uuid REFERENCES sequences(id),
    enrollment_id uuid REFERENCES enrollments(id),
    intent TEXT,
    intent_source TEXT,
    assignee_id uuid REFERENCES members(id),
    unread boolean NOT NULL DEFAULT false,
    message_count INTEGER NOT NULL DEFAULT 0,
    last_message_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX threads_conversation ON threads (sender_id, lead_id, channel);
CREATE INDEX threads_activity ON threads (workspace_id, last_message_at, id);
CREATE INDEX threads_intent ON threads (workspace_id, intent, last_message_at, id);
-- A client-scoped key reads its clients' threads by these two.
CREATE INDEX threads_client ON threads (workspace_id, client_id, last_message_at, id);
CREATE INDEX threads_client_intent ON threads (workspace_id, client_id, intent, last_message_at, id);
CREATE INDEX threads_assignee ON threads (workspace_id, assignee_id, last_message_at, id);
CREATE INDEX threads_unread ON threads (workspace_id, unread, last_message_at, id);
CREATE INDEX threads_updated ON threads (workspace_id, updated_at);
CREATE INDEX threads_sender ON threads (sender_id, last_message_at);
CREATE INDEX threads_sequence ON threads (sequence_id, last_message_at);
CREATE INDEX threads_lead ON threads (lead_id);

-- Messages, out (sent by the runner or a member) and in (from the
-- transport). An inbound message is kept once per provider message id.
CREATE TABLE messages (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    thread_id uuid NOT NULL REFERENCES threads(id),
    direction TEXT NOT NULL,
    status TEXT NOT NULL,
    subject TEXT,
    body TEXT NOT NULL,
    auto_reply boolean NOT NULL DEFAULT false,
    intent TEXT,
    sent_by uuid REFERENCES members(id),
    provider_message_id TEXT,
    sent_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX messages_provider ON messages (thread_id, direction, provider_message_id);
CREATE INDEX messages_thread ON messages (thread_id, sent_at, id);
