-- Matching by public identifier takes the oldest lead: with id in the
-- index it is read in order, without walking the workspace.
DROP INDEX leads_public_identifier;
CREATE INDEX leads_public_identifier ON leads (workspace_id, public_identifier, id) WHERE public_identifier IS NOT NULL;
