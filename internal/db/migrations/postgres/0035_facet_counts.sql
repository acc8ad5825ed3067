-- How many leads each workspace holds per stage and per tag, and within
-- each per client ('' = no client), kept by triggers as lead_counts is, so
-- that a list filtered by one stage or one tag (with a client, or for a
-- client viewer's clients) reads its exact total here instead of counting
-- every matching lead. kind is 'stage' or 'tag'; facet_id is the stage's
-- or the tag's id.
--
-- Every change is a delta added to the counter's shard of the writing
-- backend (pg_backend_pid() % 16), and a total sums the shards: writers of
-- one stage or tag on different connections neither wait for each other's
-- counter row until their commit nor deadlock over two of them. Each
-- statement writes its counters in key order.
CREATE TABLE lead_facet_counts (
    workspace_id uuid NOT NULL,
    kind text NOT NULL,
    facet_id uuid NOT NULL,
    client_key text NOT NULL,
    shard smallint NOT NULL,
    n bigint NOT NULL,
    PRIMARY KEY (workspace_id, kind, facet_id, client_key, shard)
);
INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, shard, n)
    SELECT workspace_id, 'stage', stage_id, coalesce(client_id::text, ''), 0, count(*) FROM leads WHERE stage_id IS NOT NULL
    GROUP BY workspace_id, stage_id, coalesce(client_id::text, '');
INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, shard, n)
    SELECT l.workspace_id, 'tag', lt.tag_id, coalesce(l.client_id::text, ''), 0, count(*) FROM lead_tags AS lt JOIN leads AS l ON l.id = lt.lead_id
    GROUP BY l.workspace_id, lt.tag_id, coalesce(l.client_id::text, '');

-- Every trigger reads its statement's transition tables; where it needs
-- another table's rows (a lead's tags, a tag's lead) it looks each one up
-- through a LATERAL subquery behind OFFSET 0, so that the plan probes the
-- key instead of hashing the whole table: a transition table of 5,000
-- rows would otherwise make the planner scan every lead. Those lookups'
-- estimates would make Postgres compile the statement (JIT) on every call,
-- which costs more than the statement itself: the functions run with jit
-- off.

-- Leads added or removed by a statement: their stages, and (on removal)
-- any tags still on them.
CREATE FUNCTION leads_facet_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, shard, n)
        SELECT workspace_id, 'stage', stage_id, coalesce(client_id::text, ''), pg_backend_pid() % 16, count(*) FROM added
        WHERE stage_id IS NOT NULL
        GROUP BY workspace_id, stage_id, coalesce(client_id::text, '') ORDER BY 1, 3, 4
    ON CONFLICT (workspace_id, kind, facet_id, client_key, shard) DO UPDATE SET n = lead_facet_counts.n + EXCLUDED.n;
    RETURN NULL;
END $$;
CREATE FUNCTION leads_facet_removed() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
    INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, shard, n)
        SELECT workspace_id, kind, facet_id, client_key, pg_backend_pid() % 16, -count(*) FROM (
            SELECT workspace_id, 'stage' AS kind, stage_id AS facet_id, coalesce(client_id::text, '') AS client_key FROM removed
            WHERE stage_id IS NOT NULL
            UNION ALL
            SELECT r.workspace_id, 'tag', lt.tag_id, coalesce(r.client_id::text, '') FROM removed AS r
            CROSS JOIN LATERAL (SELECT tag_id FROM lead_tags WHERE lead_id = r.id OFFSET 0) AS lt
        ) AS d
        GROUP BY workspace_id, kind, facet_id, client_key ORDER BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, kind, facet_id, client_key, shard) DO UPDATE SET n = lead_facet_counts.n + EXCLUDED.n;
    RETURN NULL;
END $$;
CREATE TRIGGER leads_facet_insert AFTER INSERT ON leads REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION leads_facet_added();
CREATE TRIGGER leads_facet_delete AFTER DELETE ON leads REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION leads_facet_removed();

-- Leads that changed stage or client in an update: their stages move, and
-- their tags move with their client. Statement-level, unlike the move of
-- lead_counts (0033): an import that changes the stage of 5,000 leads
-- then runs one upsert instead of 5,000 trigger calls, and an update that
-- changes neither pays one join of its two transition tables.
CREATE FUNCTION leads_facet_updated() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
    INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, shard, n)
        WITH changed AS (
            SELECT o.id, o.workspace_id, o.stage_id AS old_stage, nw.stage_id AS new_stage,
                coalesce(o.client_id::text, '') AS old_client, coalesce(nw.client_id::text, '') AS new_client
            FROM old_rows AS o JOIN new_rows AS nw ON nw.id = o.id
            WHERE o.stage_id IS DISTINCT FROM nw.stage_id OR o.client_id IS DISTINCT FROM nw.client_id
        )
        SELECT workspace_id, kind, facet_id, client_key, pg_backend_pid() % 16, sum(n) FROM (
            SELECT workspace_id, 'stage' AS kind, old_stage AS facet_id, old_client AS client_key, -1 AS n FROM changed
            WHERE old_stage IS NOT NULL
            UNION ALL
            SELECT workspace_id, 'stage', new_stage, new_client, 1 FROM changed WHERE new_stage IS NOT NULL
            UNION ALL
            SELECT c.workspace_id, 'tag', lt.tag_id, m.client_key, m.n FROM changed AS c
            CROSS JOIN LATERAL (VALUES (c.old_client, -1), (c.new_client, 1)) AS m(client_key, n)
            CROSS JOIN LATERAL (SELECT tag_id FROM lead_tags WHERE lead_id = c.id OFFSET 0) AS lt
            WHERE c.old_client <> c.new_client
        ) AS d
        GROUP BY workspace_id, kind, facet_id, client_key HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, kind, facet_id, client_key, shard) DO UPDATE SET n = lead_facet_counts.n + EXCLUDED.n;
    RETURN NULL;
END $$;
CREATE TRIGGER leads_facet_update AFTER UPDATE ON leads REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION leads_facet_updated();

-- Tags added or removed by a statement count under their lead's workspace
-- and client. (A lead's tags go before the lead does: the lead is still
-- there to say where they count.)
CREATE FUNCTION lead_tags_facet_changed() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, shard, n)
            SELECT l.workspace_id, 'tag', t.tag_id, l.client_key, pg_backend_pid() % 16, count(*) FROM added AS t
            CROSS JOIN LATERAL (SELECT workspace_id, coalesce(client_id::text, '') AS client_key FROM leads WHERE id = t.lead_id OFFSET 0) AS l
            GROUP BY l.workspace_id, t.tag_id, l.client_key ORDER BY 1, 3, 4
        ON CONFLICT (workspace_id, kind, facet_id, client_key, shard) DO UPDATE SET n = lead_facet_counts.n + EXCLUDED.n;
    ELSE
        INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, shard, n)
            SELECT l.workspace_id, 'tag', t.tag_id, l.client_key, pg_backend_pid() % 16, -count(*) FROM removed AS t
            CROSS JOIN LATERAL (SELECT workspace_id, coalesce(client_id::text, '') AS client_key FROM leads WHERE id = t.lead_id OFFSET 0) AS l
            GROUP BY l.workspace_id, t.tag_id, l.client_key ORDER BY 1, 3, 4
        ON CONFLICT (workspace_id, kind, facet_id, client_key, shard) DO UPDATE SET n = lead_facet_counts.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER lead_tags_facet_insert AFTER INSERT ON lead_tags REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION lead_tags_facet_changed();
CREATE TRIGGER lead_tags_facet_delete AFTER DELETE ON lead_tags REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION lead_tags_facet_changed();
