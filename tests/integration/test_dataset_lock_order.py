"""The stores of one dataset take its lock in the order they asked for it (db/datasets.py,
LOCK_OR_CREATE): a late store never overtakes one already waiting, so a remember's wait is bounded
by the stores ahead of it (bench/reference_load.py: p95 1.23-1.40 times the median, 3.0-3.7 with
the no-op update it replaced, which let a late store overtake 14 others)."""

from __future__ import annotations

import threading
import time

import psycopg

WAITERS = 4
ROUNDS = 3


def dataset_row_version(conn: psycopg.Connection) -> str:
    return conn.execute(
        "SELECT xmin::text FROM gb_datasets WHERE user_id = 'u1' AND name = 'main'"
    ).fetchone()[0]


def test_taking_the_lock_writes_no_new_version_of_the_dataset_row(db, test_database):
    with test_database.transaction("u1", "main", lock_dataset=True) as uow:
        created = uow.dataset_id
    version = dataset_row_version(db)
    for pipeline in (False, True):
        with test_database.transaction("u1", "main", lock_dataset=True, pipeline=pipeline) as uow:
            assert uow.dataset_id == created
    assert dataset_row_version(db) == version


def waiting_for_a_lock(conn: psycopg.Connection) -> int:
    """Backends of the service's role waiting on a lock."""
    return conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE usename = 'gligabao_app' AND wait_event_type = 'Lock'"
    ).fetchone()[0]


def wait_until(check, seconds: float = 10.0) -> None:
    ends = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < ends, "timed out"
        time.sleep(0.01)


def one_round_of_waiters(db: psycopg.Connection, test_database) -> list[int]:
    """A store holds the lock (-1) while WAITERS stores ask for it one after the other (each seen
    waiting before the next asks); then it commits: the order in which they all held it."""
    order: list[int] = []
    holding, release = threading.Event(), threading.Event()

    def store(index: int) -> None:
        try:
            with test_database.transaction("u1", "main", lock_dataset=True):
                order.append(index)
                if index < 0:
                    holding.set()
                    release.wait(10)
                else:
                    time.sleep(0.02)  # a store's writes: the next waiter is woken meanwhile
        finally:
            test_database.close()

    threads = [threading.Thread(target=store, args=(-1,))]
    threads[0].start()
    assert holding.wait(10)
    for index in range(WAITERS):
        threads.append(threading.Thread(target=store, args=(index,)))
        threads[-1].start()
        wait_until(lambda index=index: waiting_for_a_lock(db) == index + 1)
    release.set()
    for thread in threads:
        thread.join(20)
    return order


def test_waiting_stores_take_the_dataset_lock_in_the_order_they_asked(db, test_database):
    with test_database.transaction("u1", "main", lock_dataset=True):
        pass  # the dataset exists: every store below takes the lock of its row
    for _ in range(ROUNDS):
        assert one_round_of_waiters(db, test_database) == [-1, *range(WAITERS)]


def test_a_store_creates_the_dataset_another_is_creating_once(db, test_database):
    """Two stores of a new dataset: the second waits for the first's row, then locks it."""
    ids: list[int] = []
    created = threading.Event()
    release = threading.Event()

    def first() -> None:
        try:
            with test_database.transaction("u1", "fresh", lock_dataset=True) as uow:
                ids.append(uow.dataset_id)
                created.set()
                release.wait(10)
        finally:
            test_database.close()

    def second() -> None:
        try:
            with test_database.transaction("u1", "fresh", lock_dataset=True) as uow:
                ids.append(uow.dataset_id)
        finally:
            test_database.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    threads[0].start()
    assert created.wait(10)
    threads[1].start()
    wait_until(lambda: waiting_for_a_lock(db) == 1)
    release.set()
    for thread in threads:
        thread.join(20)
    assert len(ids) == 2 and ids[0] == ids[1]
    assert db.execute("SELECT count(*) FROM gb_datasets WHERE name = 'fresh'").fetchone()[0] == 1
