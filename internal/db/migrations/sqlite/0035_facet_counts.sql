-- How many leads each workspace holds per stage and per tag, and within
-- each per client ('' = no client), kept by triggers as lead_counts is, so
-- that a list filtered by one stage or one tag (with a client, or for a
-- client viewer's clients) reads its exact total here instead of counting
-- every matching lead. kind is 'stage' or 'tag'; facet_id is the stage's
-- or the tag's id.
CREATE TABLE lead_facet_counts (
    workspace_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    facet_id TEXT NOT NULL,
    client_key TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, kind, facet_id, client_key)
) WITHOUT ROWID;
INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, n)
    SELECT workspace_id, 'stage', stage_id, coalesce(client_id, ''), count(*) FROM leads WHERE stage_id IS NOT NULL
    GROUP BY workspace_id, stage_id, coalesce(client_id, '');
INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, n)
    SELECT l.workspace_id, 'tag', lt.tag_id, coalesce(l.client_id, ''), count(*) FROM lead_tags AS lt JOIN leads AS l ON l.id = lt.lead_id
    GROUP BY l.workspace_id, lt.tag_id, coalesce(l.client_id, '');

-- A lead's stage counts where the lead is; its tags count with it when it
-- moves to another client.
CREATE TRIGGER leads_facet_insert AFTER INSERT ON leads WHEN new.stage_id IS NOT NULL BEGIN
    INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, n)
    VALUES (new.workspace_id, 'stage', new.stage_id, coalesce(new.client_id, ''), 1)
    ON CONFLICT (workspace_id, kind, facet_id, client_key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER leads_facet_delete AFTER DELETE ON leads BEGIN
    UPDATE lead_facet_counts SET n = n - 1
    WHERE workspace_id = old.workspace_id AND kind = 'stage' AND facet_id = old.stage_id AND client_key = coalesce(old.client_id, '');
    UPDATE lead_facet_counts SET n = n - 1
    WHERE workspace_id = old.workspace_id AND kind = 'tag' AND facet_id IN (SELECT tag_id FROM lead_tags WHERE lead_id = old.id)
      AND client_key = coalesce(old.client_id, '');
END;
CREATE TRIGGER leads_facet_move AFTER UPDATE OF stage_id, client_id ON leads
WHEN old.stage_id IS NOT new.stage_id OR old.client_id IS NOT new.client_id BEGIN
    UPDATE lead_facet_counts SET n = n - 1
    WHERE workspace_id = old.workspace_id AND kind = 'stage' AND facet_id = old.stage_id AND client_key = coalesce(old.client_id, '');
    INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, n)
    SELECT new.workspace_id, 'stage', new.stage_id, coalesce(new.client_id, ''), 1 WHERE new.stage_id IS NOT NULL
    ON CONFLICT (workspace_id, kind, facet_id, client_key) DO UPDATE SET n = n + 1;
    UPDATE lead_facet_counts SET n = n - 1
    WHERE old.client_id IS NOT new.client_id AND workspace_id = old.workspace_id AND kind = 'tag'
      AND facet_id IN (SELECT tag_id FROM lead_tags WHERE lead_id = old.id) AND client_key = coalesce(old.client_id, '');
    INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, n)
    SELECT new.workspace_id, 'tag', tag_id, coalesce(new.client_id, ''), 1 FROM lead_tags
    WHERE old.client_id IS NOT new.client_id AND lead_id = new.id
    ON CONFLICT (workspace_id, kind, facet_id, client_key) DO UPDATE SET n = n + 1;
END;

-- A tag counts under its lead's workspace and client. (A lead's tags go
-- before the lead does: the lead is still there to say where they count.)
CREATE TRIGGER lead_tags_facet_insert AFTER INSERT ON lead_tags BEGIN
    INSERT INTO lead_facet_counts (workspace_id, kind, facet_id, client_key, n)
    SELECT workspace_id, 'tag', new.tag_id, coalesce(client_id, ''), 1 FROM leads WHERE id = new.lead_id
    ON CONFLICT (workspace_id, kind, facet_id, client_key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER lead_tags_facet_delete AFTER DELETE ON lead_tags BEGIN
    UPDATE lead_facet_counts SET n = n - 1
    WHERE kind = 'tag' AND facet_id = old.tag_id
      AND (workspace_id, client_key) = (SELECT workspace_id, coalesce(client_id, '') FROM leads WHERE id = old.lead_id);
END;
