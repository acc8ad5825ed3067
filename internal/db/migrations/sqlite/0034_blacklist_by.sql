-- Who added a blacklist entry: the member who added it in the console, or
-- NULL for the setup file and the command line (`leadline blacklist add`),
-- which act for the operator. Entries listed before this column existed
-- read NULL.
ALTER TABLE blacklist ADD COLUMN member_id TEXT REFERENCES members(id);
