"""The pure rules of a window of texts (memory/windows.py): which queued texts join a window, and
how the window's resolve reply becomes each text's own judgement."""

from __future__ import annotations

from datetime import UTC, datetime

from gligabao.ai.prompts.resolve import WindowFactDecision
from gligabao.db.jobs import QueuedBehind
from gligabao.memory.fact_resolution import Candidates
from gligabao.memory.windows import WindowJudgement, _reply_of, reply_room, texts_along
from gligabao.model import StoredEdge

OPTIONS = {"reasoning": {}, "models": {}, "eval": False}
WHEN = datetime(2025, 1, 1, tzinfo=UTC)


def queued(artifact_id: int, **fields) -> QueuedBehind:
    row = {
        "id": artifact_id,
        "text": "Alice lives in Paris.",
        "session_id": None,
        "reference_time": WHEN,
        "kind": "text",
        "status": "pending",
        "chars": 21,
        "job_options": OPTIONS,
    }
    return QueuedBehind(**{**row, **fields})


def edge(edge_id: int) -> StoredEdge:
    return StoredEdge(edge_id, 1, 2, "lives_in", "", None, None, None, WHEN)


def test_a_window_takes_the_queued_texts_up_to_its_size():
    along = texts_along([queued(i) for i in range(2, 40)], window=20, max_chars=6000, job_options=OPTIONS)

    assert [t.id for t in along] == list(range(2, 21))  # 19 behind the job's own


def test_a_window_ends_at_the_first_text_that_cannot_join_it_so_that_the_order_holds():
    for odd_one in (
        {"kind": "facts"},
        {"chars": 6001},
        {"status": "running"},
        {"job_options": {**OPTIONS, "models": {"extract": "other"}}},
    ):
        texts = [queued(2), queued(3, **odd_one), queued(4)]

        assert [t.id for t in texts_along(texts, window=20, max_chars=6000, job_options=OPTIONS)] == [2]


def test_a_window_ends_where_the_facts_known_from_prepared_texts_pass_what_its_reply_can_judge():
    half = reply_room() // 2
    texts = [
        queued(2, prepared_facts=half),
        queued(3),
        queued(4, prepared_facts=half),
        queued(5, prepared_facts=1),
    ]

    # the first text's half, 2's half, 3 unprepared (its facts unknown until extracted): 4 is past it
    along = texts_along(texts, window=20, max_chars=6000, job_options=OPTIONS, first_facts=half)

    assert [t.id for t in along] == [2, 3]
    assert [t.id for t in texts_along(texts, window=20, max_chars=6000, job_options=OPTIONS)] == [2, 3, 4, 5]


def test_a_later_texts_fact_contradicting_an_earlier_ones_points_at_the_edge_it_became():
    judged = WindowJudgement(
        numbers=[[0], [1]],
        decisions={1: WindowFactDecision(fact=1, contradicts=[7], contradicts_new=[0])},
    )

    reply = _reply_of(judged, 1, Candidates([0], [edge(7), edge(40)]), {0: 40})

    assert [(d.fact, d.duplicate_of, d.contradicts) for d in reply.facts] == [(0, None, [7, 40])]


def test_a_reference_to_a_later_fact_or_to_an_edge_not_shown_is_not_kept_as_a_duplicate():
    judged = WindowJudgement(
        numbers=[[0], [1, 2]],
        decisions={1: WindowFactDecision(fact=1, duplicate_of=9, duplicate_of_new=2, contradicts_new=[2])},
    )

    reply = _reply_of(judged, 1, Candidates([0, 1], [edge(7)]), {0: 40, 2: 41})

    [decision] = reply.facts
    assert (decision.fact, decision.duplicate_of, decision.contradicts) == (0, None, [])
