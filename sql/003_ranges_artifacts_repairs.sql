-- 003: the range engine. The key ranges of each migrated table (planned once, so a rerun
-- of the copy meets the same ranges) with the copy of each recorded as it finishes; the
-- Great Expectations artifacts and first differing cells of compared ranges; and every
-- repair of a range (what was written to the target, and the verdict after it).

CREATE TABLE key_ranges (
    id            {autoid},
    migration_id  BIGINT       NOT NULL REFERENCES migrations (id),
    table_name    VARCHAR(250) NOT NULL,  -- source table
    range_start   TEXT         NOT NULL,  -- hex; '' = from the first row
    range_end     TEXT         NOT NULL,  -- hex; '' = to the last row
    planned_cells BIGINT       NOT NULL,  -- cells the planning pass counted
    planned_at    BIGINT       NOT NULL,
    copy_step_id  BIGINT       REFERENCES steps (id),
    copied_rows   BIGINT,
    copied_cells  BIGINT,
    copied_at     BIGINT,                 -- NULL until the range is copied
    UNIQUE (migration_id, table_name, range_start)
);

-- Validation rows: the GX validation result (JSON) and Data Docs page of the run that
-- judged the range (paths under the migration's artifact folder), and the first differing
-- cells of a range that did not match (JSON list of text).
ALTER TABLE validations ADD COLUMN gx_result TEXT;
ALTER TABLE validations ADD COLUMN data_docs TEXT;
ALTER TABLE validations ADD COLUMN differences TEXT;

CREATE TABLE repairs (
    id            {autoid},
    migration_id  BIGINT       NOT NULL REFERENCES migrations (id),
    step_id       BIGINT       REFERENCES steps (id),
    table_name    VARCHAR(250) NOT NULL,  -- source table
    range_start   TEXT         NOT NULL,
    range_end     TEXT         NOT NULL,
    reason        VARCHAR(16)  NOT NULL CHECK (reason IN ('mismatch', 'bulk_load')),
    puts          BIGINT       NOT NULL,  -- cells written (missing or different on the target)
    deletes       BIGINT       NOT NULL,  -- exact-version deletes of cells only the target had
    verdict       VARCHAR(16)  CHECK (verdict IN ('match', 'mismatch')),  -- compared after
    detail        TEXT,                   -- JSON: the bulk load, the first changes
    repaired_at   BIGINT       NOT NULL
);
CREATE INDEX repairs_by_step ON repairs (migration_id, step_id);
