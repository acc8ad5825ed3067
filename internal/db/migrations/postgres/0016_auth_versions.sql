-- A number per workspace that grows whenever anything authentication
-- reads changes: a key's revocation, expiry, role, owner or clients, a
-- member's role or departure, the workspace's name, timezone, plan or
-- suspension. A process that keeps a key's principal in memory compares
-- the number it authenticated at with the one its read's rate count
-- returns, in the same statement, and authenticates again when they
-- differ: a change made by any replica or command holds from the next
-- request on.
CREATE TABLE auth_versions (
    workspace_id uuid PRIMARY KEY,
    version bigint NOT NULL
);

CREATE FUNCTION auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER api_keys_auth AFTER UPDATE OF revoked_at, expires_at, role, member_id, hash, workspace_id OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION auth_changed();
CREATE TRIGGER api_key_clients_auth AFTER INSERT OR UPDATE OR DELETE ON api_key_clients
    FOR EACH ROW EXECUTE FUNCTION auth_changed();
CREATE TRIGGER members_auth AFTER UPDATE OF role, active, email, workspace_id OR DELETE ON members
    FOR EACH ROW EXECUTE FUNCTION auth_changed();
CREATE TRIGGER workspaces_auth AFTER UPDATE OF name, timezone, plan, suspended OR DELETE ON workspaces
    FOR EACH ROW EXECUTE FUNCTION auth_changed();
