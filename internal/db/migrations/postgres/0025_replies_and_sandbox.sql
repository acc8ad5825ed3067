-- What a reply tells about the lead, kept on its thread: when a lead who
-- is away is back (a note, not a delay, when a person wrote it), and the
-- person a "no longer with the company" reply names instead.
ALTER TABLE threads ADD COLUMN returns_at timestamptz;
ALTER TABLE threads ADD COLUMN replacement_name TEXT;
ALTER TABLE threads ADD COLUMN replacement_email TEXT;

-- The sandbox network's state that every process on one database shares:
-- the result of each action performed (by idempotency key), the inbound
-- events and the meetings booked not yet handed over, by when they are due.
CREATE TABLE sandbox_actions (
    key TEXT PRIMARY KEY,
    result TEXT NOT NULL
);
CREATE TABLE sandbox_inbound (
    id bigserial PRIMARY KEY,
    due_at timestamptz NOT NULL,
    event TEXT NOT NULL
);
CREATE INDEX sandbox_inbound_due ON sandbox_inbound (due_at, id);
CREATE TABLE sandbox_bookings (
    id bigserial PRIMARY KEY,
    due_at timestamptz NOT NULL,
    booking TEXT NOT NULL
);
CREATE INDEX sandbox_bookings_due ON sandbox_bookings (due_at, id);
