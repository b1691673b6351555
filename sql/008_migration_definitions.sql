-- 008: each migration's whole definition (its spec's tree with the clusters' endpoints
-- resolved: no ledger URL, no secret) and every earlier one. The newest row (highest `seq`)
-- is the definition in force; an older row is one corrected before anything was copied, or
-- settings a later run changed. `change` says in one line what differs from the row before
-- (NULL for the first). A migration recorded before this version has no row until a step
-- runs it again.

CREATE TABLE migration_definitions (
    id           {autoid},
    migration_id BIGINT  NOT NULL REFERENCES migrations (id),
    seq          INTEGER NOT NULL,          -- 1, 2, 3... per migration
    definition   TEXT    NOT NULL,          -- JSON: MigrationSpec.to_dict() as recorded
    change       TEXT,
    recorded_at  BIGINT  NOT NULL,
    UNIQUE (migration_id, seq)
);
