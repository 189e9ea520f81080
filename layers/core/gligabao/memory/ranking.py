"""The relevance-ranked context (GB_RETRIEVAL=ranked, the default): the candidates the seed's
retrieval finds (keyword and similarity seeds, similar facts, the one-hop expansion, passages)
ordered by relevance to the question and cut at a token budget.

Everything it ranks by is already in the retrieval's result: each candidate's cosine with the
question (computed by the context statement on its few rows), the question's terms, the keyword
seeds' scores. So it costs no model call and no SQL round trip.

A candidate's relevance is its cosine with the question, plus `rank_keyword_weight` times the
share of the question's terms its text holds, plus `rank_anchor_weight` times the strength of the
seed it hangs from (a fact: the stronger of its two ends). A seed's strength is its keyword score
over the best keyword score (the whole name in the question scores most), or, for a similarity
seed, its cosine. The graph counts too (`rank_graph`): by default a fact is worth at least the
best path of facts from the strongest seed it lies on (path_scores), so that the chain of "in
which city is the museum that Alice's husband designed?" is kept whole though the question names
neither the husband nor the museum; personalized PageRank (pagerank_scores) and the one bridged
hop of before (`bridge`) were measured against it and are kept as settings. Asked now (not
`as_of`), a fact that has ended loses `rank_ended_penalty`.
Candidates are taken best first while they fit `context_token_budget` (a fact brings its two
ends; a passage whose text does not fit is given with its summary when it has one) and while
they are within `rank_relevance_margin` of the best one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gligabao.ai.prompts.query import edge_line, entity_line, passage_lines
from gligabao.limits import Limits
from gligabao.model import Passage, StoredEdge, StoredEntity

# The usual estimate of a model's tokens for English text: about 4 characters each.
CHARS_PER_TOKEN = 4


def candidate_limits(limits: Limits) -> Limits:
    """The limits the retrieval statements run with: ranked, a wider pool of candidates (vector
    matches from a lower cosine, more keyword seeds so that namesakes are all found, more of their
    facts), which the ranking then cuts; the seed's numbers otherwise."""
    if limits.retrieval != "ranked":
        return limits
    return limits.model_copy(
        update={
            "similarity_threshold": limits.rank_similarity_threshold,
            "keyword_seeds": limits.rank_keyword_seeds,
            "expansion_edges": limits.rank_expansion_edges,
        }
    )


def estimated_tokens(text: str) -> int:
    """Tokens of `text` for the budget (a line's newline counted)."""
    return math.ceil((len(text) + 1) / CHARS_PER_TOKEN)


@dataclass
class Signals:
    """What the retrieval found out about its candidates, to rank them by."""

    terms: list[str]  # the question's terms (retrieval.query_terms)
    asking: list[str] = field(
        default_factory=list
    )  # stemmed, less the named seeds' words (scored_candidates)
    keyword_scores: dict[int, int] = field(default_factory=dict)  # keyword seed -> its score
    similarity_seeds: list[int] = field(default_factory=list)
    seeds: set[int] = field(default_factory=set)  # every seed (fallback ones too): may stand alone
    entity_similarity: dict[int, float] = field(default_factory=dict)  # cosine with the question
    edge_similarity: dict[int, float] = field(default_factory=dict)
    passage_similarity: dict[int, float] = field(default_factory=dict)
    asked_now: bool = True  # not `as_of` a time: ended facts matter less


@dataclass(frozen=True)
class Ranked:
    """The kept part of a context, each list best first."""

    entities: list[StoredEntity]
    edges: list[StoredEdge]
    passages: list[Passage]
    # Each kept item's relevance, by (kind, id) (a passage by its artifact id); an entity kept as
    # an end of a fact has its fact's, unless it scored better as a seed.
    scores: dict[tuple[str, int], float] = field(default_factory=dict)


def term_share(terms: list[str], text: str) -> float:
    """The share of `terms` found in `text` (lowercased, `_` read as a space), 0 without terms."""
    if not terms:
        return 0.0
    haystack = text.lower().replace("_", " ")
    return sum(1 for term in terms if term in haystack) / len(terms)


# Endings dropped from a term before it is looked for, so that "founder" finds "founded" and
# "employs" finds "employer" (the longest that leaves at least 4 characters).
_ENDINGS = ("ers", "ing", "ies", "er", "ed", "es", "s")


def stem(term: str) -> str:
    """`term` without its ending, if what is left has at least 4 characters."""
    for ending in _ENDINGS:
        if term.endswith(ending) and len(term) - len(ending) >= 4:
            return term[: -len(ending)]
    return term


def matched_terms(terms: list[str], text: str) -> frozenset[str]:
    """The `terms` found in `text` (lowercased, `_` read as a space)."""
    haystack = text.lower().replace("_", " ")
    return frozenset(term for term in terms if term in haystack)


def term_weights(edge_terms: list[frozenset[str]], asked: list[str] = ()) -> dict[str, float]:
    """Each term's weight by its rarity among the candidate facts (an inverse document frequency),
    summing to 1 over the terms some fact holds, or over all the `asked` terms when given (a term
    no fact holds counted as the rarest): "country" of "in which country was the spouse of
    Alice born?" is held by a few facts (a city's), "born" by many (everyone's birthplace)."""
    counts: dict[str, int] = {}
    for found in edge_terms:
        for term in found:
            counts[term] = counts.get(term, 0) + 1
    raw = {term: math.log(1 + len(edge_terms) / count) for term, count in counts.items()}
    # `asked`: the terms no candidate holds count in the total too, as the rarest, so that the one
    # term many facts hold ("town") is not worth the whole question.
    rarest = math.log(1 + len(edge_terms)) if edge_terms else 0.0
    total = sum(raw.values()) + rarest * sum(1 for term in dict.fromkeys(asked) if term not in counts)
    return {term: weight / total for term, weight in raw.items()} if total else {}


def path_scores(
    edges: list[StoredEdge],
    edge_terms: list[frozenset[str]],
    signals: Signals,
    strengths: dict[int, float],
    limits: Limits,
    asking: list[str] = (),
) -> dict[int, float]:
    """Path completion: each fact's best value along a path of at most `rank_path_hops` facts
    from a seed, by index in `edges` (only the facts of some path).

    A path is worth `rank_anchor_weight` times the strength of the seed it starts from, plus the
    best cosine of its facts with the question (`rank_path_value` max; their mean with mean),
    plus `rank_keyword_weight` times the weight of the question's terms its facts hold together
    (term_weights over the `asking` terms: the rare ones weigh most), less `rank_hop_cost` for
    each fact after the first, plus `rank_answer_weight` times the cosine of its last fact (paths
    of more than one fact: which fact after one middle answers). A fact is worth the best path it
    is on: the middle of a chain (the spouse the question never names) is kept with the end that
    answers. A path lends its value
    only when its last fact holds a term the path had not met ("born", then "country") or, with
    `rank_path_answers` attribute, is an attribute of the entity it reaches (attribute_facts: the
    project's one client, whatever the question calls it); the other births in the spouse's
    birthplace answer nothing new. Paths start
    from the seeds within `rank_path_seed_strength` of the strongest (what the question names
    whole), and the `rank_path_beam` best paths of each length are extended.
    """
    weights = term_weights(edge_terms, asking if limits.rank_term_weights == "asked" else ())
    strongest = max(strengths.values(), default=0.0)
    incident: dict[int, list[int]] = {}
    for index, edge in enumerate(edges):
        incident.setdefault(edge.source_id, []).append(index)
        if edge.target_id != edge.source_id:
            incident.setdefault(edge.target_id, []).append(index)
    by_best = limits.rank_path_value == "max"
    attributes = attribute_facts(edges, incident) if limits.rank_path_answers == "attribute" else {}
    # (value, entity reached, anchor, cosines summed (or the best, rank_path_value max), terms met, facts taken)
    paths: list[tuple[float, int, float, float, frozenset[str], tuple[int, ...]]] = [
        (0.0, entity_id, limits.rank_anchor_weight * strength, 0.0, frozenset(), ())
        for entity_id, strength in strengths.items()
        if strength > 0 and strength >= limits.rank_path_seed_strength * strongest
    ]
    best: dict[int, float] = {}
    # Computed once, not once for each path through the fact: most facts lie on many.
    cosines_of = [signals.edge_similarity.get(edge.id) or 0.0 for edge in edges]
    answer_weight = limits.rank_answer_weight
    term_values: dict[frozenset[str], float] = {}  # the terms a path holds -> what they add
    for hop in range(limits.rank_path_hops):
        grown = []
        for _, at, anchor, cosines, met, taken in paths:
            for index in incident.get(at, ()):
                if index in taken:
                    continue
                edge = edges[index]
                cosine = cosines_of[index]
                summed = max(cosines, cosine) if by_best and hop else cosines + cosine
                terms = met | edge_terms[index]
                terms_value = term_values.get(terms)
                if terms_value is None:
                    terms_value = term_values[terms] = limits.rank_keyword_weight * sum(
                        weights[term] for term in terms
                    )
                value = (
                    anchor
                    + (summed if by_best else summed / (hop + 1))
                    + terms_value
                    - limits.rank_hop_cost * hop
                    + (answer_weight * cosine if hop else 0.0)
                )
                far = edge.target_id if edge.source_id == at else edge.source_id
                answers = not hop or len(terms) > len(met) or index in attributes.get(at, ())
                grown.append((value, far, anchor, summed, terms, (*taken, index), answers))
        grown.sort(key=lambda path: -path[0])
        paths = [path[:-1] for path in grown[: limits.rank_path_beam]]
        for value, *_, taken, answers in grown[: limits.rank_path_beam]:
            if answers:  # a fact that adds no part of the question makes no path worth its tokens
                for index in taken:
                    best[index] = max(best.get(index, value), value)
    return best


def attribute_facts(edges: list[StoredEdge], incident: dict[int, list[int]]) -> dict[int, set[int]]:
    """For each entity (by id), its facts (by index in `edges`) of a relation it holds at most twice
    on that side among the candidates: the title, the office, the client of a project, what a
    question asks of an entity it does not name ("the client of the project Rumi manages"),
    whatever its words; not the many of a relation it gathers (a firm's employees, a town's births)."""
    attributes: dict[int, set[int]] = {}
    for entity_id, indexes in incident.items():
        groups: dict[tuple[str, bool], list[int]] = {}
        for index in indexes:
            groups.setdefault((edges[index].relation, edges[index].source_id == entity_id), []).append(index)
        attributes[entity_id] = {index for group in groups.values() if len(group) <= 2 for index in group}
    return attributes


def pagerank_scores(
    edges: list[StoredEdge],
    edge_terms: list[frozenset[str]],
    signals: Signals,
    strengths: dict[int, float],
    limits: Limits,
) -> list[float]:
    """Personalized PageRank over the candidates' graph (as HippoRAG ranks passages), for each
    fact the share of the walk that crosses it, the largest 1.

    The walk restarts at the seeds (by their strength, with probability 1 - `rank_pagerank_damping`)
    and leaves an entity by one of its facts in proportion to the fact's relevance (its cosine with
    the question and the weight of the terms it holds, term_weights), so that the mass flows along
    the facts that answer; an entity with many facts (a city) spreads it thin."""
    weights = term_weights(edge_terms)
    relevance = [
        max(0.01, (signals.edge_similarity.get(edge.id) or 0.0) + sum(weights[t] for t in terms))
        for edge, terms in zip(edges, edge_terms, strict=True)
    ]
    leaving: dict[int, float] = {}
    for edge, weight in zip(edges, relevance, strict=True):
        for end in {edge.source_id, edge.target_id}:
            leaving[end] = leaving.get(end, 0.0) + weight
    total = sum(strengths.values())
    restart = {entity_id: strength / total for entity_id, strength in strengths.items()} if total else {}
    damping = limits.rank_pagerank_damping
    rank = dict(restart)
    for _ in range(limits.rank_pagerank_iterations):
        walked = {entity_id: (1 - damping) * share for entity_id, share in restart.items()}
        for edge, weight in zip(edges, relevance, strict=True):
            for here, there in ((edge.source_id, edge.target_id), (edge.target_id, edge.source_id)):
                if rank.get(here):
                    walked[there] = walked.get(there, 0.0) + damping * rank[here] * weight / leaving[here]
        rank = walked
    flows = [
        sum(rank.get(end, 0.0) * weight / leaving[end] for end in {edge.source_id, edge.target_id})
        for edge, weight in zip(edges, relevance, strict=True)
    ]
    top = max(flows, default=0.0)
    return [flow / top for flow in flows] if top else flows


def seed_strengths(signals: Signals) -> dict[int, float]:
    """How strongly the question names each seed, from 0 to 1."""
    best = max(signals.keyword_scores.values(), default=0)
    strengths = {entity_id: score / best for entity_id, score in signals.keyword_scores.items() if best > 0}
    for entity_id in signals.similarity_seeds:
        cosine = max(0.0, signals.entity_similarity.get(entity_id) or 0.0)
        strengths[entity_id] = max(strengths.get(entity_id, 0.0), cosine)
    return strengths


def rank_context(
    entities: list[StoredEntity],
    edges: list[StoredEdge],
    passages: list[Passage],
    signals: Signals,
    limits: Limits,
) -> Ranked:
    """The candidates worth their tokens, best first, within `limits.context_token_budget`."""
    return cut(scored_candidates(entities, edges, passages, signals, limits), entities, limits)


def scored_candidates(
    entities: list[StoredEntity],
    edges: list[StoredEdge],
    passages: list[Passage],
    signals: Signals,
    limits: Limits,
) -> list[tuple[float, int, str, object]]:
    """Every candidate as (relevance, its place in the retrieval, kind, item), best first."""
    names = {entity.id: entity for entity in entities}
    strengths = seed_strengths(signals)
    # The terms that ask something of the seeds the question names ("founder", "born" of "where
    # was the founder of Acme born?"): its names are the anchors' part, counted there.
    named = " ".join(names[i].name.lower() for i in signals.keyword_scores if i in names)
    asking = [stem(term) for term in signals.terms if term not in named]
    terms = asking or [stem(term) for term in signals.terms]

    def relevance(similarity: float | None, share: float, anchor: float) -> float:
        """`share`: of the question's terms, in the candidate's text (term_share)."""
        return (similarity or 0.0) + limits.rank_keyword_weight * share + limits.rank_anchor_weight * anchor

    # The ends' descriptions count too: "the violinist" names the fact of the violinist. Each
    # edge's terms are found once: the edges are scored twice (bridged below) or along paths.
    edge_terms = [
        matched_terms(
            terms,
            " ".join(
                [
                    _entity_text(names.get(edge.source_id)),
                    edge.relation,
                    _entity_text(names.get(edge.target_id)),
                    edge.description,
                ]
            ),
        )
        for edge in edges
    ]
    edge_shares = [len(found) / len(terms) if terms else 0.0 for found in edge_terms]

    def edge_scores(anchors: dict[int, float]) -> list[float]:
        scores = []
        for edge, share in zip(edges, edge_shares, strict=True):
            anchor = max(anchors.get(edge.source_id, 0.0), anchors.get(edge.target_id, 0.0))
            scores.append(relevance(signals.edge_similarity.get(edge.id), share, anchor))
        return scores

    scores = edge_scores(strengths)
    if limits.rank_graph == "paths":
        along = path_scores(edges, edge_terms, signals, strengths, limits, terms)
        scores = [max(score, along.get(index, score)) for index, score in enumerate(scores)]
    elif limits.rank_graph == "pagerank":
        flows = pagerank_scores(edges, edge_terms, signals, strengths, limits)
        scores = [
            score + limits.rank_pagerank_weight * flow for score, flow in zip(scores, flows, strict=True)
        ]
    else:
        # Hop distance from the strongest seeds: the far ends of the best facts become seeds of
        # `rank_hop_decay` of their fact's anchor, so that their own facts (the second hop of
        # "where was the founder of Acme born?") outrank the like facts of entities nothing leads to.
        bridged: dict[int, float] = {}
        for index in sorted(range(len(edges)), key=lambda i: -scores[i])[: limits.rank_bridge_facts]:
            edge = edges[index]
            anchor = max(strengths.get(edge.source_id, 0.0), strengths.get(edge.target_id, 0.0))
            for end in (edge.source_id, edge.target_id):
                if end not in strengths:
                    bridged[end] = max(bridged.get(end, 0.0), limits.rank_hop_decay * anchor)
        if bridged:
            scores = edge_scores({**bridged, **strengths})
    if signals.asked_now:
        scores = [
            score - limits.rank_ended_penalty if edge.invalid_at is not None else score
            for score, edge in zip(scores, edges, strict=True)
        ]

    candidates: list[tuple[float, int, str, object]] = [  # (relevance, order, kind, item)
        (score, order, "edge", edge) for order, (score, edge) in enumerate(zip(scores, edges, strict=True))
    ]
    for order, entity in enumerate(entities):
        if entity.id not in signals.seeds:
            continue  # an end of a fact comes with its fact
        share = term_share(terms, _entity_text(entity))
        score = relevance(signals.entity_similarity.get(entity.id), share, strengths.get(entity.id, 0.0))
        candidates.append((score, order, "entity", entity))
    for order, passage in enumerate(passages):
        share = term_share(terms, f"{passage.summary or ''} {passage.text or ''}")
        score = relevance(signals.passage_similarity.get(passage.artifact_id), share, 0.0)
        candidates.append((score, order, "passage", passage))
    candidates.sort(key=lambda candidate: (-candidate[0], _KIND_ORDER[candidate[2]], candidate[1]))
    return candidates


def cut(
    candidates: list[tuple[float, int, str, object]], entities: list[StoredEntity], limits: Limits
) -> Ranked:
    """The best candidates while they fit the budget and stay within the margin of the best."""
    if not candidates:
        return Ranked([], [], [])
    names = {entity.id: entity for entity in entities}
    floor = candidates[0][0] - limits.rank_relevance_margin
    budget = limits.context_token_budget
    kept_entities: dict[int, StoredEntity] = {}
    kept_edges: list[StoredEdge] = []
    kept_passages: list[Passage] = []
    scores: dict[tuple[str, int], float] = {}

    def scored(kind: str, item_id: int, score: float) -> None:
        scores[(kind, item_id)] = max(score, scores.get((kind, item_id), score))

    def entity_cost(entity_ids: list[int]) -> int:
        return sum(
            estimated_tokens(entity_line(names[i]))
            for i in dict.fromkeys(entity_ids)
            if i not in kept_entities
        )

    for score, _, kind, item in candidates:
        if score < floor:
            break
        if kind == "entity":
            cost = entity_cost([item.id])
            if cost <= budget:
                kept_entities.setdefault(item.id, item)
                scored("entity", item.id, score)
                budget -= cost
        elif kind == "edge":
            # The line holds the fact's relation and description at least: a fact that cannot fit
            # is passed over without its line written (most of a large context's, once the budget
            # is nearly spent).
            if math.ceil((len(item.relation) + len(item.description or "") + 1) / CHARS_PER_TOKEN) > budget:
                continue
            ends = [i for i in (item.source_id, item.target_id) if i in names]
            source, target = names.get(item.source_id), names.get(item.target_id)
            cost = estimated_tokens(
                edge_line(item, source.name if source else "?", target.name if target else "?")
            ) + entity_cost(ends)
            if cost <= budget:
                for entity_id in ends:
                    kept_entities.setdefault(entity_id, names[entity_id])
                    scored("entity", entity_id, score)
                kept_edges.append(item)
                scored("edge", item.id, score)
                budget -= cost
        else:
            given = _passage_within(item, budget)
            if given is not None:
                kept_passages.append(given)
                scored("passage", given.artifact_id, score)
                budget -= passage_tokens(given)
    return Ranked(list(kept_entities.values()), kept_edges, kept_passages, scores)


def _entity_text(entity: StoredEntity | None) -> str:
    return f"{entity.name} {entity.type} {entity.description}" if entity else ""


_KIND_ORDER = {"edge": 0, "entity": 1, "passage": 2}


def passage_tokens(passage: Passage) -> int:
    return sum(estimated_tokens(line) for line in passage_lines(passage))


def _passage_within(passage: Passage, budget: int) -> Passage | None:
    """The passage as given, or with its summary only when its text does not fit, or None."""
    if passage_tokens(passage) <= budget:
        return passage
    if passage.summary is not None and passage.text is not None:
        summary_only = Passage(passage.artifact_id, passage.parent_id, passage.index, passage.summary, None)
        if passage_tokens(summary_only) <= budget:
            return summary_only
    return None
