-- 004: throttles changed while steps run. Every `hbase-migrate limits set` is one row: the
-- [limits] key, its new value (JSON: a number or true/false) and when it was set; the value
-- in force for a key is its newest row, else the migration config's.

CREATE TABLE limit_changes (
    id            {autoid},
    migration_id  BIGINT       NOT NULL REFERENCES migrations (id),
    name          VARCHAR(64)  NOT NULL,  -- a key of [limits]
    value         TEXT         NOT NULL,  -- JSON
    set_at        BIGINT       NOT NULL
);
CREATE INDEX limit_changes_by_migration ON limit_changes (migration_id, name, id);
