-- Two more grains of report_daily, written with the others by one
-- statement: grain 'sequence' per client and sequence (no sender), with
-- each sender's actions as sender:<sender id>:sends as in the client grain,
-- and grain 'sender' per client and sender (no sequence). Neither has the
-- step metrics. The lists per sequence and per sender read them: a few
-- rows per subject and day, not one per subject, sender or sequence,
-- metric and day. Both are filled here from the subject grain, whose
-- shards they sum into shard 0.
INSERT INTO report_daily (workspace_id, grain, day, client_id, sequence_id, sender_id, metric, shard, value)
SELECT workspace_id, 'sequence', day, client_id, sequence_id, '', metric, 0, SUM(value)
FROM report_daily WHERE grain = 'subject' AND metric NOT LIKE 'step:%'
GROUP BY workspace_id, day, client_id, sequence_id, metric;

INSERT INTO report_daily (workspace_id, grain, day, client_id, sequence_id, sender_id, metric, shard, value)
SELECT workspace_id, 'sequence', day, client_id, sequence_id, '', 'sender:' || sender_id || ':sends', 0, SUM(value)
FROM report_daily WHERE grain = 'subject' AND metric LIKE 'sends.%' AND sender_id <> ''
GROUP BY workspace_id, day, client_id, sequence_id, sender_id;

INSERT INTO report_daily (workspace_id, grain, day, client_id, sequence_id, sender_id, metric, shard, value)
SELECT workspace_id, 'sender', day, client_id, '', sender_id, metric, 0, SUM(value)
FROM report_daily WHERE grain = 'subject' AND metric NOT LIKE 'step:%'
GROUP BY workspace_id, day, client_id, sender_id, metric;

-- The table has many more rows than it had: new statistics, so that the planner
-- reads a grain's days by their range from the start.
ANALYZE report_daily;
