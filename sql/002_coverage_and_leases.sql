-- 002: gaps without a WAL file (stretches of a server's WAL chain no listing ever saw),
-- the WAL file current on each live server at the watermark, and lease locks held in the
-- ledger itself when the source has no ZooKeeper.

-- gaps: wal_file_id becomes optional; kind says which evidence found the gap:
--   vanished  a listed WAL file disappeared before it was replayed (wal_file_id set)
--   missing   a stretch of a server's WAL chain that no listing ever saw (no file row)
CREATE TABLE gaps_v2 (
    id           {autoid},
    migration_id BIGINT       NOT NULL REFERENCES migrations (id),
    kind         VARCHAR(16)  NOT NULL CHECK (kind IN ('vanished', 'missing')),
    wal_file_id  BIGINT       UNIQUE REFERENCES wal_files (id),
    server       VARCHAR(250) NOT NULL,
    wal_group    VARCHAR(250) NOT NULL DEFAULT '',  -- the WAL prefix (multiwal, meta)
    first_time   BIGINT,      -- lower bound of the lost edits' write times
    last_time    BIGINT,      -- upper bound
    detail       TEXT,        -- what was expected and not found
    detected_at  BIGINT       NOT NULL,
    remedy       TEXT         NOT NULL,
    resolved_at  BIGINT,
    CHECK ((kind = 'vanished') = (wal_file_id IS NOT NULL))
);
INSERT INTO gaps_v2 (migration_id, kind, wal_file_id, server, first_time, last_time,
                     detected_at, remedy, resolved_at)
    SELECT migration_id, 'vanished', wal_file_id, server, first_time, last_time, detected_at,
           remedy, resolved_at
    FROM gaps ORDER BY id;
DROP TABLE gaps;
ALTER TABLE gaps_v2 RENAME TO gaps;
CREATE UNIQUE INDEX gaps_missing_once ON gaps (migration_id, server, wal_group, first_time)
    WHERE kind = 'missing';

-- The WAL file each live source server was writing when the watermark was fixed: the first
-- replay proves its reading starts there.
CREATE TABLE wal_anchors (
    id           {autoid},
    migration_id BIGINT       NOT NULL REFERENCES migrations (id),
    server       VARCHAR(250) NOT NULL,
    wal_group    VARCHAR(250) NOT NULL DEFAULT '',
    path         TEXT         NOT NULL,
    name_time    BIGINT,
    watermark    BIGINT       NOT NULL,
    recorded_at  BIGINT       NOT NULL,
    UNIQUE (migration_id, server, wal_group)
);

-- A named lease (one row per lock): held by ``holder`` until ``expires_at``; renewed while
-- the holder works, taken over only after it expired.
CREATE TABLE leases (
    name         VARCHAR(250) NOT NULL PRIMARY KEY,
    holder       TEXT         NOT NULL,
    acquired_at  BIGINT       NOT NULL,
    expires_at   BIGINT       NOT NULL
);
