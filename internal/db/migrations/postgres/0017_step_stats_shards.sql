-- A sequence's step counters are written by every runner worker at once:
-- each transaction adds its counts to one of several rows per step (its
-- shard), so that concurrent commits do not queue on one row. Readers add
-- the shards up.
ALTER TABLE step_stats ADD COLUMN shard smallint NOT NULL DEFAULT 0;
ALTER TABLE step_stats DROP CONSTRAINT step_stats_pkey;
ALTER TABLE step_stats ADD PRIMARY KEY (sequence_id, step_id, shard);
