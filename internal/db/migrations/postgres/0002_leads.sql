CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE leads (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    client_id uuid REFERENCES clients(id),
    list_id uuid REFERENCES lists(id),
    stage_id uuid REFERENCES stages(id),
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
    custom jsonb NOT NULL DEFAULT '{}',
    profile jsonb,
    do_not_contact boolean NOT NULL DEFAULT false,
    do_not_contact_at timestamptz,
    do_not_contact_reason TEXT,
    replied boolean NOT NULL DEFAULT false,
    enriched_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
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
-- One trigram index over the four searchable fields, joined by a unit
-- separator so that a search never matches across two fields.
CREATE INDEX leads_search ON leads USING gin (
    (coalesce(name, '') || E'\x1f' || coalesce(company, '') || E'\x1f' || coalesce(headline, '') || E'\x1f' || coalesce(email_work, '')) gin_trgm_ops
);

CREATE TABLE lead_tags (
    lead_id uuid NOT NULL REFERENCES leads(id),
    tag_id uuid NOT NULL REFERENCES tags(id),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (lead_id, tag_id)
);
CREATE INDEX lead_tags_tag ON lead_tags (tag_id, lead_id);

CREATE TABLE suppressions (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    reason TEXT,
    member_id uuid,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX suppressions_value ON suppressions (workspace_id, kind, value);

CREATE TABLE enrichment_requests (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    lead_id uuid NOT NULL REFERENCES leads(id),
    want_posts boolean NOT NULL DEFAULT false,
    force boolean NOT NULL DEFAULT false,
    status TEXT NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX enrichment_queued ON enrichment_requests (lead_id) WHERE status = 'queued';
CREATE INDEX enrichment_status ON enrichment_requests (status, created_at);
