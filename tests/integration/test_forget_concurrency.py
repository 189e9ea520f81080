"""Forgets at the same moment as remembers of the same dataset: no deadlock, no orphan, and the
graph is what the calls say whatever their order (a forget and a store of one dataset take the
same lock, so each sees the other's rows whole).

Threads of this process, each with its own database connection, call the memory core directly,
as test_remember_concurrency does (Powertools resolves one event at a time per process).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from conftest import count_rows
from forget_helpers import orphans

from gligabao import bootstrap
from gligabao.errors import NotFound
from gligabao.memory.forget import forget_artifact, forget_edge, forget_entity
from gligabao.memory.remember import TextToRemember, remember_text

CALLS = 8
STAGGER_SECONDS = 0.01


def remembered(text: str, session_id: str | None = None) -> int:
    request = TextToRemember(user_id="u1", dataset="main", text=text, session_id=session_id)
    return remember_text(bootstrap.bundle(), request).artifact_id


def staggered(calls: list) -> list:
    """The calls, the k-th starting k * 10 ms late: a forget is far quicker than a remember (which
    calls the models before it stores), so this spreads the forgets over the remembers' stores,
    rather than having them all done before the first store."""
    return [
        lambda k=k, call=call: (time.sleep(k * STAGGER_SECONDS), call())[1] for k, call in enumerate(calls)
    ]


def together(calls: list) -> list:
    """Run the calls at the same moment, one thread (and database connection) each; each result is
    what the call returned, or the NotFound it raised."""
    deps = bootstrap.bundle()
    start = threading.Barrier(len(calls))

    def run(call):
        start.wait()
        try:
            return call()
        except NotFound as not_found:
            return not_found
        finally:
            deps.database.close()

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(run, calls))


def test_forgetting_texts_while_the_same_fact_is_remembered_again_keeps_it_for_the_new_texts(db, models):
    old = [remembered("Alice works at Acme.", f"old{i}") for i in range(CALLS)]
    deps = bootstrap.bundle()

    results = together(
        staggered([lambda a=a: forget_artifact(deps, "u1", a) for a in old])
        + [lambda i=i: remembered("Alice works at Acme.", f"new{i}") for i in range(CALLS)]
    )

    assert not [r for r in results if isinstance(r, Exception)]
    new = sorted(results[CALLS:])
    assert [row[0] for row in db.execute("SELECT id FROM gb_artifacts ORDER BY id")] == new
    # One fact, one Alice, one Acme, whatever the order: each new text states them.
    assert count_rows(db, "gb_edges") == 1 and count_rows(db, "gb_entities") == 2
    assert sorted(a for (a,) in db.execute("SELECT artifact_id FROM gb_edge_artifacts")) == new
    assert count_rows(db, "gb_entity_artifacts") == 2 * CALLS
    assert db.execute("SELECT artifact_id FROM gb_edges").fetchone()[0] in new
    assert orphans(db) == []


def test_forgetting_entities_and_edges_while_remembering_about_them_leaves_no_orphan(db, models):
    remembered("Alice works at Acme. Alice lives in Paris. Bob knows Alice.")
    alice = db.execute("SELECT id FROM gb_entities WHERE name = 'Alice'").fetchone()[0]
    edges = [row[0] for row in db.execute("SELECT id FROM gb_edges ORDER BY id")]
    deps = bootstrap.bundle()

    results = together(
        staggered(
            [lambda e=e: forget_edge(deps, "u1", e) for e in edges[:1]]
            + [lambda: forget_entity(deps, "u1", alice)]
            + [lambda e=e: forget_edge(deps, "u1", e) for e in edges[1:]]
        )
        + [lambda i=i: remembered(f"Alice knows Person{i}. Alice works at Acme.") for i in range(CALLS)]
    )

    entity_forget = results[1]
    edge_forgets, texts = [results[0], *results[2 : 1 + len(edges)]], results[1 + len(edges) :]
    assert not isinstance(entity_forget, Exception) and entity_forget.entities >= 1
    # Each old edge was deleted once: by its own forget, or else by the entity's.
    assert all(isinstance(r, NotFound) or r.edges == 1 for r in edge_forgets)
    assert entity_forget.edges >= sum(isinstance(r, NotFound) for r in edge_forgets)
    assert db.execute("SELECT count(*) FROM gb_edges WHERE id = ANY(%s)", [edges]).fetchone()[0] == 0
    # A text stored before the entity forget lost its facts about Alice with her; one stored
    # after states both of its facts about the new Alice. Never half of them.
    stated = {
        text: {
            r
            for (r,) in db.execute(
                "SELECT g.relation FROM gb_edge_artifacts ga JOIN gb_edges g ON g.id = ga.edge_id WHERE ga.artifact_id = %s",
                [text],
            )
        }
        for text in texts
    }
    assert all(relations in (set(), {"knows", "works_at"}) for relations in stated.values()), stated
    after = sum(bool(relations) for relations in stated.values())
    assert count_rows(db, "gb_edges") == after + (1 if after else 0)  # its knows edges, one works_at
    assert count_rows(db, "gb_entities") == len(  # one row per name
        {name for (name,) in db.execute("SELECT name FROM gb_entities")}
    )
    # The texts still mention their people: forgetting Alice is not forgetting the texts.
    assert db.execute("SELECT count(*) FROM gb_entities WHERE name LIKE 'Person%'").fetchone()[0] == CALLS
    assert orphans(db) == []
