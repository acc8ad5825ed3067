-- Failed console sign-ins, counted per key ("account <email>" for the
-- email typed, "address <ip>" for where it came from) in windows that
-- every replica shares: the sign-in limits hold however many API replicas
-- serve the console. A row whose window ended is reset by the next
-- failure, or deleted by the sweep.
CREATE TABLE sign_in_failures (
    key text PRIMARY KEY,
    window_start timestamptz NOT NULL,
    failures integer NOT NULL
);
CREATE INDEX sign_in_failures_window ON sign_in_failures (window_start);
