"""The Python client's search, facts and dataset pages against the local API: typed results, the
filters sent as the API takes them (a body for search, query parameters for the list of facts),
every page walked, another user's fact a NotFoundError."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gligabao.api.edges_models import EdgeResource
from gligabao.api.search_models import SearchResponse
from gligabao.client import BadRequestError, Memory, NotFoundError

FACTS = {
    "entities": [{"name": "Alice", "type": "person"}, {"name": "Acme"}, {"name": "Paris"}, {"name": "Bob"}],
    "edges": [
        {"source": "Alice", "target": "Acme", "relation": "works_at", "valid_at": "2020-01-01T00:00:00Z"},
        {"source": "Alice", "target": "Paris", "relation": "lives_in", "valid_at": "2023-01-01T00:00:00Z"},
        {"source": "Alice", "target": "Bob", "relation": "knows", "valid_at": "2024-01-01T00:00:00Z"},
    ],
}


@pytest.fixture
def memory(api, models):
    with Memory(api.base_url, user_id="u1") as client:
        client.remember_facts(FACTS, session_id="s1", metadata={"source": "import"})
        yield client


def test_search_is_typed_and_takes_filters_with_datetimes(memory):
    everything = memory.search("Alice", limit=2)
    found = memory.search("Alice", filters={"valid_to": datetime(2023, 6, 1, tzinfo=UTC)})

    assert isinstance(found, SearchResponse)
    assert len(everything.edges) == 2  # of three: the limit
    assert sorted(e.relation for e in found.edges) == ["lives_in", "works_at"]  # valid before June 2023
    assert all(isinstance(e.score, float) and e.reasons for e in found.edges)
    with pytest.raises(BadRequestError):
        memory.search("Alice", filters={"colour": "red"})


def test_edges_walks_every_page_with_the_filters_as_query_parameters(memory):
    every = list(memory.edges(limit=1))
    labelled = list(
        memory.edges(limit=2, filters={"metadata": {"source": "import"}, "relations": ["knows", "works_at"]})
    )
    unlabelled = list(memory.edges(filters={"metadata": {"source": "other"}, "include_expired": True}))

    assert [e.relation for e in every] == ["works_at", "lives_in", "knows"]
    assert [e.relation for e in labelled] == ["works_at", "knows"]
    assert unlabelled == []


def test_edge_reads_a_fact_with_its_provenance_and_another_users_is_not_found(memory, api):
    first = next(memory.edges())

    fact = memory.edge(first.id)

    assert isinstance(fact, EdgeResource)
    assert fact.sessions == ["s1"] and fact.artifacts[0].metadata == {"source": "import"}
    with Memory(api.base_url, user_id="u2") as other, pytest.raises(NotFoundError):
        other.edge(first.id)


def test_datasets_page_with_a_cursor(memory):
    memory.remember_facts(FACTS, dataset="second")

    first = memory.datasets(limit=1)
    second = memory.datasets(limit=1, cursor=first.next_cursor)

    assert [d.name for d in first.datasets] == ["main"] and first.next_cursor
    assert [d.name for d in second.datasets] == ["second"] and second.next_cursor is None
    assert [d.name for d in memory.datasets().datasets] == ["main", "second"]
