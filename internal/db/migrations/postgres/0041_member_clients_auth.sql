-- A key now acts for its own clients that its creator still sees, as its
-- role is the lower of its own and its creator's: a change of a member's
-- clients changes what their keys reach, so it raises the workspace's
-- authentication version too (0016), and a process that remembers a key's
-- principal reads it again. member_clients has no workspace_id: the
-- member's row gives it.
CREATE FUNCTION member_clients_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ws uuid;
BEGIN
    SELECT workspace_id INTO ws FROM members
    WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.member_id ELSE NEW.member_id END;
    IF ws IS NOT NULL THEN
        INSERT INTO auth_versions (workspace_id, version) VALUES (ws, 1)
        ON CONFLICT (workspace_id) DO UPDATE SET version = auth_versions.version + 1;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER member_clients_auth AFTER INSERT OR UPDATE OR DELETE ON member_clients
    FOR EACH ROW EXECUTE FUNCTION member_clients_auth_changed();
