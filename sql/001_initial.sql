-- 001: the audit ledger's first schema.
-- Times are integer milliseconds since the epoch; JSON is stored as text with sorted keys;
-- byte strings (range bounds) as lowercase hex, the empty string meaning an open bound.
-- {autoid} is the one construct SQLite and PostgreSQL spell differently (see README.md).

CREATE TABLE IF NOT EXISTS schema_version (
    version     INTEGER      NOT NULL PRIMARY KEY,
    description VARCHAR(200) NOT NULL,
    applied_at  BIGINT       NOT NULL
);

CREATE TABLE migrations (
    id          {autoid},
    name        VARCHAR(200) NOT NULL UNIQUE,
    source      TEXT         NOT NULL,   -- identity of the source cluster
    target      TEXT         NOT NULL,   -- identity of the target cluster
    tables      TEXT         NOT NULL,   -- JSON: [{"source", "target", "families"}]
    watermark   BIGINT,                  -- T0 of the snapshot copy
    state       VARCHAR(32)  NOT NULL,
    created_at  BIGINT       NOT NULL,
    updated_at  BIGINT       NOT NULL
);

CREATE TABLE steps (
    id           {autoid},
    migration_id BIGINT       NOT NULL REFERENCES migrations (id),
    kind         VARCHAR(64)  NOT NULL,  -- schema, copy, replay, validate, backfill, ...
    dag_id       VARCHAR(250),
    run_id       VARCHAR(250),
    task_id      VARCHAR(250),
    started_at   BIGINT       NOT NULL,
    ended_at     BIGINT,
    status       VARCHAR(16)  NOT NULL
                 CHECK (status IN ('running', 'succeeded', 'failed')),
    metrics      TEXT,                   -- JSON object
    error        TEXT
);
CREATE INDEX steps_by_migration ON steps (migration_id, kind);

CREATE TABLE wal_files (
    id                   {autoid},
    migration_id         BIGINT      NOT NULL REFERENCES migrations (id),
    cluster              VARCHAR(64) NOT NULL,
    server               VARCHAR(250) NOT NULL,
    path                 TEXT        NOT NULL,
    size                 BIGINT,
    name_time            BIGINT,     -- creation time carried by the file name
    first_seen           BIGINT      NOT NULL,
    last_seen            BIGINT      NOT NULL,
    vanished_at          BIGINT,
    status               VARCHAR(16) NOT NULL
                         CHECK (status IN ('seen', 'replaying', 'replayed', 'failed', 'gap',
                                           'skipped')),
    offset_reached       BIGINT      NOT NULL DEFAULT 0,  -- acknowledged by the target
    entries              BIGINT      NOT NULL DEFAULT 0,
    cells_by_type        TEXT,       -- JSON: {"Put": n, "DeleteColumn": n, ...}
    markers              TEXT,       -- JSON: {"BULK_LOAD": n, ...}
    approximated_deletes BIGINT      NOT NULL DEFAULT 0,
    error                TEXT,       -- last failure, or why the file was skipped
    last_write_time      BIGINT,     -- newest write_time replayed from this file
    updated_at           BIGINT      NOT NULL,
    UNIQUE (migration_id, cluster, path)
);
CREATE INDEX wal_files_by_status ON wal_files (migration_id, cluster, status);

CREATE TABLE validations (
    id                {autoid},
    migration_id      BIGINT       NOT NULL REFERENCES migrations (id),
    step_id           BIGINT       REFERENCES steps (id),
    table_name        VARCHAR(250) NOT NULL,
    range_start       TEXT         NOT NULL,  -- hex; '' = from the first row
    range_end         TEXT         NOT NULL,  -- hex; '' = to the last row
    source_rows       BIGINT,
    target_rows       BIGINT,
    source_cells      BIGINT,
    target_cells      BIGINT,
    source_digest     VARCHAR(128),
    target_digest     VARCHAR(128),
    verdict           VARCHAR(16)  NOT NULL CHECK (verdict IN ('match', 'mismatch')),
    validated_at      BIGINT       NOT NULL,
    recompare_verdict VARCHAR(16)  CHECK (recompare_verdict IN ('match', 'mismatch')),
    recompared_at     BIGINT
);
CREATE INDEX validations_by_step ON validations (migration_id, step_id);

CREATE TABLE gaps (
    id           {autoid},
    migration_id BIGINT       NOT NULL REFERENCES migrations (id),
    wal_file_id  BIGINT       NOT NULL UNIQUE REFERENCES wal_files (id),
    server       VARCHAR(250) NOT NULL,
    first_time   BIGINT,      -- lower bound of the lost edits' write times
    last_time    BIGINT,      -- upper bound
    detected_at  BIGINT       NOT NULL,
    remedy       TEXT         NOT NULL,
    resolved_at  BIGINT
);
