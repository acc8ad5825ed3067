-- How many leads each workspace holds per client ('' = no client), kept by
-- triggers so that every way of writing leads keeps it true. An unfiltered
-- lead list reads its total here instead of counting a million rows.
CREATE TABLE lead_counts (
    workspace_id uuid NOT NULL,
    client_key TEXT NOT NULL,
    n bigint NOT NULL,
    PRIMARY KEY (workspace_id, client_key)
);
INSERT INTO lead_counts (workspace_id, client_key, n)
    SELECT workspace_id, coalesce(client_id::text, ''), count(*) FROM leads GROUP BY workspace_id, coalesce(client_id::text, '');

CREATE FUNCTION leads_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE lead_counts SET n = n - 1 WHERE workspace_id = OLD.workspace_id AND client_key = coalesce(OLD.client_id::text, '');
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO lead_counts (workspace_id, client_key, n) VALUES (NEW.workspace_id, coalesce(NEW.client_id::text, ''), 1)
        ON CONFLICT (workspace_id, client_key) DO UPDATE SET n = lead_counts.n + 1;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER leads_count_insert AFTER INSERT OR DELETE ON leads FOR EACH ROW EXECUTE FUNCTION leads_count();
CREATE TRIGGER leads_count_client AFTER UPDATE OF client_id ON leads FOR EACH ROW
    WHEN (OLD.client_id IS DISTINCT FROM NEW.client_id) EXECUTE FUNCTION leads_count();

-- Counting a list filtered by list and stage reads this index alone.
CREATE INDEX leads_list_stage ON leads (workspace_id, list_id, stage_id) WHERE list_id IS NOT NULL;
