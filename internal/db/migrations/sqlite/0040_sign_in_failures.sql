-- Failed console sign-ins, counted per key ("account <email>" for the
-- email typed, "address <ip>" for where it came from) in windows that
-- every process on the database shares. A row whose window ended is reset
-- by the next failure, or deleted by the sweep.
CREATE TABLE sign_in_failures (
    key TEXT PRIMARY KEY,
    window_start TEXT NOT NULL,
    failures INTEGER NOT NULL
);
CREATE INDEX sign_in_failures_window ON sign_in_failures (window_start);
