"""Step 6 of remember (SPEC section 5): the reply of the resolve stage read into a judgement. Only
the facts asked and the stored edges shown count; a duplicate is never also a contradiction."""

from __future__ import annotations

from datetime import UTC, datetime

from gligabao.ai.prompts.resolve import Resolution
from gligabao.memory.fact_resolution import Candidates, Judgement, judgement_from
from gligabao.model import StoredEdge

# The stored edges shown to the model, by id.
PARIS, ACME, GLOBEX = 7, 8, 9
T0 = datetime(2025, 1, 31, 9, 0, tzinfo=UTC)
SHOWN = [
    StoredEdge(PARIS, 1, 2, "lives_in", "", None, T0, None, T0, source="Alice", target="Paris"),
    StoredEdge(ACME, 1, 3, "works_at", "", None, T0, None, T0, source="Alice", target="Acme"),
    StoredEdge(GLOBEX, 1, 4, "works_at", "", None, T0, None, T0, source="Alice", target="Globex"),
]
# The new facts of the text, by index in its graph; 0 restated a stored edge and was not asked.
LYON, AT_ACME, JOINED_INITECH = 1, 2, 3
ASKED = Candidates(new_facts=[LYON, AT_ACME, JOINED_INITECH], edges=SHOWN)


def judged(*decisions: dict, candidates: Candidates = ASKED) -> Judgement:
    return judgement_from(Resolution.model_validate({"facts": list(decisions)}), candidates)


def test_a_duplicate_and_a_contradiction_of_edges_shown_are_taken():
    judgement = judged(
        {"fact": LYON, "duplicate_of": None, "contradicts": [PARIS]},
        {"fact": AT_ACME, "duplicate_of": ACME, "contradicts": []},
    )

    assert judgement.duplicate_of == {AT_ACME: ACME}
    assert judgement.contradicts == {LYON: {PARIS}}
    assert judgement.edge_ids() == {ACME, PARIS}


def test_ids_outside_the_candidates_are_ignored():
    judgement = judged(
        {"fact": LYON, "duplicate_of": 99, "contradicts": [98, PARIS, 0]},
        {"fact": AT_ACME, "duplicate_of": 42, "contradicts": [43]},
    )

    assert judgement.duplicate_of == {}
    assert judgement.contradicts == {LYON: {PARIS}}
    assert judgement.edge_ids() == {PARIS}


def test_a_duplicate_that_is_also_in_contradicts_is_not_a_contradiction():
    judgement = judged(
        {"fact": AT_ACME, "duplicate_of": ACME, "contradicts": [ACME, GLOBEX]},
        {"fact": JOINED_INITECH, "duplicate_of": ACME, "contradicts": [ACME]},
    )

    assert judgement.duplicate_of == {AT_ACME: ACME, JOINED_INITECH: ACME}
    assert judgement.contradicts == {AT_ACME: {GLOBEX}}  # no entry when only the duplicate was named
    assert judgement.edge_ids() == {ACME, GLOBEX}


def test_a_duplicate_of_an_edge_not_shown_leaves_the_contradictions_of_edges_shown():
    judgement = judged({"fact": LYON, "duplicate_of": 99, "contradicts": [PARIS, 99]})

    assert judgement.duplicate_of == {}
    assert judgement.contradicts == {LYON: {PARIS}}


def test_facts_not_asked_are_ignored():
    judgement = judged(
        {"fact": 0, "duplicate_of": ACME, "contradicts": [PARIS]},  # a restatement, never asked
        {"fact": 17, "duplicate_of": GLOBEX, "contradicts": [ACME]},  # no such fact
        {"fact": -1, "contradicts": [PARIS]},
        {"fact": LYON, "contradicts": [PARIS]},
    )

    assert judgement.duplicate_of == {}
    assert judgement.contradicts == {LYON: {PARIS}}


def test_a_fact_judged_twice_keeps_every_contradiction():
    judgement = judged(
        {"fact": JOINED_INITECH, "contradicts": [ACME]},
        {"fact": JOINED_INITECH, "contradicts": [GLOBEX]},
    )

    assert judgement.contradicts == {JOINED_INITECH: {ACME, GLOBEX}}


def test_nothing_decided_is_an_empty_judgement():
    for reply in ({"facts": []}, {"facts": None}, {}):
        judgement = judgement_from(Resolution.model_validate(reply), ASKED)
        assert (judgement.duplicate_of, judgement.contradicts, judgement.edge_ids()) == ({}, {}, set())

    judgement = judged({"fact": LYON, "duplicate_of": None, "contradicts": None})
    assert (judgement.duplicate_of, judgement.contradicts) == ({}, {})


def test_without_candidates_every_decision_is_ignored():
    decisions = ({"fact": LYON, "duplicate_of": PARIS, "contradicts": [PARIS, ACME]},)

    assert judged(*decisions, candidates=Candidates([], [])) == Judgement()
    assert judged(*decisions, candidates=Candidates([LYON], [])) == Judgement()
    assert judged(*decisions, candidates=Candidates([], SHOWN)) == Judgement()
