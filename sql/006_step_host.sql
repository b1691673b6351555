-- 006: the host that ran each step (a Celery worker's name such as worker1@host, or the
-- machine of a command line), so that a run spread over several workers can be followed.

ALTER TABLE steps ADD COLUMN host VARCHAR(250);
