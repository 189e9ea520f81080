"""Arranging graph rows for the query tests, with the vectors the fake OpenAI would give them,
and the small tools the tests use (vectors at a chosen cosine, counting SQL statements)."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import psycopg
from fakes.openai_server import DEFAULT_DIMENSIONS, hashed_bag_of_words

from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.names import normalized_name

DIMENSIONS = DEFAULT_DIMENSIONS
T0 = datetime(2025, 1, 31, 9, 0, 0, tzinfo=UTC)


def fake_vector(text: str) -> list[float]:
    """The vector the fake OpenAI gives `text`."""
    return hashed_bag_of_words(text, DIMENSIONS)


def entity_text(name: str, type_: str, description: str) -> str:
    return f"{name} ({type_}): {description}"


def edge_text(source: str, relation: str, target: str, description: str) -> str:
    return f"{source} {relation} {target}: {description}"


def basis(i: int) -> list[float]:
    vector = [0.0] * DIMENSIONS
    vector[i] = 1.0
    return vector


def at_cosine(base: list[float], cosine: float, away: int) -> list[float]:
    """A unit vector whose cosine with the unit vector `base` is exactly `cosine`, leaning
    towards basis(`away`) (which must be orthogonal to base)."""
    return _leaning(base, cosine, basis(away))


def scattered(base: list[float], cosine: float, rng: random.Random) -> list[float]:
    """A unit vector at exactly `cosine` with the unit vector `base`, leaning towards a random
    direction: rows an HNSW graph links as it would real embeddings (rows leaning on basis
    vectors are all alike, and the graph may leave some of them unreachable)."""
    lean = [rng.gauss(0, 1) for _ in base]
    along = sum(a * b for a, b in zip(lean, base, strict=True))
    lean = [x - along * b for x, b in zip(lean, base, strict=True)]
    norm = math.sqrt(sum(x * x for x in lean))
    return _leaning(base, cosine, [x / norm for x in lean])


def _leaning(base: list[float], cosine: float, other: list[float]) -> list[float]:
    """`cosine` of the unit vector `base` and the rest of the unit vector `other`, orthogonal to it."""
    assert abs(sum(a * b for a, b in zip(base, other, strict=True))) < 1e-9
    sine = math.sqrt(max(0.0, 1 - cosine * cosine))
    return [cosine * a + sine * b for a, b in zip(base, other, strict=True)]


def vector_literal(values) -> str | None:
    return None if values is None else "[" + ",".join(repr(float(v)) for v in values) + "]"


class Graph:
    """Rows of one dataset, inserted directly (remember is not exercised by these tests).

    Entity and edge vectors default to the fake OpenAI's vector of the texts `remember`
    embeds; `embedding=None` leaves a row without vector, a list sets it.
    """

    _AUTO = object()

    def __init__(self, db: psycopg.Connection, user_id: str = "u1", name: str = "main"):
        self.db = db
        self.user_id = user_id
        self.dataset_id = db.execute(
            "INSERT INTO gb_datasets (user_id, name) VALUES (%s, %s) RETURNING id", [user_id, name]
        ).fetchone()[0]
        self.names: dict[int, str] = {}

    def entity(
        self,
        name: str,
        type_: str = "person",
        description: str = "",
        *,
        embedding=_AUTO,
        updated_at: datetime | None = None,
    ) -> int:
        if embedding is Graph._AUTO:
            embedding = fake_vector(entity_text(name, type_, description))
        moment = updated_at or datetime.now(UTC)
        entity_id = self.db.execute(
            """INSERT INTO gb_entities (dataset_id, name, normalized_name, type, description, embedding,
                                        created_at, updated_at)
               VALUES (%s, %s, %s, %s, %s, %s::vector, %s, %s) RETURNING id""",
            [
                self.dataset_id,
                name,
                " ".join(name.lower().split()),
                type_,
                description,
                vector_literal(embedding),
                moment,
                moment,
            ],
        ).fetchone()[0]
        self.names[entity_id] = name
        return entity_id

    def edge(
        self,
        source_id: int,
        target_id: int,
        relation: str,
        description: str = "",
        *,
        artifact_id: int | None = None,
        valid_at: datetime | None = None,
        invalid_at: datetime | None = None,
        expired_at: datetime | None = None,
        created_at: datetime | None = None,
        embedding=_AUTO,
    ) -> int:
        if embedding is Graph._AUTO:
            embedding = fake_vector(
                edge_text(self.names[source_id], relation, self.names[target_id], description)
            )
        return self.db.execute(
            """INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, description, artifact_id,
                                     valid_at, invalid_at, expired_at, created_at, embedding)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::vector) RETURNING id""",
            [
                self.dataset_id,
                source_id,
                target_id,
                relation,
                description,
                artifact_id,
                valid_at,
                invalid_at,
                expired_at,
                created_at or datetime.now(UTC),
                vector_literal(embedding),
            ],
        ).fetchone()[0]

    def text(self, text: str = "Alice works at Acme.", session_id: str | None = None) -> int:
        return self.db.execute(
            "INSERT INTO gb_artifacts (dataset_id, kind, text, session_id) VALUES (%s, 'text', %s, %s) RETURNING id",
            [self.dataset_id, text, session_id],
        ).fetchone()[0]

    def chunk(
        self,
        parent_id: int,
        index: int,
        text: str,
        summary: str | None = None,
        *,
        embedding=_AUTO,
        summary_embedding=_AUTO,
    ) -> int:
        if embedding is Graph._AUTO:
            embedding = fake_vector(text)
        if summary_embedding is Graph._AUTO:
            summary_embedding = fake_vector(summary) if summary else None
        return self.db.execute(
            """INSERT INTO gb_artifacts (dataset_id, kind, text, parent_id, chunk_index, summary, embedding,
                                         summary_embedding)
               VALUES (%s, 'chunk', %s, %s, %s, %s, %s::vector, %s::vector) RETURNING id""",
            [
                self.dataset_id,
                text,
                parent_id,
                index,
                summary,
                vector_literal(embedding),
                vector_literal(summary_embedding),
            ],
        ).fetchone()[0]


def alice_works_at_acme(
    db: psycopg.Connection, user_id: str = "u1", name: str = "main"
) -> tuple[Graph, dict]:
    """The seed's example: Alice (person, engineer) works at Acme (organization)."""
    graph = Graph(db, user_id, name)
    artifact = graph.text("Alice works at Acme.")
    alice = graph.entity("Alice", "person", "engineer")
    acme = graph.entity("Acme", "organization")
    works = graph.edge(
        alice,
        acme,
        "works_at",
        "Alice works at Acme.",
        artifact_id=artifact,
        valid_at=T0,
        created_at=T0 + timedelta(seconds=5),
    )
    return graph, {"artifact": artifact, "alice": alice, "acme": acme, "works_at": works}


# --- asking ---------------------------------------------------------------------------------------

NOWHERE = 1535  # a basis direction no arranged row uses: a question vector that matches nothing


def retrieved(
    question: str,
    vector: list[float] | None = None,
    *,
    user_id: str = "u1",
    dataset: str = "main",
    limits=None,
    as_of: datetime | None = None,
    retrieval: str = "seed",
):
    """The context `retrieve` builds for `question`, its vector given (no provider involved);
    with `as_of`, from the facts valid at that time. The seed's retrieval (GB_RETRIEVAL=seed),
    whose rules these tests state, unless `retrieval="ranked"`."""
    from gligabao import bootstrap
    from gligabao.errors import NotFound
    from gligabao.memory.retrieval import retrieve

    chosen = vector if vector is not None else basis(NOWHERE)
    chosen_limits = (limits or DEFAULT_LIMITS).model_copy(update={"retrieval": retrieval})
    with bootstrap.bundle().database.transaction(user_id, dataset) as uow:
        if uow.dataset_id is None:
            raise NotFound(f"dataset {dataset!r} not found")
        return retrieve(uow, dataset, question, lambda: chosen, chosen_limits, as_of=as_of)


def reply_citing(answer: str = "Alice works at Acme.", entities=(), edges=(), passages=()) -> dict:
    return {"answer": answer, "entities": list(entities), "edges": list(edges), "passages": list(passages)}


def ask(api, query: str = "Where does Alice work?", **fields):
    return api.post("/v1/gb/query", {"user_id": "u1", "query": query, **fields})


def prompt_sent(fake_anthropic) -> str:
    """The user content of the last Messages request."""
    from fakes.anthropic_server import prompt_text

    return prompt_text(fake_anthropic.messages[-1])


def keyword_score(
    name: str, description: str, terms: list[str], normalized_question: str, limits=DEFAULT_LIMITS
) -> int:
    """The seed's score of one entity, in Python: the oracle the SQL scoring is compared with."""
    lowered_name, lowered_description = normalized_name(name), description.lower()
    score = limits.whole_name_score if lowered_name and lowered_name in normalized_question else 0
    for term in terms:
        score += limits.term_in_name_score if term in lowered_name else 0
        score += limits.term_in_description_score if term in lowered_description else 0
    return score


def retrieved_pipelined(
    question: str, vector: list[float], *, as_of: datetime | None = None, retrieval: str = "seed"
):
    """The context as POST /v1/gb/query retrieves it: a pipelined unit of work (on a warm
    connection, BEGIN travels with the keyword statement, COMMIT with the context statement);
    the seed's retrieval unless `retrieval="ranked"` (the same statements)."""
    from gligabao import bootstrap
    from gligabao.memory.retrieval import retrieve

    with bootstrap.bundle().database.transaction("u1", pipeline=True) as uow:
        limits = DEFAULT_LIMITS.model_copy(update={"retrieval": retrieval})
        return retrieve(uow, "main", question, lambda: vector, limits, as_of=as_of)
