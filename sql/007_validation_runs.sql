-- 007: one validation run may be recorded by several steps (the parts of a validation, one
-- per group of key ranges, each its own Airflow task and ledger step). `run_key` names the
-- run every range row belongs to: the parts of one run share it, a whole validation has
-- `step-<its step id>`. The cutover gate and `status` read the newest run as one validation
-- (the newest row per range), and refuse it unless it covers every planned range.

ALTER TABLE validations ADD COLUMN run_key VARCHAR(255);
UPDATE validations SET run_key = 'step-' || step_id WHERE step_id IS NOT NULL;
CREATE INDEX validations_run ON validations (migration_id, run_key);
