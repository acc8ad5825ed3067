-- seq is the stable integer key the full-text index refers to; id is the
-- public uuid.
CREATE TABLE leads (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    client_id TEXT REFERENCES clients(id),
    list_id TEXT REFERENCES lists(id),
    stage_id TEXT REFERENCES stages(id),
    email_work TEXT,
    email_personal TEXT,
    public_identifier TEXT,
    linkedin_id TEXT,
    provider_id TEXT,
    name TEXT,
    company TEXT,
    headline TEXT,
    location TEXT,
    source TEXT,
    custom TEXT NOT NULL DEFAULT '{}',
    profile TEXT,
    do_not_contact INTEGER NOT NULL DEFAULT 0,
    do_not_contact_at TEXT,
    do_not_contact_reason TEXT,
    replied INTEGER NOT NULL DEFAULT 0,
    enriched_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX leads_ws ON leads (workspace_id, id);
CREATE UNIQUE INDEX leads_linkedin_id ON leads (workspace_id, linkedin_id) WHERE linkedin_id IS NOT NULL;
CREATE UNIQUE INDEX leads_provider_id ON leads (workspace_id, provider_id) WHERE provider_id IS NOT NULL;
CREATE UNIQUE INDEX leads_email_work ON leads (workspace_id, lower(email_work)) WHERE email_work IS NOT NULL;
CREATE UNIQUE INDEX leads_email_personal ON leads (workspace_id, lower(email_personal)) WHERE email_personal IS NOT NULL;
CREATE INDEX leads_public_identifier ON leads (workspace_id, public_identifier) WHERE public_identifier IS NOT NULL;
CREATE INDEX leads_client ON leads (workspace_id, client_id, id);
CREATE INDEX leads_list ON leads (workspace_id, list_id, id) WHERE list_id IS NOT NULL;
CREATE INDEX leads_stage ON leads (workspace_id, stage_id, id) WHERE stage_id IS NOT NULL;
CREATE INDEX leads_source ON leads (workspace_id, source, id) WHERE source IS NOT NULL;
CREATE INDEX leads_updated ON leads (workspace_id, updated_at);

CREATE VIRTUAL TABLE leads_fts USING fts5(
    name, company, headline, email_work,
    content='leads', content_rowid='seq', tokenize='trigram'
);
CREATE TRIGGER leads_fts_insert AFTER INSERT ON leads BEGIN
    INSERT INTO leads_fts (rowid, name, company, headline, email_work)
    VALUES (new.seq, new.name, new.company, new.headline, new.email_work);
END;
CREATE TRIGGER leads_fts_delete AFTER DELETE ON leads BEGIN
    INSERT INTO leads_fts (leads_fts, rowid, name, company, headline, email_work)
    VALUES ('delete', old.seq, old.name, old.company, old.headline, old.email_work);
END;
CREATE TRIGGER leads_fts_update AFTER UPDATE OF name, company, headline, email_work ON leads BEGIN
    INSERT INTO leads_fts (leads_fts, rowid, name, company, headline, email_work)
    VALUES ('delete', old.seq, old.name, old.company, old.headline, old.email_work);
    INSERT INTO leads_fts (rowid, name, company, headline, email_work)
    VALUES (new.seq, new.name, new.company, new.headline, new.email_work);
END;

CREATE TABLE lead_tags (
    lead_id TEXT NOT NULL REFERENCES leads(id),
    tag_id TEXT NOT NULL REFERENCES tags(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (lead_id, tag_id)
);
CREATE INDEX lead_tags_tag ON lead_tags (tag_id, lead_id);

CREATE TABLE suppressions (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    reason TEXT,
    member_id TEXT,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX suppressions_value ON suppressions (workspace_id, kind, value);

CREATE TABLE enrichment_requests (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    lead_id TEXT NOT NULL REFERENCES leads(id),
    want_posts INTEGER NOT NULL DEFAULT 0,
    force INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX enrichment_queued ON enrichment_requests (lead_id) WHERE status = 'queued';
CREATE INDEX enrichment_status ON enrichment_requests (status, created_at);
