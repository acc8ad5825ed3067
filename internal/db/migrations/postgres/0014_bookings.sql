-- Meeting bookings from scheduling providers (Cal.com, Calendly) and the
-- sandbox. A booking is kept once per provider and booking id, so that a
-- provider's retried webhook books nothing twice.
CREATE TABLE bookings (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    provider TEXT NOT NULL,
    booking_id TEXT NOT NULL,
    lead_id uuid REFERENCES leads(id),
    sender_id uuid REFERENCES senders(id),
    invitee_email TEXT NOT NULL,
    starts_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX bookings_provider ON bookings (workspace_id, provider, booking_id);
CREATE INDEX bookings_lead ON bookings (lead_id);

-- The signing secret of each provider's webhooks, per workspace (apply).
CREATE TABLE booking_secrets (
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    provider TEXT NOT NULL,
    secret TEXT NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, provider)
);
