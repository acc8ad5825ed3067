-- What a reply tells about the lead, kept on its thread: when a lead who
-- is away is back (a note, not a delay, when a person wrote it), and the
-- person a "no longer with the company" reply names instead.
ALTER TABLE threads ADD COLUMN returns_at timestamptz;
ALTER TABLE threads ADD COLUMN replacement_name TEXT;
ALTER TABLE threads ADD COLUMN replacement_email TEXT;
