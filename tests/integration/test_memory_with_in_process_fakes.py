"""The memory core takes its dependencies as a bundle: here the real PostgreSQL with an in-process
LLM and embedder (no HTTP, no environment variable), as the composition root intends."""

from __future__ import annotations

import hashlib
import math
from datetime import UTC, datetime

import pytest

from gligabao.bootstrap import Bundle
from gligabao.errors import NotFound
from gligabao.memory import query
from gligabao.memory.remember import TextToRemember, remember_text
from gligabao.observability.inferences import Inference
from gligabao.settings import Settings

NOW = datetime(2025, 1, 31, 9, 0, tzinfo=UTC)


class ScriptedLLM:
    """Answers each stage with the reply given for it, and records what it was asked."""

    def __init__(self, replies: dict[str, dict]):
        self.replies = replies
        self.stages: list[str] = []

    def complete(self, call, stage, *, reply_model, **options):
        self.stages.append(stage)
        call.record(Inference(stage, "scripted", "none", 1, 1, None, 0.0, 0, True))
        return reply_model.model_validate(self.replies[stage])


class HashEmbedder:
    """A vector per text from its hash: the same text, the same vector."""

    def __init__(self, dimensions: int = 1536):
        self.dimensions = dimensions
        self.requests = 0

    def embed(self, call, texts, stage="embed", *, deadline=None):
        self.requests += 1
        call.record(Inference(stage, "hash", None, len(texts), 0, None, 0.0, 0, True))
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> list[float]:
        seed = hashlib.sha256(text.encode()).digest()
        raw = [seed[i % len(seed)] - 127.5 + i % 7 for i in range(self.dimensions)]
        norm = math.sqrt(sum(x * x for x in raw))
        return [x / norm for x in raw]


EXTRACTION = {
    "entities": [{"name": "Alice", "type": "person", "description": "engineer"}],
    "edges": [
        {"source": "Alice", "target": "Acme", "relation": "works_at", "description": "Alice works at Acme."}
    ],
}


@pytest.fixture
def memory(database_url, test_database, db):
    llm = ScriptedLLM(
        {"extract": EXTRACTION, "query": {"answer": "Alice works at Acme.", "entities": [1], "edges": [1]}}
    )
    return Bundle(
        Settings(database_url=database_url),
        database=test_database,
        llm=llm,
        embedder=HashEmbedder(),
        clock=lambda: NOW,
    )


def test_remember_then_query_with_in_process_fakes(memory, db):
    remembered = remember_text(
        memory, TextToRemember(user_id="u1", dataset="main", text="Alice works at Acme.")
    )

    assert [e.name for e in remembered.entities] == ["Alice", "Acme"]
    assert [(e.relation, e.valid_at) for e in remembered.edges] == [("works_at", NOW)]

    answer = query.answer(memory, query.Question(user_id="u1", query="Where does Alice work?"))

    assert answer.answer == "Alice works at Acme."
    assert [edge.id for edge in answer.evidence.edges] == [remembered.edges[0].id]
    assert memory.llm.stages == ["extract", "query"]
    assert memory.embedder.requests == 2  # one per call
    assert db.execute("SELECT count(*) FROM gb_inferences").fetchone()[0] == 4


def test_the_clock_of_the_bundle_is_the_time_of_the_facts(memory):
    remembered = remember_text(
        memory, TextToRemember(user_id="u1", dataset="main", text="Alice works at Acme.")
    )

    assert remembered.edges[0].valid_at == NOW


def test_a_query_of_a_missing_dataset_asks_no_model(memory):
    with pytest.raises(NotFound):
        query.answer(memory, query.Question(user_id="u1", query="Where does Alice work?", dataset="nope"))

    assert memory.llm.stages == [] and memory.embedder.requests == 0
