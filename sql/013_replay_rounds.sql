-- 013: what each replay run wrote to the target, so the live validation of its round compares
-- only those rows (validate/rounds.py). A replay step records its round as it starts
-- (`rows_known` false) and its rows as it ends; a round still unknown after its step ended
-- (the process was killed) makes the next round's validation read the tables whole.
-- `validated_by` is the validation that compared the round (NULL: none yet).

CREATE TABLE replay_rounds (
    step_id       BIGINT       PRIMARY KEY REFERENCES steps (id),
    migration_id  BIGINT       NOT NULL REFERENCES migrations (id),
    started_at    BIGINT       NOT NULL,  -- every edit synced before it is read by the run
    rows_known    BOOLEAN      NOT NULL,
    validated_by  BIGINT       REFERENCES steps (id)
);
CREATE INDEX replay_rounds_open ON replay_rounds (migration_id, validated_by);

-- the rows, per target table: row keys sorted, each a 4-byte big-endian length and the key,
-- zlib-compressed and base64-encoded; NULL when more than could be listed were written
CREATE TABLE round_rows (
    step_id       BIGINT       NOT NULL REFERENCES steps (id),
    table_name    VARCHAR(250) NOT NULL,  -- target table
    row_count     BIGINT,                 -- NULL with row_keys NULL
    row_keys      TEXT,
    PRIMARY KEY (step_id, table_name)
);
