-- Week rows of the client, sequence and sender grains (grain
-- '<grain>@week', day the week's Monday): the same counters summed per
-- week, Monday to Sunday, without the per-sender sends (sender:<id>:sends)
-- that split costs by day. A report reads the whole weeks of its period
-- from them and only the days before and after from the day rows: a
-- quarter is some 12 week rows and 12 day rows per counter, not 90. They
-- are filled here from the day rows, whose shards they sum into shard 0.
INSERT INTO report_daily (workspace_id, grain, day, client_id, sequence_id, sender_id, metric, shard, value)
SELECT workspace_id, grain || '@week', to_char(day::date - (extract(isodow FROM day::date)::int - 1), 'YYYY-MM-DD'),
       client_id, sequence_id, sender_id, metric, 0, SUM(value)
FROM report_daily WHERE grain IN ('client', 'sequence', 'sender') AND metric NOT LIKE 'sender:%'
GROUP BY 1, 2, 3, 4, 5, 6, 7;

-- New statistics for the planner: the table has a fifth more rows.
ANALYZE report_daily;
