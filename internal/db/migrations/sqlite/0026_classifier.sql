-- The trained reply classifier: how sure it was of a reply's intent, the
-- threads it was unsure about (needs_review: a member should read the
-- reply; the intent is unclear until then), and a model per workspace
-- trained on the intents its members set by hand.
ALTER TABLE threads ADD COLUMN intent_confidence REAL;
ALTER TABLE threads ADD COLUMN needs_review INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN intent_confidence REAL;
CREATE INDEX threads_review ON threads (workspace_id, needs_review, last_message_at, id);

CREATE TABLE classifier_models (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id),
    model BLOB NOT NULL,
    examples INTEGER NOT NULL,
    held_out INTEGER NOT NULL,
    accuracy REAL NOT NULL,
    builtin_accuracy REAL NOT NULL,
    in_use INTEGER NOT NULL DEFAULT 0,
    trained_at TEXT NOT NULL
);
