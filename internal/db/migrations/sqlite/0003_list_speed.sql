-- How many leads each workspace holds per client ('' = no client), kept by
-- triggers so that every way of writing leads keeps it true. An unfiltered
-- lead list reads its total here instead of counting a million rows.
CREATE TABLE lead_counts (
    workspace_id TEXT NOT NULL,
    client_key TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, client_key)
);
INSERT INTO lead_counts (workspace_id, client_key, n)
    SELECT workspace_id, coalesce(client_id, ''), count(*) FROM leads GROUP BY workspace_id, coalesce(client_id, '');

CREATE TRIGGER leads_count_insert AFTER INSERT ON leads BEGIN
    INSERT INTO lead_counts (workspace_id, client_key, n) VALUES (new.workspace_id, coalesce(new.client_id, ''), 1)
    ON CONFLICT (workspace_id, client_key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER leads_count_delete AFTER DELETE ON leads BEGIN
    UPDATE lead_counts SET n = n - 1 WHERE workspace_id = old.workspace_id AND client_key = coalesce(old.client_id, '');
END;
CREATE TRIGGER leads_count_client AFTER UPDATE OF client_id ON leads
WHEN coalesce(old.client_id, '') <> coalesce(new.client_id, '') BEGIN
    UPDATE lead_counts SET n = n - 1 WHERE workspace_id = old.workspace_id AND client_key = coalesce(old.client_id, '');
    INSERT INTO lead_counts (workspace_id, client_key, n) VALUES (new.workspace_id, coalesce(new.client_id, ''), 1)
    ON CONFLICT (workspace_id, client_key) DO UPDATE SET n = n + 1;
END;

-- Counting a list filtered by list and stage reads this index alone.
CREATE INDEX leads_list_stage ON leads (workspace_id, list_id, stage_id) WHERE list_id IS NOT NULL;
