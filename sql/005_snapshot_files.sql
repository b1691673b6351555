-- 005: the files of an HBase snapshot exported to the target (`[snapshot] method = "hbase"`).
-- One row per file of one snapshot: its path under the target's HBase root (the HFiles under
-- archive/data/..., the manifest under .hbase-snapshot/.tmp/<snapshot>/), where it was read
-- on the source (live or archive/), its size, how both sides were compared and what they
-- gave (JSON), and the step that last copied or checked it. A rerun copies a file again only
-- when the target's copy is missing or differs.

CREATE TABLE snapshot_files (
    id            {autoid},
    migration_id  BIGINT         NOT NULL REFERENCES migrations (id),
    snapshot      VARCHAR(255)   NOT NULL,
    path          VARCHAR(1024)  NOT NULL,
    source_path   VARCHAR(1024)  NOT NULL,
    size          BIGINT         NOT NULL,
    status        VARCHAR(16)    NOT NULL,  -- copied (and compared equal) or kept (equal already)
    checksum      TEXT           NOT NULL,  -- JSON: {"method", "source", "target"}
    copies        INTEGER        NOT NULL,  -- times it was copied
    step_id       BIGINT         REFERENCES steps (id),
    recorded_at   BIGINT         NOT NULL,
    UNIQUE (migration_id, snapshot, path)
);
