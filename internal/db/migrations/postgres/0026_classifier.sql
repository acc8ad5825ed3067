-- The trained reply classifier: how sure it was of a reply's intent, the
-- threads it was unsure about (needs_review: a member should read the
-- reply; the intent is unclear until then), and a model per workspace
-- trained on the intents its members set by hand.
ALTER TABLE threads ADD COLUMN intent_confidence double precision;
ALTER TABLE threads ADD COLUMN needs_review boolean NOT NULL DEFAULT false;
ALTER TABLE messages ADD COLUMN intent_confidence double precision;
CREATE INDEX threads_review ON threads (workspace_id, needs_review, last_message_at, id);

CREATE TABLE classifier_models (
    workspace_id uuid PRIMARY KEY REFERENCES workspaces(id),
    model bytea NOT NULL,
    examples INTEGER NOT NULL,
    held_out INTEGER NOT NULL,
    accuracy double precision NOT NULL,
    builtin_accuracy double precision NOT NULL,
    in_use boolean NOT NULL DEFAULT false,
    trained_at timestamptz NOT NULL
);
