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
CREATE FUNCTION leads_facet_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, shard, n)
        SELECT workspace_id, kind, facet_id, client_key, pg_backend_pid() % 16, -count(*) FROM (
            SELECT workspace_id, 'stage' AS kind, stage_id AS facet_id, coalesce(client_id::text, '') AS client_key FROM removed
            WHERE stage_id IS NOT NULL
            UNION ALL
            SELECT r.workspace_id, 'tag', lt.tag_id, coalesce(r.client_id::text, '') FROM removed AS r JOIN lead_tags AS lt ON lt.lead_id = r.id
        ) AS d
        GROUP BY workspace_id, kind, facet_id, client_key ORDER BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, kind, facet_id, client_key, shard) DO UPDATE SET n = lead_facet_counts.n + EXCLUDED.n;
    RETURN NULL;
END $$;
CREATE TRIGGER leads_facet_insert AFTER INSERT ON leads REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION leads_facet_added();
CREATE TRIGGER leads_facet_delete AFTER DELETE ON leads REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION leads_facet_removed();

-- A lead that changes stage or client: row-level with a WHEN, as
-- leads_count_client (0033 says why); its tags move with its client.
CREATE FUNCTION leads_facet_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, shard, n)
        SELECT workspace_id, kind, facet_id, client_key, pg_backend_pid() % 16, n FROM (
            SELECT OLD.workspace_id AS workspace_id, 'stage' AS kind, OLD.stage_id AS facet_id, coalesce(OLD.client_id::text, '') AS client_key, -1 AS n
            WHERE OLD.stage_id IS NOT NULL
            UNION ALL
            SELECT NEW.workspace_id, 'stage', NEW.stage_id, coalesce(NEW.client_id::text, ''), 1 WHERE NEW.stage_id IS NOT NULL
            UNION ALL
            SELECT OLD.workspace_id, 'tag', tag_id, coalesce(OLD.client_id::text, ''), -1 FROM lead_tags
            WHERE lead_id = OLD.id AND OLD.client_id IS DISTINCT FROM NEW.client_id
            UNION ALL
            SELECT NEW.workspace_id, 'tag', tag_id, coalesce(NEW.client_id::text, ''), 1 FROM lead_tags
            WHERE lead_id = NEW.id AND OLD.client_id IS DISTINCT FROM NEW.client_id
        ) AS d ORDER BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, kind, facet_id, client_key, shard) DO UPDATE SET n = lead_facet_counts.n + EXCLUDED.n;
    RETURN NULL;
END $$;
CREATE TRIGGER leads_facet_move AFTER UPDATE OF stage_id, client_id ON leads FOR EACH ROW
    WHEN (OLD.stage_id IS DISTINCT FROM NEW.stage_id OR OLD.client_id IS DISTINCT FROM NEW.client_id)
    EXECUTE FUNCTION leads_facet_moved();

-- Tags added or removed by a statement count under their lead's workspace
-- and client. (A lead's tags go before the lead does: the lead is still
-- there to say where they count.)
CREATE FUNCTION lead_tags_facet_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, shard, n)
            SELECT l.workspace_id, 'tag', t.tag_id, coalesce(l.client_id::text, ''), pg_backend_pid() % 16, count(*)
            FROM added AS t JOIN leads AS l ON l.id = t.lead_id
            GROUP BY l.workspace_id, t.tag_id, coalesce(l.client_id::text, '') ORDER BY 1, 3, 4
        ON CONFLICT (workspace_id, kind, facet_id, client_key, shard) DO UPDATE SET n = lead_facet_counts.n + EXCLUDED.n;
    ELSE
        INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, shard, n)
            SELECT l.workspace_id, 'tag', t.tag_id, coalesce(l.client_id::text, ''), pg_backend_pid() % 16, -count(*)
            FROM removed AS t JOIN leads AS l ON l.id = t.lead_id
            GROUP BY l.workspace_id, t.tag_id, coalesce(l.client_id::text, '') ORDER BY 1, 3, 4
        ON CONFLICT (workspace_id, kind, facet_id, client_key, shard) DO UPDATE SET n = lead_facet_counts.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER lead_tags_facet_insert AFTER INSERT ON lead_tags REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION lead_tags_facet_changed();
CREATE TRIGGER lead_tags_facet_delete AFTER DELETE ON lead_tags REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION lead_tags_facet_changed();
