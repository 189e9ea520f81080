"""The graph export reads a page in one statement of its own (SPEC section 13, issue: lists that can
be large are paginated with a cursor, in bounded memory)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from query_helpers import Graph
from sql_counting import counting_round_trips

from gligabao import bootstrap
from gligabao.memory.graph_export import GraphRequest, export_page

T = datetime(2025, 1, 31, tzinfo=UTC)


def arranged(db) -> None:
    graph = Graph(db)
    people = [graph.entity(f"P{i}", embedding=None) for i in range(4)]
    for i in range(6):
        graph.edge(
            people[i % 4], people[(i + 1) % 4], "knows", created_at=T + timedelta(days=i), embedding=None
        )


def test_every_page_is_begin_one_statement_and_commit(db):
    arranged(db)
    memory, cursor, pages = bootstrap.bundle(), None, 0
    memory.database.connection()  # opened (and its types registered) before counting
    while True:
        with counting_round_trips(this_thread_only=True) as counted:
            page = export_page(memory, GraphRequest("u1", limit=3, cursor=cursor))
        # BEGIN with the user and the dataset's id, the page, COMMIT
        assert counted.count == 3, counted.statements
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 4  # 4 entities and 6 edges, 3 a page


def test_a_page_that_does_not_fit_is_read_again_with_half_the_rows(db):
    arranged(db)
    sizes = []

    def fits(page) -> bool:
        sizes.append(len(page.entities) + len(page.edges))
        return sizes[-1] <= 2

    page = export_page(bootstrap.bundle(), GraphRequest("u1", limit=8), fits)

    assert sizes == [8, 4, 2]
    assert [e.name for e in page.entities] == ["P0", "P1"] and page.next_cursor is not None
