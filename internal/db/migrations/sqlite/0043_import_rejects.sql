-- Every rejected row of an import, not only the first 100 the errors
-- column kept: GET /v1/imports/{id} pages them and
-- GET /v1/imports/{id}/rejected.csv lists them all. A running job writes
-- the rows each batch rejected with the batch's counts. The errors column
-- is no longer written; the rows it kept are copied here.
CREATE TABLE import_rejects (
    import_id TEXT NOT NULL REFERENCES imports(id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    code TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (import_id, line)
);
INSERT OR IGNORE INTO import_rejects (import_id, line, code, reason)
SELECT i.id, json_extract(e.value, '$.line'), json_extract(e.value, '$.code'), json_extract(e.value, '$.reason')
FROM imports i, json_each(i.errors) e
WHERE json_extract(e.value, '$.line') IS NOT NULL;

-- Rows imported after a one-line field's line breaks or tabs became
-- spaces (a cell written with Alt+Enter in a spreadsheet).
ALTER TABLE imports ADD COLUMN normalized INTEGER NOT NULL DEFAULT 0;
