-- 009: the stretches of time in which every WAL file a source server created was listed.
-- A file lives at least the archive TTL after it is created (it is archived only once
-- closed, then kept for the TTL), so a listing that ran from `started` to `ended` saw every
-- file created in [ended - ttl, started]; listings closer than the TTL join into one stretch.
-- A listing also saw each live chain's newest file: no file of that chain was created between
-- it and the listing (HBase never archives the file it is writing), a stretch of that chain
-- alone (`server`, `wal_group`; both '' for a stretch of every chain).
-- Replay proves a WAL chain whole where these stretches cover it (replay/coverage.py).

CREATE TABLE wal_watch (
    id           {autoid},
    migration_id BIGINT       NOT NULL REFERENCES migrations (id),
    stream       VARCHAR(32)  NOT NULL,   -- the ledger's stream of WAL progress (source, cdc)
    server       VARCHAR(250) NOT NULL DEFAULT '',
    wal_group    VARCHAR(250) NOT NULL DEFAULT '',
    seen_from    BIGINT       NOT NULL,   -- every file created in [seen_from, seen_to] was listed
    seen_to      BIGINT       NOT NULL,
    CHECK (seen_from <= seen_to)
);
CREATE INDEX wal_watch_by_migration ON wal_watch (migration_id, stream, server, wal_group,
                                             seen_to);
