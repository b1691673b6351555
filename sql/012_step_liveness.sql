-- 012: whether a running step's process still lives. `pid` is the process that runs the step
-- on `host`; `heartbeat_at` is the last time it said so (every 15 s while the step runs).
-- A running step whose process on this host is gone, or that has been silent longer than
-- the step lease, is abandoned: the next step of its migration (or a status read) marks it
-- failed, and its process can no longer end it (audit/liveness.py).

ALTER TABLE steps ADD COLUMN pid INTEGER;
ALTER TABLE steps ADD COLUMN heartbeat_at BIGINT;
