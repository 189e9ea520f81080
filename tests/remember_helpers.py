"""Helpers of the remember tests (and bench/remember.py): a tiny rule-based model behind the
Anthropic fake, calls of the remember handler, and a counter of SQL round trips.

The rule-based model reads the prompt the way a real model would: the extraction from the
sentences inside <text>, relative years against <reference_time>; the resolution from the
<stored_facts> and <new_facts> lines; an answer citing the context's first ids; no places in a
question. So the tests exercise the real prompts and replies.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gligabao.model import StoredEdge, StoredEntity

ROOT = Path(__file__).resolve().parent.parent

# sentence pattern -> (relation, source type, target type, what the trailing year means)
_NAME = r"[A-Z][\w'-]*(?: [A-Z][\w'-]*)*"
FACT_PATTERNS = [
    (
        re.compile(rf"^(?P<source>{_NAME}) works at (?P<target>{_NAME})$"),
        "works_at",
        "person",
        "organization",
        None,
    ),
    (
        re.compile(rf"^(?P<source>{_NAME}) is employed by (?P<target>{_NAME})$"),
        "employed_by",
        "person",
        "organization",
        None,
    ),
    (
        re.compile(rf"^(?P<source>{_NAME}) joined (?P<target>{_NAME}) in (?P<year>\d{{4}})$"),
        "works_at",
        "person",
        "organization",
        "valid",
    ),
    (
        re.compile(rf"^(?P<source>{_NAME}) left (?P<target>{_NAME}) in (?P<year>\d{{4}})$"),
        "works_at",
        "person",
        "organization",
        "invalid",
    ),
    (
        re.compile(rf"^(?P<source>{_NAME}) left (?P<target>{_NAME}) last year$"),
        "works_at",
        "person",
        "organization",
        "invalid-last-year",
    ),
    (re.compile(rf"^(?P<source>{_NAME}) lives in (?P<target>{_NAME})$"), "lives_in", "person", "place", None),
    (
        re.compile(rf"^(?P<source>{_NAME}) moved to (?P<target>{_NAME}) in (?P<year>\d{{4}})$"),
        "lives_in",
        "person",
        "place",
        "valid",
    ),
    (
        re.compile(rf"^(?P<source>{_NAME}) lived in (?P<target>{_NAME}) until (?P<year>\d{{4}})$"),
        "lives_in",
        "person",
        "place",
        "invalid",
    ),
    (
        re.compile(
            rf"^(?P<source>{_NAME}) lived in (?P<target>{_NAME}) from (?P<start>\d{{4}}) to (?P<year>\d{{4}})$"
        ),
        "lives_in",
        "person",
        "place",
        "from-to",
    ),
    (re.compile(rf"^(?P<source>{_NAME}) knows (?P<target>{_NAME})$"), "knows", "person", "person", None),
]
# Entities the text only describes: "Alice is an engineer."
DESCRIPTION_PATTERN = re.compile(rf"^(?P<name>{_NAME}) is an? (?P<description>[a-z][a-z ]*)$")
# A relation that holds for one target at a time: a new target contradicts the stored one.
FUNCTIONAL_RELATIONS = {"lives_in"}
SYNONYMS = {frozenset({"works_at", "employed_by"})}


def prompt_of(body: dict) -> str:
    return "\n".join(
        m["content"] if isinstance(m["content"], str) else "\n".join(b.get("text", "") for b in m["content"])
        for m in body["messages"]
    )


def stage_of(body: dict) -> str:
    """The stage a call is for: by its system prompt, so that what a text says cannot change it
    (a call without a system prompt of the four, by its content)."""
    from gligabao.ai.prompts.detect_geo import DETECT_GEO_SYSTEM
    from gligabao.ai.prompts.extract import EXTRACT_CHUNK_SYSTEM, EXTRACT_SYSTEM
    from gligabao.ai.prompts.query import QUERY_SYSTEM
    from gligabao.ai.prompts.resolve import RESOLVE_SYSTEM

    if _has_image(body):
        return "image"
    system = body.get("system")
    openings = {
        "extract": (EXTRACT_SYSTEM, EXTRACT_CHUNK_SYSTEM),
        "resolve": (RESOLVE_SYSTEM,),
        "query": (QUERY_SYSTEM,),  # asked as of a time or near places, it goes on after it
        "detect_geo": (DETECT_GEO_SYSTEM,),
    }
    by_system = isinstance(system, str) and next(
        (stage for stage, starts in openings.items() if system.startswith(starts)), None
    )
    return by_system or ("resolve" if "<new_facts>" in prompt_of(body) else "extract")


def _has_image(body: dict) -> bool:
    return any(
        isinstance(m["content"], list) and any(b.get("type") == "image" for b in m["content"])
        for m in body["messages"]
    )


def image_reply(body: dict) -> dict:
    """What a careful vision model sees: the caption's facts (by the sentence patterns), and a
    description naming the picture's format and caption."""
    prompt = prompt_of(body)
    caption = re.search(r"<caption>\n(.*)\n</caption>", prompt, re.DOTALL)
    reference = re.search(r"<reference_time>.*</reference_time>", prompt).group(0)
    [image] = [b for m in body["messages"] for b in m["content"] if b.get("type") == "image"]
    text = caption.group(1) if caption else ""
    extraction = extraction_reply({"messages": [{"content": f"{reference}\n<text>\n{text}\n</text>"}]})
    described = f" captioned: {text}" if text else ""
    return {"description": f"A {image['source']['media_type']} picture{described}", **extraction}


def extraction_reply(body: dict) -> dict:
    """What a careful model extracts from the prompt's <text>, by the sentence patterns above."""
    prompt = prompt_of(body)
    text = re.search(r"<text>\n(.*)\n</text>", prompt, re.DOTALL).group(1)
    reference_year = int(re.search(r"<reference_time>(\d{4})", prompt).group(1))
    entities: dict[str, dict] = {}
    edges = []
    for sentence in re.split(r"(?<=\.)\s+", text):
        sentence = sentence.strip().rstrip(".")
        described = DESCRIPTION_PATTERN.match(sentence)
        if described:
            entities.setdefault(described["name"], {"name": described["name"], "type": "person"})[
                "description"
            ] = described["description"]
            continue
        for pattern, relation, source_type, target_type, year_means in FACT_PATTERNS:
            match = pattern.match(sentence)
            if not match:
                continue
            entities.setdefault(
                match["source"], {"name": match["source"], "type": source_type, "description": ""}
            )
            entities.setdefault(
                match["target"], {"name": match["target"], "type": target_type, "description": ""}
            )
            edge = {
                "source": match["source"],
                "target": match["target"],
                "relation": relation,
                "description": sentence + ".",
                "valid_at": None,
                "invalid_at": None,
            }
            if year_means == "valid":
                edge["valid_at"] = f"{match['year']}-01-01T00:00:00Z"
            elif year_means == "invalid":
                edge["invalid_at"] = f"{match['year']}-01-01T00:00:00Z"
            elif year_means == "from-to":
                edge["valid_at"] = f"{match['start']}-01-01T00:00:00Z"
                edge["invalid_at"] = f"{match['year']}-01-01T00:00:00Z"
            elif year_means == "invalid-last-year":
                edge["invalid_at"] = f"{reference_year - 1}-01-01T00:00:00Z"
            edges.append(edge)
            break
    reply = {"entities": list(entities.values()), "edges": edges}
    if "<chunk>" in prompt:
        reply["summary"] = f"A part of a longer text about {', '.join(list(entities)[:3]) or 'nothing'}."
    return reply


_FACT_LINE = re.compile(
    r"^\[(?:id )?(?P<key>\d+)\] (?P<source>.+?) (?P<relation>[a-z0-9_]+) (?P<target>.+?)(?::|$| \()"
)


def resolution_reply(body: dict) -> dict:
    """Duplicates: same source and target with a synonymous relation. Contradictions: a new target
    for a functional relation of the same source. A window's call (several texts, memory/windows.py)
    judges each new fact against the earlier new facts too, by the same rules."""
    prompt = prompt_of(body)
    stored = [_FACT_LINE.match(line) for line in _section(prompt, "stored_facts")]
    new = [_FACT_LINE.match(line) for line in _section(prompt, "new_facts")]
    window = "contradicts_new" in str(body.get("system"))
    facts = []
    for position, fact in enumerate(new):
        decision = {"fact": int(fact["key"]), "duplicate_of": None, "contradicts": []}
        duplicate_of, contradicts = _judged_against(fact, stored)
        if duplicate_of is not None:
            decision["duplicate_of"] = duplicate_of
        decision["contradicts"] = contradicts
        if window:
            duplicate_of_new, contradicts_new = _judged_against(fact, new[:position])
            decision.update(duplicate_of_new=duplicate_of_new, contradicts_new=contradicts_new)
        facts.append(decision)
    return {"facts": facts}


def _judged_against(fact: re.Match, edges: list[re.Match]) -> tuple[int | None, list[int]]:
    duplicate_of, contradicts = None, []
    for edge in edges:
        same_ends = (edge["source"], edge["target"]) == (fact["source"], fact["target"])
        if same_ends and frozenset({edge["relation"], fact["relation"]}) in SYNONYMS:
            duplicate_of = int(edge["key"])
        elif (
            edge["source"] == fact["source"]
            and edge["relation"] == fact["relation"]
            and fact["relation"] in FUNCTIONAL_RELATIONS
            and edge["target"] != fact["target"]
        ):
            contradicts.append(int(edge["key"]))
    return duplicate_of, contradicts


def _section(prompt: str, tag: str) -> list[str]:
    return re.search(rf"<{tag}>\n?(.*?)</{tag}>", prompt, re.DOTALL).group(1).strip().splitlines()


def query_reply(body: dict) -> dict:
    """An answer citing the first entity, fact and passage of the context (none when it is empty)."""
    prompt = prompt_of(body)
    cited = {
        kind: [int(found.group(1))]
        if (found := re.search(rf"^\[{kind} (\d+)\]", prompt, re.MULTILINE))
        else []
        for kind in ("entity", "edge", "passage")
    }
    return {
        "answer": "From memory." if any(cited.values()) else "Nothing in memory says.",
        "entities": cited["entity"],
        "edges": cited["edge"],
        "passages": cited["passage"],
    }


def rule_based_model(body: dict) -> dict:
    """The responder of the Anthropic fake: an image's extraction, a text's, resolution, an answer or
    the places of a question (none), from the prompt."""
    stage = stage_of(body)
    if stage == "image":
        return image_reply(body)
    if stage == "query":
        return query_reply(body)
    if stage == "detect_geo":
        return {"places": []}
    return resolution_reply(body) if stage == "resolve" else extraction_reply(body)


def use_rule_based_model(fake_anthropic) -> None:
    fake_anthropic.responder = rule_based_model


@pytest.fixture
def models(fake_anthropic, fake_openai):
    """The fake providers, the Anthropic one answering as the rule-based model."""
    use_rule_based_model(fake_anthropic)
    return fake_anthropic, fake_openai


def remember(api, text: str, **fields) -> dict:
    """POST /v1/gb/remember for user u1 over the local API; the 200 body."""
    reply = api.post("/v1/gb/remember", {"user_id": "u1", "text": text, **fields})
    assert reply.status == 200, reply.json
    return reply.json


def stages_called(fake_anthropic) -> list[str]:
    return [stage_of(body) for body in fake_anthropic.messages]


# --- calling the remember handler in-process (the same handler the Lambda and the local API run)


def remember_handler():
    spec = importlib.util.spec_from_file_location(
        "gligabao_function_remember_tests", ROOT / "functions" / "remember" / "app.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


@dataclass
class HandlerReply:
    status: int
    json: dict
    headers: dict[str, str] = field(default_factory=dict)


def call_handler(
    handler,
    body: dict | None = None,
    *,
    raw: str | bytes | None = None,
    headers: dict[str, str] | None = None,
    path: str = "/v1/gb/remember",
) -> HandlerReply:
    """POST `body` (or `raw`) to the remember function's `path` as API Gateway would."""
    from types import SimpleNamespace

    from gligabao.local.server import build_event

    route = SimpleNamespace(path=path, method="ANY")
    payload = raw.encode() if isinstance(raw, str) else raw if raw is not None else json.dumps(body).encode()
    headers = {"content-type": "application/json", **(headers or {})}
    event = build_event(route, {}, "POST", path, "", headers, payload, "127.0.0.1")
    result = handler(event, None)
    return HandlerReply(result["statusCode"], json.loads(result["body"]), result.get("headers") or {})


# --- texts to remember: many facts, long enough to be chunked

FILLER = "The committee met again on a grey morning and talked for a long while."  # 71 characters


def paragraphs(count: int, sentences: int, fact=lambda i: f"Person{i} knows Person{i + 1}.") -> str:
    """`count` paragraphs of `sentences` sentences each: one fact, then FILLER sentences."""
    return "\n\n".join(" ".join([fact(i)] + [FILLER] * (sentences - 1)) for i in range(count))


def chain_text(facts: int, start: int = 0) -> str:
    """A text of exactly `facts` facts: Person0 knows Person1. Person1 knows Person2. ..."""
    return " ".join(f"Person{i} knows Person{i + 1}." for i in range(start, start + facts))


# --- entity vectors a test sets on the OpenAI fake -------------------------------------------


def unit(i: int) -> list[float]:
    """The unit vector of axis `i` (1536 dimensions)."""
    vector = [0.0] * 1536
    vector[i] = 1.0
    return vector


def with_cosine(cosine: float) -> list[float]:
    """A vector whose cosine with unit(0) is `cosine`."""
    vector = [0.0] * 1536
    vector[0], vector[1] = cosine, math.sqrt(1 - cosine * cosine)
    return vector


def stored_entity(id_: int, name: str, type_: str = "person", description: str = "") -> StoredEntity:
    """An entity as the graph returns it, for the stages that read the extracted graph."""
    return StoredEntity(id=id_, name=name, type=type_, description=description)


def stored_edge(source: int, target: int, relation: str = "knows") -> StoredEdge:
    """A current fact between two stored entities, its id made of theirs."""
    return StoredEdge(
        id=source * 100 + target,
        source_id=source,
        target_id=target,
        relation=relation,
        description="",
        artifact_id=1,
        valid_at=None,
        invalid_at=None,
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
    )
