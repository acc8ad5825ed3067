-- A key now acts for its own clients that its creator still sees, as its
-- role is the lower of its own and its creator's: a change of a member's
-- clients changes what their keys reach, so it raises the workspace's
-- authentication version too (0016), and a process that remembers a key's
-- principal reads it again. member_clients has no workspace_id: the
-- member's row gives it.
CREATE OR REPLACE FUNCTION auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    row_ record;
    ws uuid;
BEGIN
    IF TG_OP = 'DELETE' THEN
        row_ := OLD;
    ELSE
        row_ := NEW;
    END IF;
    IF TG_TABLE_NAME = 'api_key_clients' THEN
        SELECT workspace_id INTO ws FROM api_keys WHERE id = row_.key_id;
    ELSIF TG_TABLE_NAME = 'member_clients' THEN
        SELECT workspace_id INTO ws FROM members WHERE id = row_.member_id;
    ELSIF TG_TABLE_NAME = 'workspaces' THEN
        ws := row_.id;
    ELSE
        ws := row_.workspace_id;
    END IF;
    IF ws IS NOT NULL THEN
        INSERT INTO auth_versions (workspace_id, version) VALUES (ws, 1)
        ON CONFLICT (workspace_id) DO UPDATE SET version = auth_versions.version + 1;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER member_clients_auth AFTER INSERT OR UPDATE OR DELETE ON member_clients
    FOR EACH ROW EXECUTE FUNCTION auth_changed();
