-- Idempotent remember: the first response to an Idempotency-Key, kept per user for its retries
-- (Powertools' idempotency records, in the service's own database).
--
-- key: the operation and a hash of the user and the header's value (never the value itself);
-- payload_hash: a hash of the request, so that the key reused with another body is refused;
-- response: the first response (status, headers, body) as JSON, once completed. A row is ignored
-- once expires_at is past (expired rows of a user are deleted by that user's next keyed request);
-- an in-progress row whose in_progress_expires_at is past (its invocation was killed) may be
-- taken over by a retry.
CREATE TABLE gb_idempotency_records (
    user_id                 text NOT NULL CHECK (user_id <> ''),
    key                     text NOT NULL,
    status                  text NOT NULL CHECK (status IN ('INPROGRESS', 'COMPLETED')),
    payload_hash            text NOT NULL,
    response                text,
    expires_at              timestamptz NOT NULL,
    in_progress_expires_at  timestamptz,
    created_at              timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);

CREATE INDEX gb_idempotency_records_expiry ON gb_idempotency_records (user_id, expires_at);

-- The responses are user data: each transaction sees and writes only the rows of its user (the
-- units of work set gligabao.user_id with their BEGIN; without it, no row), the table's owner
-- included (FORCE: no migration reads this table's rows). NULLIF: after a first transaction the
-- setting exists in the session with ''.
ALTER TABLE gb_idempotency_records ENABLE ROW LEVEL SECURITY;
ALTER TABLE gb_idempotency_records FORCE ROW LEVEL SECURITY;
CREATE POLICY gb_idempotency_records_of_the_user ON gb_idempotency_records
    USING (user_id = NULLIF(current_setting('gligabao.user_id', true), ''))
    WITH CHECK (user_id = NULLIF(current_setting('gligabao.user_id', true), ''));
