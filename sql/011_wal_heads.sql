-- 011: what each listing proved of one WAL chain (a server's WAL group) through the newest
-- file it saw in the chain's live folder, the head, named at `head_time`. Rolls of a chain
-- run one at a time, so a file older than the head appeared before the listing read the
-- folder: the listing saw it unless it appeared before `older_seen_from` (the listing's end
-- less the archive TTL, after which an archived file may be gone). The live folder always
-- holds the file being written, so a file newer than the head appeared after the listing
-- began: none had appeared by `newer_after`. One row per head; later listings that saw the
-- same head widen it. These replace 009's stretches of one chain, which are no longer
-- written (replay/coverage.py).

CREATE TABLE wal_heads (
    id              {autoid},
    migration_id    BIGINT       NOT NULL REFERENCES migrations (id),
    stream          VARCHAR(32)  NOT NULL,
    server          VARCHAR(250) NOT NULL,
    wal_group       VARCHAR(250) NOT NULL DEFAULT '',
    head_time       BIGINT       NOT NULL,
    older_seen_from BIGINT       NOT NULL,
    newer_after     BIGINT       NOT NULL,
    UNIQUE (migration_id, stream, server, wal_group, head_time)
);
