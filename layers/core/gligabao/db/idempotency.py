"""Powertools' idempotency records in PostgreSQL (gb_idempotency_records), per user.

`IdempotencyRecords(database, user_id)` is a persistence layer of Powertools' idempotency utility
(aws_lambda_powertools.utilities.idempotency): Powertools decides when to save, read, complete or
delete a record; this class only stores them, each operation one short transaction of the user
(so row-level security applies), every query filtered by the user as well. Times are compared
with the clock Powertools computes them with (this process's), as its DynamoDB layer does.
"""

from __future__ import annotations

from datetime import UTC, datetime

from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from gligabao.db.connection import Database

_COLUMNS = """status, payload_hash, response,
              extract(epoch FROM expires_at)::bigint AS expires_at,
              (extract(epoch FROM in_progress_expires_at) * 1000)::bigint AS in_progress_expires_at"""

# A new record, or one that replaces an expired record or an abandoned in-progress one (its
# invocation ended without completing it); the same statement deletes the user's other expired
# records and, when a live record holds the key, returns it (as the statement's snapshot saw it:
# none when it was committed meanwhile, and Powertools then reads it again).
_PUT = f"""
WITH expired AS (
    DELETE FROM gb_idempotency_records
    WHERE user_id = %(user_id)s AND expires_at <= %(now)s AND key <> %(key)s
), taken AS (
    INSERT INTO gb_idempotency_records AS held
           (user_id, key, status, payload_hash, response, expires_at, in_progress_expires_at)
    VALUES (%(user_id)s, %(key)s, %(status)s, %(payload_hash)s, NULL, %(expires_at)s, %(in_progress_expires_at)s)
    ON CONFLICT (user_id, key) DO UPDATE
    SET status = excluded.status, payload_hash = excluded.payload_hash, response = NULL,
        expires_at = excluded.expires_at, in_progress_expires_at = excluded.in_progress_expires_at,
        created_at = now()
    WHERE held.expires_at <= %(now)s
       OR (held.status = 'INPROGRESS' AND held.in_progress_expires_at <= %(now)s)
    RETURNING key
)
SELECT EXISTS (SELECT FROM taken) AS taken, held.*
FROM (SELECT) AS one
LEFT JOIN (
    SELECT {_COLUMNS} FROM gb_idempotency_records WHERE user_id = %(user_id)s AND key = %(key)s
) AS held ON true
"""


class IdempotencyRecords(BasePersistenceLayer):
    """The idempotency records of one user."""

    def __init__(self, database: Database, user_id: str):
        super().__init__()
        self._database = database
        self._user_id = user_id

    def _get_record(self, idempotency_key: str) -> DataRecord:
        with self._database.transaction(self._user_id) as work:
            row = _held(work.conn, self._user_id, idempotency_key)
        if row is None or row["expires_at"] <= _now().timestamp():
            raise IdempotencyItemNotFoundError
        return _record(idempotency_key, row)

    def _put_record(self, data_record: DataRecord) -> None:
        now = _now()
        in_progress_until = data_record.in_progress_expiry_timestamp
        with self._database.transaction(self._user_id) as work:
            row = work.conn.execute(
                _PUT,
                {
                    "user_id": self._user_id,
                    "key": data_record.idempotency_key,
                    "status": data_record.status,
                    "payload_hash": data_record.payload_hash,
                    "expires_at": _instant(data_record.expiry_timestamp),
                    "in_progress_expires_at": _instant(in_progress_until / 1000)
                    if in_progress_until is not None
                    else None,
                    "now": now,
                },
            ).fetchone()
        if row["taken"]:
            return
        if row["status"] is None:  # not in the statement's snapshot: Powertools reads it again
            raise IdempotencyItemAlreadyExistsError
        old = _record(data_record.idempotency_key, row)
        self._validate_payload(data_payload=data_record, stored_data_record=old)
        raise IdempotencyItemAlreadyExistsError(old_data_record=old)

    def _update_record(self, data_record: DataRecord) -> None:
        with self._database.transaction(self._user_id) as work:
            work.conn.execute(
                """UPDATE gb_idempotency_records
                   SET status = %s, response = %s, payload_hash = %s, expires_at = %s
                   WHERE user_id = %s AND key = %s""",
                [
                    data_record.status,
                    data_record.response_data,
                    data_record.payload_hash,
                    _instant(data_record.expiry_timestamp),
                    self._user_id,
                    data_record.idempotency_key,
                ],
            )

    def _delete_record(self, data_record: DataRecord) -> None:
        with self._database.transaction(self._user_id) as work:
            work.conn.execute(
                "DELETE FROM gb_idempotency_records WHERE user_id = %s AND key = %s",
                [self._user_id, data_record.idempotency_key],
            )


def _held(conn, user_id: str, key: str) -> dict | None:
    return conn.execute(
        f"SELECT {_COLUMNS} FROM gb_idempotency_records WHERE user_id = %s AND key = %s", [user_id, key]
    ).fetchone()


def _record(key: str, row: dict) -> DataRecord:
    return DataRecord(
        idempotency_key=key,
        status=row["status"],
        expiry_timestamp=row["expires_at"],
        in_progress_expiry_timestamp=row["in_progress_expires_at"],
        response_data=row["response"] or "",
        payload_hash=row["payload_hash"],
    )


def _now() -> datetime:
    return datetime.now(UTC)


def _instant(epoch_seconds: float | None) -> datetime | None:
    return None if epoch_seconds is None else datetime.fromtimestamp(epoch_seconds, UTC)
