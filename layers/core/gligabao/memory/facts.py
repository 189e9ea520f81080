"""remember with `facts` (bring your own facts): the caller's entities and edges, in the extraction
stage's shape, take the place of the extraction call; everything after it is a text's (embed in one
request -> resolve entities -> resolve facts -> store in one transaction, with provenance and
session links, places when geo is on). The artifact, of kind 'facts', holds the facts as given."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from gligabao.ai.prompts.extract import Extraction
from gligabao.memory.extraction import merge_extractions
from gligabao.memory.geo import locate_places
from gligabao.memory.operation import operation
from gligabao.memory.ports import Memory
from gligabao.memory.remember import Remembered, TextToRemember, embed, judge_facts, store
from gligabao.observability.inferences import CallGuard

ARTIFACT_KIND = "facts"


@dataclass(frozen=True)
class FactsToRemember:
    user_id: str
    dataset: str
    facts: Extraction
    given: str  # the facts as the caller gave them (JSON): the artifact's text
    session_id: str | None = None
    reference_time: datetime | None = None
    reasoning: Mapping[str, str] = field(default_factory=dict)
    models: Mapping[str, str] = field(default_factory=dict)
    memory_kind: str = "knowledge"  # or "episode"
    metadata: Mapping[str, object] = field(default_factory=dict)

    def as_text(self) -> TextToRemember:
        """The request as the text pipeline's steps take it, its text the facts as given."""
        return TextToRemember(
            user_id=self.user_id,
            dataset=self.dataset,
            text=self.given,
            session_id=self.session_id,
            reference_time=self.reference_time,
            reasoning=self.reasoning,
            models=self.models,
            memory_kind=self.memory_kind,
            metadata=self.metadata,
        )


def facts_request(pending: TextToRemember) -> FactsToRemember:
    """The request of a pending 'facts' artifact, whose text holds the facts as given (validated
    when the request was accepted)."""
    return FactsToRemember(
        user_id=pending.user_id,
        dataset=pending.dataset,
        facts=Extraction.model_validate_json(pending.text),
        given=pending.text,
        session_id=pending.session_id,
        reference_time=pending.reference_time,
        reasoning=pending.reasoning,
        models=pending.models,
    )


def remember_facts(
    memory: Memory,
    request: FactsToRemember,
    *,
    request_id: str | None = None,
    deadline: float | None = None,
    artifact_id: int | None = None,
    guard: CallGuard | None = None,
) -> Remembered:
    """Remember the caller's facts: no extraction call; at most one LLM call (resolve, when the
    dataset holds facts to compare with) and one embeddings request. `artifact_id`: the pending
    artifact of an asynchronous remember, filled instead of inserted (AlreadyStored when done)."""
    with operation(
        memory,
        "remember",
        user_id=request.user_id,
        dataset=request.dataset,
        session_id=request.session_id,
        request_id=request_id,
        guard=guard,
    ) as op:
        _llm, embedder, geo = memory.llm, memory.embedder, memory.geo  # 503s before any model call
        now = memory.clock()
        reference_time = request.reference_time or now
        as_text = request.as_text()
        graph = merge_extractions(
            [request.facts], reference_time, name_max_chars=memory.limits.entity_name_max_chars
        )
        vectors = embed(embedder, op.call, graph, [], deadline)
        judgement = judge_facts(memory, op.call, as_text, graph, vectors, reference_time, now, deadline)
        places = locate_places(geo, graph.entities)  # {} while geo is off
        return store(
            memory,
            op,
            as_text,
            graph,
            [],
            vectors,
            judgement,
            reference_time,
            places,
            kind=ARTIFACT_KIND,
            artifact_id=artifact_id,
        )
