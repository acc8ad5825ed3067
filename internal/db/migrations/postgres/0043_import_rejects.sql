-- Every rejected row of an import, not only the first 100 the errors
-- column kept: GET /v1/imports/{id} pages them and
-- GET /v1/imports/{id}/rejected.csv lists them all. A running job writes
-- the rows each batch rejected with the batch's counts. The errors column
-- is no longer written; the rows it kept are copied here.
CREATE TABLE import_rejects (
    import_id uuid NOT NULL REFERENCES imports(id) ON DELETE CASCADE,
    line integer NOT NULL,
    code text NOT NULL,
    reason text NOT NULL,
    PRIMARY KEY (import_id, line)
);
INSERT INTO import_rejects (import_id, line, code, reason)
SELECT i.id, (e.value->>'line')::integer, e.value->>'code', e.value->>'reason'
FROM imports i, jsonb_array_elements(i.errors) e
WHERE jsonb_typeof(e.value->'line') = 'number'
ON CONFLICT DO NOTHING;

-- Rows imported after a one-line field's line breaks or tabs became
-- spaces (a cell written with Alt+Enter in a spreadsheet).
ALTER TABLE imports ADD COLUMN normalized integer NOT NULL DEFAULT 0;
