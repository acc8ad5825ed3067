-- Step counters get a shard in their key, as on Postgres, where concurrent
-- runner workers spread their counts over several rows per step. SQLite
-- has one writer and writes shard 0 only.
CREATE TABLE step_stats_new (
    sequence_id TEXT NOT NULL REFERENCES sequences(id),
    step_id TEXT NOT NULL,
    shard INTEGER NOT NULL DEFAULT 0,
    entered INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (sequence_id, step_id, shard)
);
INSERT INTO step_stats_new (sequence_id, step_id, shard, entered, done, failed)
    SELECT sequence_id, step_id, 0, entered, done, failed FROM step_stats;
DROP TABLE step_stats;
ALTER TABLE step_stats_new RENAME TO step_stats;
