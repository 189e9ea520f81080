"""The relevance-ranked context (memory/ranking.py): candidates best first, within a token budget."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from gligabao.ai.prompts.query import edge_line, entity_line
from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.ranking import (
    Signals,
    candidate_limits,
    estimated_tokens,
    matched_terms,
    pagerank_scores,
    passage_tokens,
    path_scores,
    rank_context,
    stem,
    term_share,
    term_weights,
)
from gligabao.model import Passage, StoredEdge, StoredEntity

T0 = datetime(2025, 1, 31, 9, 0, 0, tzinfo=UTC)
WIDE = DEFAULT_LIMITS.model_copy(update={"rank_relevance_margin": 5.0})  # the budget alone cuts
ALICE = StoredEntity(1, "Alice", "person", "engineer")
ACME = StoredEntity(2, "Acme", "organization", "")
PARIS = StoredEntity(3, "Paris", "place", "a city")
WORKS = StoredEdge(10, 1, 2, "works_at", "Alice works at Acme.", None, T0, None, T0)
LIVES = StoredEdge(11, 1, 3, "lives_in", "Alice lives in Paris.", None, T0, None, T0)


def signals(**fields) -> Signals:
    return Signals(**{"terms": ["alice", "work"], "keyword_scores": {1: 3}, "seeds": {1}, **fields})


def test_a_fact_holding_the_questions_terms_and_close_to_it_comes_first():
    ranked = rank_context(
        [ALICE, ACME, PARIS],
        [LIVES, WORKS],
        [],
        signals(edge_similarity={10: 0.6, 11: 0.4}),
        WIDE,
    )
    assert [edge.id for edge in ranked.edges] == [10, 11]


def test_the_context_never_exceeds_the_token_budget_and_keeps_the_best_facts():
    people = [StoredEntity(100 + i, f"Person {i}", "person", "a colleague") for i in range(200)]
    edges = [
        StoredEdge(1000 + i, 1, 100 + i, "knows", f"Alice knows Person {i}.", None, T0, None, T0)
        for i in range(200)
    ]
    similarity = {1000 + i: 0.5 - i / 1000 for i in range(200)}
    limits = DEFAULT_LIMITS.model_copy(update={"context_token_budget": 300})

    ranked = rank_context([ALICE, *people], edges, [], signals(edge_similarity=similarity), limits)

    names = {entity.id: entity.name for entity in ranked.entities}
    used = sum(estimated_tokens(entity_line(entity)) for entity in ranked.entities) + sum(
        estimated_tokens(edge_line(edge, names[edge.source_id], names[edge.target_id]))
        for edge in ranked.edges
    )
    assert 0 < used <= 300
    assert 3 < len(ranked.edges) < 200
    assert [edge.id for edge in ranked.edges] == [1000 + i for i in range(len(ranked.edges))]


def test_a_fact_is_never_kept_without_its_two_ends():
    ranked = rank_context([ALICE, ACME, PARIS], [WORKS, LIVES], [], signals(), DEFAULT_LIMITS)
    kept = {entity.id for entity in ranked.entities}
    assert all({edge.source_id, edge.target_id} <= kept for edge in ranked.edges)
    assert ranked.edges


def test_candidates_far_below_the_best_one_are_left_out():
    limits = DEFAULT_LIMITS.model_copy(update={"rank_relevance_margin": 0.2})
    unrelated = StoredEdge(12, 2, 3, "located_in", "Acme is in Paris.", None, T0, None, T0)
    ranked = rank_context(
        [ALICE, ACME, PARIS],
        [WORKS, unrelated],
        [],
        signals(keyword_scores={}, seeds=set(), edge_similarity={10: 0.7, 12: 0.1}),
        limits,
    )
    assert [edge.id for edge in ranked.edges] == [10]


def test_asked_now_an_ended_fact_ranks_below_a_live_one_and_as_of_a_time_it_does_not():
    ended = StoredEdge(13, 1, 3, "works_at", "Alice worked at Acme.", None, T0, T0, T0)
    live = StoredEdge(14, 1, 2, "works_at", "Alice worked at Acme.", None, T0, None, T0)
    same = {13: 0.6, 14: 0.6}
    now = rank_context([ALICE, ACME, PARIS], [ended, live], [], signals(edge_similarity=same), DEFAULT_LIMITS)
    then = rank_context(
        [ALICE, ACME, PARIS],
        [ended, live],
        [],
        signals(edge_similarity=same, asked_now=False),
        DEFAULT_LIMITS,
    )
    assert [edge.id for edge in now.edges] == [14, 13]
    assert [edge.id for edge in then.edges] == [13, 14]


def test_a_passage_whose_text_does_not_fit_is_given_with_its_summary_only():
    passage = Passage(50, 49, 0, "Alice's work at Acme.", "Alice " * 2000)
    limits = DEFAULT_LIMITS.model_copy(update={"context_token_budget": 200})
    ranked = rank_context([], [], [passage], signals(passage_similarity={50: 0.8}), limits)
    assert ranked.passages == [Passage(50, 49, 0, "Alice's work at Acme.", None)]
    assert passage_tokens(ranked.passages[0]) <= 200


def test_a_seed_without_facts_stands_alone_and_an_end_only_comes_with_its_fact():
    ranked = rank_context([ALICE, ACME], [], [], signals(entity_similarity={1: 0.5}), DEFAULT_LIMITS)
    assert [entity.id for entity in ranked.entities] == [1]


def test_terms_are_found_in_relations_read_as_words():
    assert term_share(["works", "acme"], "Alice works_at Acme") == 1.0
    assert term_share(["paris"], "Alice works_at Acme") == 0.0
    assert term_share([], "anything") == 0.0


def test_the_seeds_retrieval_keeps_its_numbers_and_the_ranked_one_widens_its_candidates():
    seed = DEFAULT_LIMITS.model_copy(update={"retrieval": "seed"})
    assert candidate_limits(seed) == seed
    ranked = candidate_limits(DEFAULT_LIMITS)
    assert (ranked.keyword_seeds, ranked.expansion_edges, ranked.similarity_threshold) == (
        DEFAULT_LIMITS.rank_keyword_seeds,
        DEFAULT_LIMITS.rank_expansion_edges,
        DEFAULT_LIMITS.rank_similarity_threshold,
    )
    assert ranked.keyword_seeds > seed.keyword_seeds


def test_a_terms_ending_is_dropped_so_that_founder_finds_founded():
    assert stem("founder") == "found" and "found" in "founded"
    assert stem("employs") == "employ" and stem("lives") == "live"
    assert stem("born") == "born" and stem("is") == "is"  # too short to lose anything


def test_the_far_end_of_the_best_fact_leads_to_its_own_facts_before_the_like_facts_of_others():
    """Where was the founder of Acme born? Acme is the seed; its best fact names the founder, whose
    birthplace (two hops from Acme) outranks another person's, though both are as similar."""
    acme = StoredEntity(2, "Acme", "organization", "a robotics company")
    bob, eve = StoredEntity(4, "Bob", "person", ""), StoredEntity(5, "Eve", "person", "")
    lyon, oslo = StoredEntity(6, "Lyon", "city", ""), StoredEntity(7, "Oslo", "city", "")
    founded = StoredEdge(20, 4, 2, "founded", "Bob founded Acme.", None, T0, None, T0)
    bob_born = StoredEdge(21, 4, 6, "was_born_in", "Bob was born in Lyon.", None, T0, None, T0)
    eve_born = StoredEdge(22, 5, 7, "was_born_in", "Eve was born in Oslo.", None, T0, None, T0)
    found = Signals(
        terms=["founder", "acme", "born"],
        keyword_scores={2: 5},
        seeds={2},
        edge_similarity={20: 0.7, 21: 0.3, 22: 0.3},
    )
    ranked = rank_context([acme, bob, eve, lyon, oslo], [eve_born, bob_born, founded], [], found, WIDE)
    # the chain's two facts share its value (the best cosine along it), before Eve's birthplace
    assert [edge.id for edge in ranked.edges][2:] == [22]
    assert {edge.id for edge in ranked.edges[:2]} == {20, 21}

    unbridged = rank_context(
        [acme, bob, eve, lyon, oslo],
        [eve_born, bob_born, founded],
        [],
        found,
        WIDE.model_copy(update={"rank_graph": "bridge", "rank_bridge_facts": 0}),
    )
    assert [edge.id for edge in unbridged.edges] == [20, 22, 21]  # ties keep the retrieval's order
    bridged = rank_context(
        [acme, bob, eve, lyon, oslo],
        [eve_born, bob_born, founded],
        [],
        found,
        WIDE.model_copy(update={"rank_graph": "bridge"}),
    )
    assert [edge.id for edge in bridged.edges] == [20, 21, 22]


# --- paths: the chains whose middle the question never names ---------------------------------


def spouse_country_world() -> tuple[list[StoredEntity], list[StoredEdge], Signals]:
    """In which country was the spouse of Alice born? Alice married Sam (a fact holding no term of
    the question), Sam was born in Lyon (born), Lyon is in France (country). Around them: Alice's
    own facts and twelve people born in Lyon or Oslo, more similar to the question than the chain."""
    sam, lyon = StoredEntity(4, "Sam", "person", ""), StoredEntity(6, "Lyon", "city", "")
    oslo = StoredEntity(7, "Oslo", "city", "")
    france, norway = StoredEntity(8, "France", "country", ""), StoredEntity(9, "Norway", "country", "")
    married = StoredEdge(30, 1, 4, "married_to", "Alice is married to Sam.", None, T0, None, T0)
    sam_born = StoredEdge(31, 4, 6, "was_born_in", "Sam was born in Lyon.", None, T0, None, T0)
    in_france = StoredEdge(32, 6, 8, "located_in", "Lyon is a city in France.", None, T0, None, T0)
    in_norway = StoredEdge(33, 7, 9, "located_in", "Oslo is a city in Norway.", None, T0, None, T0)
    alice_lives = StoredEdge(34, 1, 7, "lives_in", "Alice lives in Oslo.", None, T0, None, T0)
    others = [StoredEntity(100 + i, f"Person {i}", "person", "") for i in range(12)]
    births = [
        StoredEdge(200 + i, 100 + i, 6 if i % 2 else 7, "was_born_in", "born there", None, T0, None, T0)
        for i in range(12)
    ]
    similarity = {30: 0.6, 31: 0.35, 32: 0.2, 33: 0.2, 34: 0.7, **{200 + i: 0.5 for i in range(12)}}
    found = Signals(
        terms=["country", "spouse", "alice", "born"],
        keyword_scores={1: 5},
        seeds={1},
        edge_similarity=similarity,
    )
    entities = [ALICE, sam, lyon, oslo, france, norway, *others]
    return entities, [*births, alice_lives, in_norway, in_france, sam_born, married], found


def chain_budget(entities: list[StoredEntity], edges: list[StoredEdge], ids: set[int]) -> int:
    """The tokens of the facts `ids` and their ends: a budget they just fit."""
    names = {entity.id: entity for entity in entities}
    kept = [edge for edge in edges if edge.id in ids]
    ends = {end for edge in kept for end in (edge.source_id, edge.target_id)}
    return sum(estimated_tokens(entity_line(names[i])) for i in ends) + sum(
        estimated_tokens(edge_line(edge, names[edge.source_id].name, names[edge.target_id].name))
        for edge in kept
    )


def test_a_chain_whose_middle_the_question_never_names_is_kept_whole_within_the_budget():
    entities, edges, found = spouse_country_world()
    chain = {30, 31, 32}
    # Room for five of the seventeen facts: the chain, Alice's home and one more. The terms weigh
    # among those found: with the default (among all asked) the twelve births, more similar than
    # the chain, win here, a loss the four benchmark worlds measure as smaller than the gain
    # (docs/performance.md, "Worlds nobody tuned for").
    limits = WIDE.model_copy(
        update={
            "context_token_budget": chain_budget(entities, edges, chain | {33, 34}),
            "rank_term_weights": "found",
        }
    )

    ranked = rank_context(entities, edges, [], found, limits)
    bridged = rank_context(entities, edges, [], found, limits.model_copy(update={"rank_graph": "bridge"}))

    assert chain <= {edge.id for edge in ranked.edges}
    assert not chain <= {edge.id for edge in bridged.edges}  # one bridged hop stops at Sam's birthplace


def test_a_fact_that_answers_no_new_part_of_the_question_earns_nothing_from_the_path_before_it():
    """After Sam's birth in Lyon (born), the other births in Lyon answer nothing new: the path does
    not lend them its value. The births in Oslo do answer `born` after Alice's home there."""
    entities, edges, found = spouse_country_world()
    ids = [edge.id for edge in edges]
    terms = [matched_terms(["country", "spouse", "born"], edge_text(edge, entities)) for edge in edges]

    along = path_scores(edges, terms, found, {1: 1.0}, DEFAULT_LIMITS)

    assert all(ids.index(200 + i) not in along for i in range(1, 12, 2))  # born in Lyon
    assert all(ids.index(200 + i) in along for i in range(0, 12, 2))  # born in Oslo
    assert along[ids.index(30)] >= along[ids.index(32)] > 0  # the middle is worth its whole chain


def edge_text(edge: StoredEdge, entities: list[StoredEntity]) -> str:
    names = {entity.id: entity for entity in entities}
    ends = [names[edge.source_id], names[edge.target_id]]
    return " ".join([*(f"{e.name} {e.type} {e.description}" for e in ends), edge.relation, edge.description])


def test_a_term_few_facts_hold_weighs_more_than_one_most_facts_hold():
    weights = term_weights([frozenset({"born"})] * 9 + [frozenset({"born", "country"})])

    assert weights["country"] > weights["born"] > 0
    assert abs(sum(weights.values()) - 1) < 1e-9


def test_the_walk_from_the_seed_crosses_the_facts_near_it_more_than_a_strangers():
    """GB_RANK_GRAPH=pagerank: personalized PageRank restarting at Alice."""
    entities, edges, found = spouse_country_world()
    ids = [edge.id for edge in edges]
    terms = [matched_terms(["country", "spouse", "born"], edge_text(edge, entities)) for edge in edges]

    flows = pagerank_scores(edges, terms, found, {1: 1.0}, DEFAULT_LIMITS)

    assert max(flows) == 1.0
    assert (
        flows[ids.index(30)] > flows[ids.index(31)] > flows[ids.index(201)]
    )  # married, Sam's birth, a stranger's


def project_client_world() -> tuple[list[StoredEntity], list[StoredEdge], Signals]:
    """Which client is the project Rumi manages for? Rumi manages Project Ibis, commissioned by
    Kisiwa Bank: the fact that answers holds no term of the question ("client"), and is less
    similar to it than Rumi's own facts. It is one of the project's attributes (its one client);
    the project's four staffing facts are not."""
    rumi = StoredEntity(1, "Rumi Ticona", "person", "")
    project = StoredEntity(2, "Project Ibis", "project", "")
    bank = StoredEntity(3, "Kisiwa Bank", "company", "")
    places = [StoredEntity(10 + i, f"Place {i}", "place", "") for i in range(6)]
    teams = [StoredEntity(20 + i, f"Team {i}", "team", "") for i in range(4)]
    manages = StoredEdge(30, 1, 2, "manages_project", "Rumi manages Project Ibis.", None, T0, None, T0)
    client = StoredEdge(
        31, 2, 3, "commissioned_by", "Project Ibis was ordered by Kisiwa Bank.", None, T0, None, T0
    )
    visits = [StoredEdge(40 + i, 1, 10 + i, "visited", "a trip", None, T0, None, T0) for i in range(6)]
    staffing = [StoredEdge(50 + i, 2, 20 + i, "staffed_by", "a team", None, T0, None, T0) for i in range(4)]
    similarity = {30: 0.7, 31: 0.33, **{40 + i: 0.45 for i in range(6)}, **{50 + i: 0.4 for i in range(4)}}
    found = Signals(
        terms=["client", "project", "rumi", "ticona", "manages"],
        keyword_scores={1: 5},
        seeds={1},
        edge_similarity=similarity,
    )
    return [rumi, project, bank, *places, *teams], [*visits, *staffing, client, manages], found


def test_an_attribute_of_the_unnamed_middle_answers_whatever_the_question_calls_it():
    entities, edges, found = project_client_world()
    chain = {30, 31}
    limits = WIDE.model_copy(update={"context_token_budget": chain_budget(entities, edges, chain | {40, 41})})

    ranked = rank_context(entities, edges, [], found, limits)
    by_terms = rank_context(
        entities, edges, [], found, limits.model_copy(update={"rank_path_answers": "terms"})
    )

    assert chain <= {edge.id for edge in ranked.edges}
    assert 31 not in {edge.id for edge in by_terms.edges}  # the term rule alone: no new term, no path


def test_a_path_is_worth_its_best_fact_not_the_mean_its_far_hops_pull_down():
    """The chain's later facts are far less similar to the question than its first: by the mean,
    the path falls below Rumi's other facts; by the best, it stays with its first fact."""
    entities, edges, found = project_client_world()
    limits = DEFAULT_LIMITS.model_copy(update={"rank_path_answers": "attribute"})
    terms = [matched_terms(["client", "project", "manag"], edge_text(edge, entities)) for edge in edges]
    at = {edge.id: index for index, edge in enumerate(edges)}

    by_best = path_scores(edges, terms, found, {1: 1.0}, limits)
    by_mean = path_scores(
        edges, terms, found, {1: 1.0}, limits.model_copy(update={"rank_path_value": "mean"})
    )

    assert by_best[at[31]] > 0.3 + 0.45  # above a visit (anchor and cosine)
    assert by_mean[at[31]] < by_best[at[31]] - 0.1


def test_a_term_no_candidate_holds_still_counts_so_one_common_term_is_not_the_whole_question():
    held = [frozenset({"town"}), frozenset({"town"}), frozenset()]

    found = term_weights(held)
    asked = term_weights(held, ["town", "practice", "doctor"])

    assert found == {"town": 1.0}
    assert 0 < asked["town"] < 0.5


@given(
    st.lists(st.integers(min_value=0, max_value=400), min_size=1, max_size=12),
    st.integers(min_value=20, max_value=400),
)
def test_each_fact_is_kept_exactly_when_its_line_and_new_ends_fit_what_the_budget_has_left(lengths, budget):
    """The cut passes over a fact too long for what is left without writing its line: every fact
    is still taken, best first, exactly when it fits (a long fact skipped, a shorter one after it
    kept; a line that fills the budget to the last token kept)."""
    people = [StoredEntity(100 + i, f"P{i}", "person", "") for i in range(len(lengths))]
    edges = [
        StoredEdge(1000 + i, 1, 100 + i, "knows", "x" * length, None, None, None, T0)
        for i, length in enumerate(lengths)
    ]
    similarity = {1000 + i: 0.5 - i / 1000 for i in range(len(lengths))}  # best first, in order
    limits = WIDE.model_copy(update={"context_token_budget": budget})

    ranked = rank_context([ALICE, *people], edges, [], signals(edge_similarity=similarity), limits)

    left, expected, alice_given = budget, [], False
    for edge, person in zip(edges, people, strict=True):
        ends = [person] if alice_given else [ALICE, person]
        cost = estimated_tokens(edge_line(edge, "Alice", person.name)) + sum(
            estimated_tokens(entity_line(end)) for end in ends
        )
        if cost <= left:
            expected.append(edge.id)
            left -= cost
            alice_given = True
    assert [edge.id for edge in ranked.edges] == expected


def test_a_fact_between_kept_entities_whose_line_fills_the_budget_to_the_last_token_is_kept():
    """After a fact too long for what is left, a later one of the same ends whose line costs
    exactly what is left is kept: the cut's shortcut never passes over a fact that fits."""
    bob = StoredEntity(4, "Bob", "person", "")
    first, long, last = (
        StoredEdge(20 + i, 1, 4, "knows", text, None, None, None, T0)
        for i, text in enumerate(("Alice knows Bob.", "x" * 400, "Alice met Bob in Paris on a rainy day."))
    )
    first_cost = estimated_tokens(edge_line(first, "Alice", "Bob")) + sum(
        estimated_tokens(entity_line(entity)) for entity in (ALICE, bob)
    )
    budget = first_cost + estimated_tokens(edge_line(last, "Alice", "Bob"))
    limits = WIDE.model_copy(update={"context_token_budget": budget})
    similarity = {first.id: 0.5, long.id: 0.49, last.id: 0.48}

    ranked = rank_context([ALICE, bob], [first, long, last], [], signals(edge_similarity=similarity), limits)

    assert [edge.id for edge in ranked.edges] == [first.id, last.id]


def test_after_a_middle_the_question_never_names_its_fact_most_like_the_question_comes_first():
    """Where does Dalia's brother live? Dalia's sibling Ravi has three facts, each an attribute of
    him; by the best cosine alone, the three paths through Ravi are worth the same and the cut keeps
    the first retrieved. The last fact's own cosine breaks the tie: his home, not his pet."""
    dalia, ravi = StoredEntity(1, "Dalia", "person", ""), StoredEntity(2, "Ravi", "person", "")
    pet, airline = StoredEntity(3, "Doodle", "pet", ""), StoredEntity(4, "Blue Jet", "airline", "")
    town = StoredEntity(5, "Kaliwa", "town", "")
    sibling = StoredEdge(30, 1, 2, "sibling_of", "Dalia is Ravi's sister.", None, T0, None, T0)
    owns = StoredEdge(31, 2, 3, "owns_pet", "Ravi owns Doodle.", None, T0, None, T0)
    flew = StoredEdge(32, 2, 4, "flew_with", "Ravi flew with Blue Jet.", None, T0, None, T0)
    home = StoredEdge(33, 2, 5, "resides_in", "Ravi resides in Kaliwa.", None, T0, None, T0)
    entities, edges = [dalia, ravi, pet, airline, town], [sibling, owns, flew, home]
    found = Signals(
        terms=["dalia", "brother", "live"],
        keyword_scores={1: 5},
        seeds={1},
        edge_similarity={30: 0.7, 31: 0.35, 32: 0.38, 33: 0.6},
    )
    limits = WIDE.model_copy(update={"context_token_budget": chain_budget(entities, edges, {30, 33})})

    ranked = rank_context(entities, edges, [], found, limits)
    tied = rank_context(entities, edges, [], found, limits.model_copy(update={"rank_answer_weight": 0.0}))

    assert [edge.id for edge in ranked.edges] == [30, 33]
    assert 33 not in {edge.id for edge in tied.edges}  # the tie kept the first retrieved instead
