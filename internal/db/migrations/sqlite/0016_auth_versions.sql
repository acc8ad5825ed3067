-- Postgres keeps a number per workspace that grows whenever anything
-- authentication reads changes, so that processes may keep principals in
-- memory (see the Postgres migration). SQLite authenticates every request
-- in the database, which its process reads without a round trip; it keeps
-- the table, empty, so that both engines hold the same tables.
CREATE TABLE auth_versions (
    workspace_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL
);
