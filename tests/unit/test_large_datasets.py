"""LargeDatasets: the datasets a retrieval found too large for an exact scan, by id and creation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gligabao.memory.retrieval import LargeDatasets

CREATED = datetime(2026, 12, 3, tzinfo=UTC)


def test_only_the_indexes_searched_through_their_walk_are_noted():
    large = LargeDatasets()
    large.note(7, CREATED, 1000, {"entities": "exact", "edges": "hnsw", "chunks": "hnsw+exact"})

    assert large.indexes(7, CREATED, 1000) == {"edges", "chunks"}


def test_a_dataset_is_known_large_for_a_limit_at_most_the_one_it_exceeded():
    large = LargeDatasets()
    large.note(7, CREATED, 1000, {"edges": "hnsw"})

    assert (large.indexes(7, CREATED, 250), large.indexes(7, CREATED, 5000)) == ({"edges"}, frozenset())


def test_another_dataset_of_the_same_id_or_no_creation_time_is_not_known():
    large = LargeDatasets()
    large.note(7, CREATED, 1000, {"edges": "hnsw"})
    large.note(8, None, 1000, {"edges": "hnsw"})

    assert large.indexes(7, CREATED + timedelta(microseconds=1), 1000) == frozenset()
    assert large.indexes(8, None, 1000) == frozenset()


def test_past_its_size_it_forgets_every_dataset_and_keeps_the_new_one():
    large = LargeDatasets()
    large.MAX_DATASETS = 3
    for dataset_id in range(3):
        large.note(dataset_id, CREATED, 1000, {"edges": "hnsw"})
    large.note(99, CREATED, 1000, {"edges": "hnsw"})

    assert [large.indexes(i, CREATED, 1000) for i in (0, 99)] == [frozenset(), {"edges"}]
