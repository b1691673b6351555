-- 010: a validation's range checksums, recorded as each range finishes (before the verdict),
-- so a validation stopped part way (killed, interrupted, a range failed) continues where it
-- stopped: the next validation with the same plan reads only the ranges not recorded here.
-- `plan` is the JSON of what the checksums depend on (ranges, watermark, how each side is
-- read, the newest replay run); `plan_key` its SHA-256. `resumed_from` names the step whose
-- row this one carries over (the range was not read again), NULL when read by this step.

CREATE TABLE range_checksums (
    id            {autoid},
    migration_id  BIGINT       NOT NULL REFERENCES migrations (id),
    step_id       BIGINT       NOT NULL REFERENCES steps (id),
    plan_key      VARCHAR(64)  NOT NULL,
    plan          TEXT         NOT NULL,
    table_name    VARCHAR(250) NOT NULL,  -- source table
    range_start   TEXT         NOT NULL,  -- hex
    range_end     TEXT         NOT NULL,  -- hex
    source_rows   BIGINT       NOT NULL,
    target_rows   BIGINT       NOT NULL,
    source_cells  BIGINT       NOT NULL,
    target_cells  BIGINT       NOT NULL,
    source_digest VARCHAR(64)  NOT NULL,
    target_digest VARCHAR(64)  NOT NULL,
    source_read   VARCHAR(250) NOT NULL,  -- 'live scan' or 'snapshot <name>'
    target_read   VARCHAR(250) NOT NULL,
    resumed_from  BIGINT       REFERENCES steps (id),
    recorded_at   BIGINT       NOT NULL,  -- when the range was read (kept when carried over)
    UNIQUE (step_id, table_name, range_start)
);
CREATE INDEX range_checksums_by_step ON range_checksums (migration_id, step_id);
