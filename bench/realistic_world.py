"""A realistic world for the benchmarks: generated from a seed, loaded through the public API (timed), kept.

    .venv/bin/python bench/realistic_world.py [--sizes 2k,10k,100k] [--via batch|remember] [--rebuild]

The world (issue 43's shape): about 10 entities per 100 facts; people sharing a few dozen first
names, each first name worn by many people of different surnames; hubs (cities, companies,
projects) with dozens of facts each, some far more than others; texts of 50 facts, in the
sentences the test suite's rule-based model extracts (tests/remember_helpers.py): "Anna Lind lives
in Varo.", "Anna Lind works at Kelda Labs.", "Anna Lind joined Project Orion in 2019.", "Anna Lind
knows Tomas Berg." Every fact is new: each person lives in one city and works at one company, so
the model judges nothing a duplicate or a contradiction and the graph holds every fact said.

The loader sends the texts to the local API over HTTP (the service's functions in 4 worker
processes, as `gligabao serve` runs them), into one dataset of one user, with the test suite's fake
providers answering instantly (real SDKs and HTTP): `--via batch` (the default) is the bulk import,
POST /v1/gb/remember/batch, 4 batches of 20 texts at a time, remembered by the job queue in windows
(memory/windows.py); `--via remember` sends one text per POST /v1/gb/remember, 4 at a time. Either
prints the load's time, facts/s and texts/s (on this world the bulk import is much the slower:
docs/performance.md, realistic world).

Each size is a database of its own (realistic_world_2k, ...) in the bench's own embedded PostgreSQL
cluster, var/bench-realistic-pgdata, kept between runs (built the first time; `--rebuild` builds it
again). That cluster runs with autovacuum off (`ALTER SYSTEM` on this cluster only; the service's
settings and migrations are untouched): the queries of bench/query.py --world realistic then meet
the statistics a fresh import has, the ones the service itself gathered during the load, however
long after the load they run. With DATABASE_URL set, the databases are made on that server instead,
whose autovacuum is its own.

bench/query.py --world realistic and bench/remember.py --world realistic measure on these worlds.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import itertools
import json
import os
import random
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

SIZES = {"2k": 2_000, "10k": 10_000, "100k": 100_000}
SEED = 43
FACTS_PER_TEXT = 50
ENTITIES_PER_FACT = 0.1  # about 10 entities per 100 facts
HUB_SHARE = 0.1  # of the entities: cities, companies and projects
USER = "bench"
DATASET = "world"
CONCURRENCY = 4  # requests at a time, and the service's worker processes
BATCH_TEXTS = 20  # texts of one POST /v1/gb/remember/batch
DATA_DIR = ROOT / "var" / "bench-realistic-pgdata"
LOAD_TIMEOUT_S = 4 * 3600

FIRST_NAMES = """Anna Tomas Maria Lukas Sofia Jonas Elena Marco Laura David Nina Peter Clara Felix Julia
Oskar Emma Daniel Lea Paul Sara Max Hanna Leon Mia Noah Ida Erik Alma Hugo Ines Karl Vera Ivan Rosa
Adam Lina Otto Eva Jan""".split()
SURNAMES = """Lind Berg Novak Moreau Rossi Weber Costa Brandt Keller Dahl Silva Horvat Meyer Fischer
Jensen Larsen Kovac Russo Ferrari Schmidt Wagner Becker Hoffmann Nielsen Hansen Petrov Ivanova
Fontaine Laurent Girard Bauer Richter Koch Wolf Neumann Vogel Frank Lang Haas Roth Sauer Ostrowski
Marin Santos Pereira Gomez Ortega Ruiz Navarro Molina""".split()
SYLLABLES = (
    "ka ri to me lu sa no vi de ra po li mu te zo an el or is un ba ce di fo ga he ju ko la mi na".split()
)
COMPANY_KINDS = ("Labs", "Systems", "Logistics", "Foods", "Bank", "Media", "Energy", "Robotics")
YEARS = range(2012, 2026)


@dataclass(frozen=True)
class Fact:
    sentence: str  # as said, and as the service stores its description
    relation: str  # lives_in, works_at (a company), joined (a project), knows
    source: str
    target: str


@dataclass
class Person:
    first: str
    surname: str
    city: str = ""
    company: str = ""
    projects: list[tuple[str, int]] = field(default_factory=list)
    knows: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.first} {self.surname}"


@dataclass
class World:
    size: int
    people: list[Person]
    cities: list[str]
    companies: list[str]
    projects: list[str]
    facts: list[Fact]

    @property
    def hubs(self) -> list[str]:
        return self.cities + self.companies + self.projects

    def entities(self) -> int:
        return len(self.people) + len(self.hubs)

    def texts(self) -> list[str]:
        """The facts, FACTS_PER_TEXT to a text, in the world's order (a person's facts together)."""
        return [
            " ".join(fact.sentence for fact in self.facts[start : start + FACTS_PER_TEXT])
            for start in range(0, len(self.facts), FACTS_PER_TEXT)
        ]

    def facts_of(self, name: str) -> list[Fact]:
        return [fact for fact in self.facts if name in (fact.source, fact.target)]


def size_of(text: str) -> int:
    return SIZES.get(text.strip().lower()) or int(text.strip().replace("_", ""))


def label_of(size: int) -> str:
    return next((label for label, value in SIZES.items() if value == size), str(size))


# --- the world ----------------------------------------------------------------------------------


class Names:
    """Unique names: pseudo-words from syllables, capitalised (a name never said twice)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.taken: set[str] = set()

    def word(self) -> str:
        while True:
            word = "".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.choice((2, 3, 3)))).capitalize()
            if word not in self.taken:
                self.taken.add(word)
                return word


def skewed(rng: random.Random, items: list[str], count: int, power: float = 0.6) -> list[str]:
    """`count` picks of `items`, the first ones more often (a hub's size falls with its rank)."""
    return rng.choices(items, weights=[1 / (rank + 1) ** power for rank in range(len(items))], k=count)


def generate(size: int, seed: int = SEED) -> World:
    """A world of exactly `size` facts, the same for the same size and seed."""
    rng = random.Random(f"{seed}-{size}")
    names = Names(rng)
    entities = max(30, round(size * ENTITIES_PER_FACT))
    hubs = max(6, round(entities * HUB_SHARE))
    cities = [names.word() for _ in range(max(2, round(hubs * 0.3)))]
    companies = [f"{names.word()} {rng.choice(COMPANY_KINDS)}" for _ in range(max(2, round(hubs * 0.35)))]
    projects = [f"Project {names.word()}" for _ in range(hubs - len(cities) - len(companies))]
    people = _people(rng, names, entities - hubs)
    for person, city, company in zip(
        people, skewed(rng, cities, len(people)), skewed(rng, companies, len(people)), strict=True
    ):
        person.city, person.company = city, company
        person.projects = [(project, rng.choice(YEARS)) for project in sorted(set(skewed(rng, projects, 2)))]
    said = sum(2 + len(person.projects) for person in people)
    _acquaint(rng, people, size - said)
    return World(size, people, cities, companies, projects, [f for p in people for f in _facts_of(p)])


def _people(rng: random.Random, names: Names, count: int) -> list[Person]:
    """People of a few dozen first names (some far more common), each of a surname of its own."""
    surnames = SURNAMES + [names.word() for _ in range(max(0, count // 4 - len(SURNAMES)))]
    firsts = skewed(rng, FIRST_NAMES, count, power=0.7)
    taken: set[str] = set()
    people = []
    for first in firsts:
        surname = rng.choice(surnames)
        while f"{first} {surname}" in taken:
            surname = rng.choice(surnames)
        taken.add(f"{first} {surname}")
        people.append(Person(first, surname))
    return people


def _acquaint(rng: random.Random, people: list[Person], facts: int) -> None:
    """`facts` "knows" facts, spread evenly over the people, each about another person."""
    for index in range(facts):
        person = people[index % len(people)]
        while True:
            other = rng.choice(people)
            if other is not person and other.name not in person.knows:
                person.knows.append(other.name)
                break


def _facts_of(person: Person) -> list[Fact]:
    name = person.name
    facts = [
        Fact(f"{name} lives in {person.city}.", "lives_in", name, person.city),
        Fact(f"{name} works at {person.company}.", "works_at", name, person.company),
    ]
    facts += [
        Fact(f"{name} joined {project} in {year}.", "joined", name, project)
        for project, year in person.projects
    ]
    facts += [Fact(f"{name} knows {other}.", "knows", name, other) for other in person.knows]
    return facts


@dataclass(frozen=True)
class Question:
    text: str
    fact: Fact  # the fact asked about
    asked_by: str  # "full name", "hub" or "first name"


def questions(world: World, count: int = 60, seed: int = SEED) -> list[Question]:
    """`count` questions, each about one fact of the world: a third by a person's full name, a third
    by a hub's name and a first name, a third by a first name and the person's company."""
    rng = random.Random(f"questions-{seed}-{world.size}")
    by_full = _by_full_name(rng, world, count - 2 * (count // 3))
    by_hub = _by_hub(rng, world, count // 3)
    by_first = _by_first_name(rng, world, count // 3)
    turns = itertools.zip_longest(by_full, by_hub, by_first)
    return [question for turn in turns for question in turn if question is not None]


def _by_full_name(rng: random.Random, world: World, count: int) -> list[Question]:
    asked = []
    for index, person in enumerate(rng.sample(world.people, count)):
        facts = {fact.relation: fact for fact in reversed(_facts_of(person))}  # the first of each
        kind = ("lives_in", "works_at", "knows")[index % 3] if person.knows else "works_at"
        text = {
            "lives_in": f"Where does {person.name} live?",
            "works_at": f"Where does {person.name} work?",
            "knows": f"Who does {person.name} know?",
        }[kind]
        asked.append(Question(text, facts[kind], "full name"))
    return asked


def _alone_by_first_name(world: World, hub_of) -> list[Person]:
    """The people whose first name no one else in their hub (hub_of(person)) wears."""
    counts = Counter((hub_of(person), person.first) for person in world.people)
    return [person for person in world.people if counts[(hub_of(person), person.first)] == 1]


def _by_hub(rng: random.Random, world: World, count: int) -> list[Question]:
    at_company = _alone_by_first_name(world, lambda person: person.company)
    in_city = _alone_by_first_name(world, lambda person: person.city)
    asked = []
    for index in range(count):
        if index % 2 == 0 and at_company:
            person = at_company.pop(rng.randrange(len(at_company)))
            text, fact = f"Which {person.first} works at {person.company}?", _facts_of(person)[1]
        else:
            person = in_city.pop(rng.randrange(len(in_city)))
            text, fact = f"Which {person.first} lives in {person.city}?", _facts_of(person)[0]
        asked.append(Question(text, fact, "hub"))
    return asked


def _by_first_name(rng: random.Random, world: World, count: int) -> list[Question]:
    alone = _alone_by_first_name(world, lambda person: person.company)
    return [
        Question(f"Where does {person.first} from {person.company} live?", _facts_of(person)[0], "first name")
        for person in rng.sample(alone, min(count, len(alone)))
    ]


def new_facts(world: World, run: int, count: int = FACTS_PER_TEXT) -> list[Fact]:
    """`count` facts the world does not hold, about its people and projects: half of them people
    who meet, half people joining a project (fewer when the people have joined every project), the
    `run`-th such set of one stream: no two runs say the same fact."""
    rng = random.Random(f"new-{world.size}")
    known = {(fact.source, fact.target) for fact in world.facts}
    facts: list[Fact] = []
    misses = 0
    while len(facts) < count * (run + 1):
        person = rng.choice(world.people)
        if len(facts) % 2 == 0 or misses > 100:
            other = rng.choice(world.people).name
            fact = Fact(f"{person.name} knows {other}.", "knows", person.name, other)
        else:
            project = rng.choice(world.projects)
            fact = Fact(f"{person.name} joined {project} in 2026.", "joined", person.name, project)
        if fact.target == person.name or (fact.source, fact.target) in known:
            misses += 1
            if misses > 10_000:
                raise ValueError(f"a world of {world.size} facts has no {count * (run + 1)} new facts to say")
            continue
        known.add((fact.source, fact.target))
        facts.append(fact)
        misses = 0
    return facts[-count:]


# --- the bench's cluster and its kept databases -------------------------------------------------


def admin_url(data_dir: Path = DATA_DIR) -> str:
    """The bench's server: DATABASE_URL's, else its own embedded cluster, with autovacuum off."""
    from bench_setup import bench_admin_url

    url = bench_admin_url(str(data_dir))
    if not os.environ.get("DATABASE_URL"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            if conn.execute("SHOW autovacuum").fetchone()[0] != "off":
                conn.execute("ALTER SYSTEM SET autovacuum = off")
                conn.execute("SELECT pg_reload_conf()")
    return url


def database_url(admin: str, name: str, user: str | None = None) -> str:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(admin)
    params["dbname"] = name
    if user:
        params["user"] = user
    return make_conninfo(**params)


def world_database(size: int) -> str:
    return f"realistic_world_{label_of(size)}"


def world_ready(admin: str, name: str) -> bool:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return False
    with psycopg.connect(database_url(admin, name), autocommit=True) as conn:
        return bool(
            conn.execute(
                "SELECT to_regclass('bench_world') IS NOT NULL AND EXISTS (SELECT 1 FROM bench_world)"
            ).fetchone()[0]
        )


def create_database(admin: str, name: str, template: str | None = None) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template:
            statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        conn.execute(statement)


def drop_database(admin: str, name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@contextlib.contextmanager
def service_on(url: str, overrides: dict, migrate_first: bool) -> Iterator[object]:
    """The service's bundle on database `url` (migrated as its owner first, if asked), connecting as
    the service does, as gligabao_app; installed for this process, closed at the end."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from gligabao import bootstrap
    from gligabao.db.migrate import APP_ROLE, migrate, set_role_password
    from gligabao.settings import Settings

    params = conninfo_to_dict(url)
    if migrate_first:
        with psycopg.connect(url, autocommit=True) as conn:
            migrate(conn, Settings(**overrides).embedding_dimensions)
    params["user"] = APP_ROLE
    if params.get("password"):
        params["password"] = os.urandom(16).hex()
        with psycopg.connect(url, autocommit=True) as conn:
            set_role_password(conn, params["password"])
    bundle = bootstrap.Bundle(Settings(database_url=make_conninfo(**params), **overrides))
    bootstrap.install(bundle)
    try:
        yield bundle
    finally:
        bundle.database.close()


@contextlib.contextmanager
def fake_providers() -> Iterator[tuple[object, object, dict]]:
    """The test suite's fakes, the Anthropic one answering as the rule-based model: (anthropic,
    openai, the settings that point the service at them, auth off)."""
    import http.server

    http.server.BaseHTTPRequestHandler.disable_nagle_algorithm = True  # see bench/remember.py
    from bench_setup import provider_settings
    from fakes.anthropic_server import FakeAnthropic
    from fakes.openai_server import FakeOpenAI
    from remember_helpers import rule_based_model

    anthropic, openai = FakeAnthropic().start(), FakeOpenAI().start()
    anthropic.responder = rule_based_model
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="WARNING")
    try:
        yield anthropic, openai, {**provider_settings(anthropic, openai), "auth_mode": "none"}
    finally:
        anthropic.stop()
        openai.stop()


@contextlib.contextmanager
def local_api(bundle, workers: int) -> Iterator[tuple[int, object]]:
    """The local API on a loopback port: the functions in `workers` processes (0: this process), and
    the job queue of `gligabao serve` (in memory). (port, the queue)."""
    from bench_setup import local_api as api_on

    from gligabao.local.cli import serve_containers

    containers, queue = serve_containers(bundle, ROOT / "template.yaml", workers, durable_jobs=False)
    try:
        with api_on(containers) as (port, _):
            yield port, queue
    finally:
        if queue is not None:
            queue.stop()
        bundle.use_job_queue(None)


class Client:
    """POST to the local API over a keep-alive connection (one per thread)."""

    def __init__(self, port: int):
        self.port = port
        self.local = threading.local()

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        connection = getattr(self.local, "connection", None)
        if connection is None:
            connection = self.local.connection = http.client.HTTPConnection(
                "127.0.0.1", self.port, timeout=600
            )
        connection.request("POST", path, json.dumps(body), {"content-type": "application/json"})
        reply = connection.getresponse()
        return reply.status, json.loads(reply.read() or b"{}")


# --- the load -------------------------------------------------------------------------------------


@dataclass
class Load:
    via: str
    texts: int
    facts: int
    seconds: float
    llm_calls: int | None = None  # the fake Anthropic's requests during the load, when counted

    def line(self) -> str:
        calls = (
            f", {self.llm_calls / self.texts:.2f} LLM calls per text" if self.llm_calls is not None else ""
        )
        return (
            f"loaded {self.facts:,} facts in {self.texts:,} texts via {self.via} in {self.seconds:.1f} s: "
            f"{self.facts / self.seconds:.1f} facts/s, {self.texts / self.seconds:.2f} texts/s{calls}"
        )


def load(world: World, port: int, queue, via: str, dataset: str = DATASET, anthropic=None) -> Load:
    """The world's texts into one dataset of one user, CONCURRENCY requests at a time; `anthropic`:
    the fake whose requests during the load are counted."""
    texts = world.texts()
    client = Client(port)
    warm_up(client, queue, via)
    calls_before = len(anthropic.messages) if anthropic is not None else 0
    started = time.perf_counter()
    if via == "remember":
        _remember_each(client, texts, dataset)
    else:
        _remember_in_batches(client, queue, texts, dataset)
    seconds = time.perf_counter() - started
    calls = len(anthropic.messages) - calls_before if anthropic is not None else None
    return Load(via, len(texts), len(world.facts), seconds, calls)


def warm_up(client: Client, queue, via: str) -> None:
    """The worker processes started and their handlers loaded (not the load's time): a one-fact
    text per worker, into a dataset of its own."""
    texts = [f"Warm Up{index} knows Warm Start{index}." for index in range(CONCURRENCY)]
    if via == "remember":
        _remember_each(client, texts, "warm-up", facts_each=1)
    else:
        _remember_in_batches(client, queue, texts[:1], "warm-up")


def _remember_each(client: Client, texts: list[str], dataset: str, facts_each: int = FACTS_PER_TEXT) -> None:
    def remember(text: str) -> None:
        status, reply = client.post("/v1/gb/remember", {"user_id": USER, "dataset": dataset, "text": text})
        assert status == 200, reply
        assert len(reply["edges"]) == facts_each or text is texts[-1], reply

    with ThreadPoolExecutor(CONCURRENCY) as pool:
        list(pool.map(remember, texts))


def _remember_in_batches(client: Client, queue, texts: list[str], dataset: str) -> None:
    def send(batch: list[str]) -> None:
        body = {"user_id": USER, "dataset": dataset, "texts": [{"text": text} for text in batch]}
        status, reply = client.post("/v1/gb/remember/batch", body)
        assert status == 202, reply

    batches = [texts[start : start + BATCH_TEXTS] for start in range(0, len(texts), BATCH_TEXTS)]
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        list(pool.map(send, batches))
    assert queue.wait_until_empty(LOAD_TIMEOUT_S), "the job queue did not empty"


def counts(conn, dataset: str = DATASET) -> dict[str, int]:
    """The dataset's rows (on a connection of the tables' owner): edges still true, entities, and its
    texts by status."""
    [dataset_id] = conn.execute("SELECT id FROM gb_datasets WHERE name = %s", [dataset]).fetchone()
    edges, entities = conn.execute(
        """SELECT (SELECT count(*) FROM gb_edges WHERE dataset_id = %(d)s AND expired_at IS NULL),
                  (SELECT count(*) FROM gb_entities WHERE dataset_id = %(d)s)""",
        {"d": dataset_id},
    ).fetchone()
    statuses = conn.execute(
        "SELECT status, count(*) FROM gb_artifacts WHERE dataset_id = %s AND kind = 'text' GROUP BY status",
        [dataset_id],
    ).fetchall()
    return {"edges": edges, "entities": entities, **{f"texts {status}": count for status, count in statuses}}


def counts_of(url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return counts(conn)


def build_world(admin: str, size: int, via: str) -> tuple[Load, dict[str, int]]:
    """The world of `size` facts loaded into its own database, marked complete at the end."""
    import psycopg

    name = world_database(size)
    create_database(admin, name)
    owner_url = database_url(admin, name)
    world = generate(size)
    with (
        fake_providers() as (anthropic, _, settings),
        service_on(owner_url, settings, migrate_first=True) as bundle,
        local_api(bundle, CONCURRENCY) as api,
    ):
        figures = load(world, *api, via, anthropic=anthropic)
    rows = counts_of(owner_url)
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE bench_world (facts int, seed int, via text, seconds float8)")
        conn.execute("INSERT INTO bench_world VALUES (%s, %s, %s, %s)", [size, SEED, via, figures.seconds])
    return figures, rows


def ensure_world(admin: str, size: int, via: str = "batch", rebuild: bool = False) -> str:
    """The database of the world of `size` facts, built unless kept from an earlier run; its name."""
    name = world_database(size)
    if rebuild or not world_ready(admin, name):
        print(f"building the realistic world of {size:,} facts ({name}) ...", flush=True)
        figures, rows = build_world(admin, size, via)
        print(f"  {figures.line()}", flush=True)
        print(f"  rows: {', '.join(f'{value:,} {key}' for key, value in rows.items())}", flush=True)
    return name


# --- the queries ----------------------------------------------------------------------------------


@dataclass
class Asked:
    question: Question
    ms: float
    in_context: bool  # the asked fact among the <graph> the LLM was sent


def graph_sent(anthropic) -> str:
    """The <graph> of the last query prompt the fake Anthropic received."""
    from remember_helpers import prompt_of, stage_of

    body = next(body for body in reversed(anthropic.messages) if stage_of(body) == "query")
    prompt = prompt_of(body)
    start, end = prompt.find("<graph>"), prompt.find("</graph>")
    return prompt[start:end] if start >= 0 else ""


def ask(client: Client, anthropic, question: Question) -> Asked:
    anthropic.requests.clear()
    body = {"user_id": USER, "dataset": DATASET, "query": question.text}
    started = time.perf_counter()
    status, reply = client.post("/v1/gb/query", body)
    ms = (time.perf_counter() - started) * 1000
    assert status == 200, reply
    return Asked(question, ms, question.fact.sentence in graph_sent(anthropic))


def ask_all(port: int, anthropic, asked: list[Question], warm_up: int = 5) -> list[Asked]:
    """Each question over one keep-alive connection, after `warm_up` of them asked unmeasured."""
    client = Client(port)
    for question in asked[:warm_up]:
        ask(client, anthropic, question)
    return [ask(client, anthropic, question) for question in asked]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


@contextlib.contextmanager
def world_copy(admin: str, name: str, suffix: str, analyzed: bool) -> Iterator[str]:
    """A copy of a kept world (its statistics with it: none unless the service gathered some), ANALYZEd
    first if asked; its URL, dropped at the end."""
    import psycopg

    copy = f"{name}_{suffix}"
    create_database(admin, copy, template=name)
    try:
        if analyzed:
            with psycopg.connect(database_url(admin, copy), autocommit=True) as conn:
                conn.execute("ANALYZE")
        yield database_url(admin, copy)
    finally:
        drop_database(admin, copy)


def query_bench(sizes: list[int], count: int = 60, analyzed: bool = False) -> None:
    """bench/query.py --world realistic: each size's world (built if missing), queried over HTTP;
    `analyzed`: a copy of it, ANALYZEd first (what the statistics change)."""
    admin = admin_url()
    print(f"queries on the realistic world: {count} questions per size, each about one fact; through the")
    print("local API over one keep-alive connection (functions in this process), fake providers instant;")
    print(
        f"autovacuum {'off (the bench cluster)' if not os.environ.get('DATABASE_URL') else 'as DATABASE_URL server has it'}\n"
    )
    for size in sizes:
        name = ensure_world(admin, size)
        world = generate(size)
        asked = questions(world, count)
        with contextlib.ExitStack() as stack:
            url = (
                stack.enter_context(world_copy(admin, name, "analyzed", analyzed=True))
                if analyzed
                else database_url(admin, name)
            )
            anthropic, _, settings = stack.enter_context(fake_providers())
            bundle = stack.enter_context(service_on(url, settings, migrate_first=True))
            port, _ = stack.enter_context(local_api(bundle, 0))
            answers = ask_all(port, anthropic, asked)
        print_queries(size, answers, " (a copy, ANALYZEd)" if analyzed else "")


def print_queries(size: int, answers: list[Asked], note: str = "") -> None:
    times = [answer.ms for answer in answers]
    found = sum(answer.in_context for answer in answers)
    by_kind = Counter(answer.question.asked_by for answer in answers)
    found_by_kind = Counter(answer.question.asked_by for answer in answers if answer.in_context)
    kinds = ", ".join(f"{kind} {found_by_kind[kind]}/{total}" for kind, total in by_kind.items())
    print(
        f"{size:>7,} facts{note}: median {statistics.median(times):6.1f} ms, p95 {percentile(times, 0.95):6.1f} ms, "
        f"max {max(times):6.1f} ms; asked fact in the context {found}/{len(answers)} ({kinds}); "
        f"load {os.getloadavg()[0]:.2f}",
        flush=True,
    )


# --- the remembers --------------------------------------------------------------------------------


def cluster_cpu_seconds(data_dir: Path = DATA_DIR) -> float:
    """User and system CPU of the cluster's processes: the postmaster, its children, and those of
    its children that have ended (which the postmaster has waited for)."""
    import psutil

    pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    postmaster = psutil.Process(pid)
    times = postmaster.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    for child in postmaster.children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            child_times = child.cpu_times()
            total += child_times.user + child_times.system
    return total


@dataclass
class Remembered:
    ms: float
    round_trips: int
    pg_cpu_s: float | None


def remember_new_facts(client: Client, world: World, run: int, own_cluster: bool) -> Remembered:
    from sql_counting import counting_round_trips

    text = " ".join(fact.sentence for fact in new_facts(world, run))
    cpu = cluster_cpu_seconds() if own_cluster else None
    with counting_round_trips() as sql:
        started = time.perf_counter()
        status, reply = client.post("/v1/gb/remember", {"user_id": USER, "dataset": DATASET, "text": text})
        ms = (time.perf_counter() - started) * 1000
    assert status == 200, reply
    assert len(reply["edges"]) == FACTS_PER_TEXT, "the rule-based model extracted other facts"
    return Remembered(ms, sql.count, cluster_cpu_seconds() - cpu if own_cluster else None)


def remember_bench(sizes: list[int], repeat: int = 5, analyzed: bool = False) -> None:
    """bench/remember.py --world realistic: at each size, remembers of 50 new facts about the world's
    people and projects, into a copy of the world (the kept one stays as loaded; `analyzed`: the copy
    ANALYZEd first)."""
    admin = admin_url()
    own_cluster = not os.environ.get("DATABASE_URL")
    print(
        f"remember of {FACTS_PER_TEXT} new facts into the realistic world: median of {repeat} runs after one"
    )
    print("warm-up, over HTTP to the local API (functions in this process), fake providers instant; PG CPU:")
    print("user+system seconds of the bench cluster's processes over the request\n")
    print(f"{'facts':>8} {'wall ms':>9} {'SQL trips':>9} {'PG CPU s':>9} {'load':>6}")
    medians: dict[int, dict[str, float]] = {}
    for size in sizes:
        name = ensure_world(admin, size)
        world = generate(size)
        with (
            world_copy(admin, name, "remember", analyzed) as url,
            fake_providers() as (_, _, settings),
            service_on(url, settings, migrate_first=True) as bundle,
            local_api(bundle, 0) as (port, _),
        ):
            client = Client(port)
            remember_new_facts(client, world, 0, own_cluster)
            runs = [remember_new_facts(client, world, run, own_cluster) for run in range(1, repeat + 1)]
        medians[size] = {
            "wall ms": statistics.median(run.ms for run in runs),
            "SQL trips": statistics.median(run.round_trips for run in runs),
            "PG CPU s": statistics.median(run.pg_cpu_s for run in runs) if own_cluster else float("nan"),
        }
        figures = medians[size]
        print(
            f"{size:>8,} {figures['wall ms']:>9.1f} {figures['SQL trips']:>9.0f} {figures['PG CPU s']:>9.3f} "
            f"{os.getloadavg()[0]:>6.2f}",
            flush=True,
        )
    if len(sizes) > 1:
        largest, smallest = medians[max(sizes)], medians[min(sizes)]
        ratios = ", ".join(f"{key} {largest[key] / smallest[key]:.2f}" for key in largest)
        print(f"\nratio {label_of(max(sizes))}/{label_of(min(sizes))}: {ratios}")


def shape(world: World) -> dict[str, float]:
    """What the smoke test and the printout check of a world's shape."""
    degree: dict[str, int] = defaultdict(int)
    for fact in world.facts:
        degree[fact.target] += 1
    hub_degrees = [degree[hub] for hub in world.hubs]
    firsts = Counter(person.first for person in world.people)
    return {
        "facts": len(world.facts),
        "entities": world.entities(),
        "entities_per_100_facts": 100 * world.entities() / len(world.facts),
        "first_names": len(firsts),
        "people_per_first_name": len(world.people) / len(firsts),
        "most_common_first_name": firsts.most_common(1)[0][1],
        "hubs": len(world.hubs),
        "median_hub_facts": sorted(hub_degrees)[len(hub_degrees) // 2],
        "largest_hub_facts": max(hub_degrees),
        "texts": len(world.texts()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="2k,10k", help="facts per world, comma-separated: 2k, 10k, 100k or a number"
    )
    parser.add_argument(
        "--via",
        choices=("batch", "remember"),
        default="batch",
        help="the bulk import, or one text per request",
    )
    parser.add_argument("--rebuild", action="store_true", help="load the worlds again")
    args = parser.parse_args()
    admin = admin_url()
    names = []
    for text in args.sizes.split(","):
        size = size_of(text)
        world = generate(size)
        print(f"world of {size:,} facts: " + ", ".join(f"{k} {v:,.1f}" for k, v in shape(world).items()))
        names.append(ensure_world(admin, size, args.via, args.rebuild))
    print("\nthe worlds' rows (dataset world):")
    for name in names:
        print(f"  {name}: {', '.join(f'{v:,} {k}' for k, v in counts_of(database_url(admin, name)).items())}")


if __name__ == "__main__":
    main()
