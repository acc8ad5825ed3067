-- Reports read rollups kept in the same transaction as the events they
-- count; they never scan the activity log. Every rollup row names the
-- workspace's local date of its events and the client, sequence and
-- sender they concern ('' for none). An event names its client itself,
-- so that rebuilding the rollups from the log gives the same rows.
ALTER TABLE events ADD COLUMN client_id uuid;

-- When an enrollment first contacted its lead (its first invitation,
-- message, InMail or email): leads.contacted and time_to_reply start here.
ALTER TABLE enrollments ADD COLUMN contacted_at timestamptz;

-- Counters per local day and metric, at two grains in one table, written
-- by one statement: grain 'subject' per client, sequence and sender (and a
-- sequence step's numbers, as the metrics step:<step id>:sent|replied|failed
-- of its sequence with no sender); grain 'client' per client alone, with
-- each sender's actions as sender:<sender id>:sends, so that the reports
-- without a sequence or sender filter read a few rows a day. Several
-- transactions that count the same key on Postgres add to different
-- shards, so that they do not wait on one row; a report sums the shards.
-- A counter is updated again and again: pages half empty (fillfactor 50)
-- keep each new version on its page, an update that writes no index
-- entry (HOT), and the page prunes the dead ones itself.
CREATE TABLE report_daily (
    workspace_id TEXT NOT NULL,
    grain TEXT NOT NULL,
    day TEXT NOT NULL,
    client_id TEXT NOT NULL,
    sequence_id TEXT NOT NULL,
    sender_id TEXT NOT NULL,
    metric TEXT NOT NULL,
    shard INTEGER NOT NULL,
    value BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, grain, day, client_id, sequence_id, sender_id, metric, shard)
) WITH (fillfactor = 50);
-- One sequence's or one sender's days.
CREATE INDEX report_daily_sequence ON report_daily (workspace_id, grain, sequence_id, day);
CREATE INDEX report_daily_sender ON report_daily (workspace_id, grain, sender_id, day);

-- Each thread that got a reply: the day and subject its reply counts
-- under, its current intent (the one intents.* count) and its time to
-- reply. /v1/reports/reply-threads lists these rows.
CREATE TABLE report_threads (
    thread_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    day TEXT NOT NULL,
    client_id TEXT NOT NULL,
    sequence_id TEXT NOT NULL,
    sender_id TEXT NOT NULL,
    lead_id TEXT NOT NULL,
    intent TEXT NOT NULL,
    first_reply_at timestamptz NOT NULL,
    time_to_reply BIGINT
);
CREATE INDEX report_threads_day ON report_threads (workspace_id, first_reply_at);
-- The medians read the times alone: of the workspace's days, and of one
-- sequence's or sender's.
CREATE INDEX report_threads_times ON report_threads (workspace_id, day, client_id, sequence_id, sender_id, time_to_reply);
CREATE INDEX report_threads_sequence ON report_threads (workspace_id, sequence_id, day, time_to_reply);
CREATE INDEX report_threads_sender ON report_threads (workspace_id, sender_id, day, time_to_reply);
