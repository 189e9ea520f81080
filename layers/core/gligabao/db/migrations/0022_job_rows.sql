-- Asynchronous remember's rows, mended.
--
-- A job's last attempt can end without running any of the worker's code (the Lambda's timeout, or
-- out of memory): SQS then moves its message to the dead-letter queue and no attempt ever marks the
-- artifact failed, so it stayed `running` for good and the datasets list counted it queued. The
-- last attempt now writes when it will have ended at the latest; a `running` artifact past that
-- time reads as failed (db/jobs.py, JOB_STATUS), and a redrive's attempt claims it again.
ALTER TABLE gb_artifacts ADD COLUMN gives_up_at timestamptz;

-- The options of the job queued for a pending text (reasoning, models, eval): a text is extracted
-- ahead only by a job of the same options, which is the only kind of job that can use it.
ALTER TABLE gb_artifacts ADD COLUMN job_options jsonb;

-- The texts queued next are prepared in the order they were queued, which is their ids' order.
DROP INDEX gb_artifacts_pending;
CREATE INDEX gb_artifacts_pending ON gb_artifacts (dataset_id, id) WHERE status = 'pending';
