"""Our server beside the reference server: a query, our context() and a remember, medians, p95 and ratios.

Our server beside the reference server (`gligabao-server` 0.108.1, the published Go server this
service ports), the same requests sent to both in turn, in one run: a query on a small graph and a
remember of a small text. Prints each server's median and p95, the ratio ours/reference, and how
often the asked fact reached the model's context and the answer.

    make bench-reference        # installs the reference in .venv-reference, then runs this
    .venv-reference/bin/python bench/reference.py [--runs 200] [--warm-up 20] [--no-worker]
                                                  [--reference-binary PATH] [--floor]

The reference reads no base-URL setting: it is started with HTTPS_PROXY at a TLS-terminating
CONNECT proxy on loopback (bench/tls_proxy.py, its certificate authority made for this run in a
temporary directory and trusted through SSL_CERT_FILE), which hands its model calls to the same
instant fake providers our server calls directly (tests/fakes). The proxy's own time is printed
beside the reference's figures. It listens on every interface, so the whole run (both servers, the
proxy, the fakes, the embedded PostgreSQL) happens in a network namespace with only loopback: the
script runs itself again under `unshare -n` (root) when it is not in one already.

Ours is `gligabao serve`'s server on a loopback port of this process, auth none, as in
bench/overhead.py: its functions in this process (`--workers 0`) and, unless --no-worker, a second
one with `serve`'s default of worker processes (one here), measured in the same rotation. Ours runs
on a scratch database of the embedded PostgreSQL (var/bench-pgdata) or DATABASE_URL's server, the
reference on its default stores (SQLite and chromem, in the temporary directory).

With --floor, a third server of this process asked in the same rotation does a query's I/O and
nothing else (floor_server: the question's embedding, three SQL round trips, the answer through the
SDKs): what no code of ours could save on this machine, beside the reference.

The small graph: the same text of 50 facts remembered into both through their APIs first. Each
query asks one fact of it; each remember stores a text of 10 facts into a dataset of its own, so
that every run does the same work. The servers are asked in turn over one keep-alive connection
each, the order rotating every run, after warm-up runs that are not counted. The fake Anthropic
answers each server's prompts as the tests' rule-based model would: the extraction of a text's
sentences, no duplicates, and an answer that is the asked fact when the context holds it.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tls_proxy import TlsTerminatingProxy

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench"), str(ROOT / "layers" / "core")]

DATASET_FACTS = 50  # the small graph the queries read
REMEMBER_FACTS = 10  # facts of each remembered text
QUESTION = "Who does Person7 know?"
ASKED_FACT = "Person7 knows Person8."
NOT_IN_MEMORY = "Nothing in memory says."
REFERENCE_HOSTS = ("api.anthropic.com", "api.openai.com")
READY_TIMEOUT_S = 60
REFERENCE_DATABASE = "gligabao.db"  # the reference's SQLite file, in the run's temporary directory
PRIVATE_NETWORK_MARK = "GB_BENCH_PRIVATE_NETWORK"  # set before running again under unshare

OURS = "ours"
OURS_WORKER = "ours, worker process"
# With --floor: a server of this process doing only the I/O a query of ours needs (floor_server).
FLOOR = "floor (its I/O only)"
REFERENCE = "reference"
# Ours only: the query's context without the answer (the client's `context()`), beside the
# reference's query.
CONTEXT = "context"
CALLS = ("query", CONTEXT, "remember")
# What our in-process server's last retrieval waited for the question's embedding, after its
# keyword statement (memory/retrieval.py's timings): filled by `embedding_waits_noted`.
LAST_EMBEDDING_WAIT_MS: list[float] = []

# The openings of the reference's system prompts, one per stage (what the fake answers by).
REFERENCE_EXTRACT = "You extract a temporal knowledge graph from text."
REFERENCE_RESOLVE = "You compare NEW facts with EXISTING facts"
REFERENCE_ANSWER = "You answer questions using ONLY a knowledge graph"


# --- the fake model, for both servers' prompts ---------------------------------------------------


class BothModels:
    """The fake Anthropic's responder for our prompts and the reference's; it notes whether the last
    query's context held the asked fact."""

    def __init__(self):
        self.asked_fact_seen: bool | None = None

    def __call__(self, body: dict) -> dict:
        from fakes.anthropic_server import prompt_text, system_text
        from remember_helpers import extraction_reply, rule_based_model, stage_of

        system, prompt = system_text(body), prompt_text(body)
        if system.startswith(REFERENCE_EXTRACT):
            # its <reference_time> on a line of its own; the rule-based model reads ours, inline
            ours = prompt.replace("<reference_time>\n", "<reference_time>")
            return extraction_reply({"messages": [{"role": "user", "content": ours}]})
        if system.startswith(REFERENCE_RESOLVE):
            return reference_resolution(prompt)
        if system.startswith(REFERENCE_ANSWER):
            return self.answer(prompt)
        if stage_of(body) == "query":
            return {**self.answer(prompt), "passages": []}
        return rule_based_model(body)

    def answer(self, prompt: str) -> dict:
        """The asked fact, citing its edge, when a fact line of the context states it."""
        line = next((line for line in prompt.splitlines() if fact_line_states(line, ASKED_FACT)), None)
        self.asked_fact_seen = line is not None
        if line is None:
            return {"answer": NOT_IN_MEMORY, "entities": [], "edges": []}
        return {"answer": ASKED_FACT, "entities": [], "edges": [int(re.match(r"\[edge (\d+)\]", line)[1])]}


def fact_line_states(line: str, fact: str) -> bool:
    """A context line of either server's prompt, `[edge 3] A(1) --knows--> B(2): A knows B. [...]`."""
    return line.startswith("[edge ") and f": {fact}" in line


_REFERENCE_FACT = re.compile(r"^\[(\d+)\] (.*) \([^()]* -> [^()]*\)$")


def reference_resolution(prompt: str) -> dict:
    """The reference's resolve stage: a new fact worded as an existing one is its duplicate."""

    def facts(tag: str) -> list[tuple[int, str]]:
        section = re.search(rf"<{tag}>\n(.*?)\n?</{tag}>", prompt, re.DOTALL)
        lines = section.group(1).splitlines() if section else []
        return [(int(m[1]), m[2]) for m in map(_REFERENCE_FACT.match, lines) if m]

    existing = {text: key for key, text in facts("existing_facts")}
    duplicates = [
        {"new": key, "existing": existing[text]} for key, text in facts("new_facts") if text in existing
    ]
    return {"duplicates": duplicates, "contradictions": []}


# --- the network namespace ----------------------------------------------------------------------


def in_private_network() -> bool:
    return {name for _, name in socket.if_nameindex()} == {"lo"}


def enter_private_network() -> None:
    """Runs this script again in a network namespace of its own (only loopback) unless it is in one;
    there, brings loopback up."""
    if not in_private_network():
        if os.environ.get(PRIVATE_NETWORK_MARK):
            sys.exit("unshare -n gave a namespace with other interfaces than lo")
        os.environ[PRIVATE_NETWORK_MARK] = "1"
        command = ["unshare", "-n", "--", sys.executable, str(Path(sys.argv[0]).resolve()), *sys.argv[1:]]
        try:
            os.execvp("unshare", command)
        except OSError as error:
            sys.exit(f"cannot run in a network namespace of its own ({error}): run as root, or inside one")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


# --- the servers --------------------------------------------------------------------------------


def reference_binary(given: str | None) -> str:
    if given:
        return given
    try:
        import gligabao_server
    except ImportError:
        sys.exit("the reference is not installed: `make bench-reference`, or --reference-binary PATH")
    return gligabao_server.binary_path()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_listening(port: int, process: subprocess.Popen, log: Path) -> None:
    ends = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < ends:
        if process.poll() is not None:
            sys.exit(f"the reference server stopped (exit {process.returncode}):\n{log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.1)
    sys.exit(f"the reference server did not listen on {port} within {READY_TIMEOUT_S} s")


@contextlib.contextmanager
def reference_server(binary: str, directory: Path, proxy_url: str, ca_file: Path) -> Iterator[int]:
    """The reference on a free port, its stores (REFERENCE_DATABASE, vectors beside it) and log in
    `directory`, its model calls through the proxy: the port."""
    port = free_port()
    config = directory / "gligabao.toml"
    config.write_text(
        f'port = {port}\ndb_backend = "sqlite"\nvector_store = "chromem"\nembedding_dimensions = 1536\n'
    )
    outside = {name for name in os.environ if name.lower() in ("http_proxy", "https_proxy", "no_proxy")}
    environment = {name: value for name, value in os.environ.items() if name not in outside}
    environment.update(
        HTTPS_PROXY=proxy_url,
        SSL_CERT_FILE=str(ca_file),
        ANTHROPIC_API_KEY="sk-ant-bench",
        OPENAI_API_KEY="sk-bench",
    )
    log = directory / "server.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [binary, "--config", str(config), "serve", "--db", str(directory / REFERENCE_DATABASE)],
            cwd=directory,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_listening(port, process, log)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def our_servers(anthropic, openai, with_worker: bool, with_floor: bool = False) -> Iterator[dict[str, int]]:
    """Our local API on a scratch database, its functions in this process, and with `with_worker`
    a second one handing them to a worker process, with `with_floor` the floor server: {name: port}."""
    from bench_setup import local_api

    with contextlib.ExitStack() as stack:
        stack.enter_context(our_database(anthropic, openai))
        stack.enter_context(embedding_waits_noted())
        port, _ = stack.enter_context(local_api())
        ports = {OURS: port}
        if with_worker:
            ports[OURS_WORKER] = stack.enter_context(worker_api(1))
        if with_floor:
            ports[FLOOR] = stack.enter_context(floor_server())
        yield ports


@contextlib.contextmanager
def floor_server() -> Iterator[int]:
    """A server of this process whose query does only the I/O a query of ours does, none of its
    work: the question embedded through our embedder's `openai` client on a thread of its own while
    a first round trip (BEGIN, the user, one SELECT) waits; a second (one SELECT, COMMIT); the
    answer through our LLM's `anthropic` client; a third, a write's (BEGIN, the user, an id of a
    transaction, COMMIT), on our scratch database as the service's role. The clients are the
    service's own (bootstrap.bundle(): its transport, timeouts, the fakes' URLs and keys). Its
    port. What the floor takes is what no code of ours can save on this machine (the reference's
    query does one model call and reads SQLite in its own process)."""
    import http.server
    import socketserver
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import psycopg

    from gligabao import bootstrap

    bundle = bootstrap.bundle()
    llm, embedder = bundle.llm.client, bundle.embedder.client
    embedding_model, dimensions = bundle.embedder.model, bundle.embedder.dimensions
    answer_model = bundle.llm.default_model
    pool = ThreadPoolExecutor(max_workers=1)
    connection = psycopg.connect(bundle.database.url(), autocommit=True)
    user = "SELECT set_config('gligabao.user_id', %s, true)"

    def query(question: str) -> dict:
        vector = pool.submit(
            lambda: embedder.embeddings.create(model=embedding_model, dimensions=dimensions, input=[question])
        )
        with connection.pipeline() as pipeline:
            connection.execute("BEGIN")
            connection.execute(user, ["bench"])
            keyword = connection.execute("SELECT 1")
            pipeline.sync()
            keyword.fetchall()
        vector.result()
        with connection.pipeline() as pipeline:
            context = connection.execute("SELECT 2")
            connection.execute("COMMIT")
            pipeline.sync()
            context.fetchall()
        line = f"[edge 1] Person7(1) --knows--> Person8(2): {ASKED_FACT}"
        reply = llm.messages.create(
            model=answer_model,
            max_tokens=256,
            system=REFERENCE_ANSWER,  # the fake answers it as the reference's answer stage
            messages=[{"role": "user", "content": f"<graph>\n{line}\n</graph>\n{question}"}],
        )
        with connection.pipeline() as pipeline:
            connection.execute("BEGIN")
            connection.execute(user, ["bench"])
            connection.execute("SELECT pg_current_xact_id()")  # a transaction that writes: its COMMIT flushes
            connection.execute("COMMIT")
            pipeline.sync()
        return {"answer": "".join(block.text for block in reply.content if block.type == "text")}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            raw = json.dumps(query(body["query"])).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="floor", daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        pool.shutdown()
        connection.close()


@contextlib.contextmanager
def our_database(anthropic, openai) -> Iterator[object]:
    """The service on a scratch database (bench_setup.scratch_database), pointed at the fakes, auth
    none, its logs and metrics quiet: the scratch database."""
    import http.server

    http.server.BaseHTTPRequestHandler.disable_nagle_algorithm = True  # see bench/remember.py
    from bench_setup import bench_admin_url, provider_settings, scratch_database

    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="WARNING")
    settings = {**provider_settings(anthropic, openai), "auth_mode": "none"}
    with scratch_database(bench_admin_url(), settings) as scratch:
        yield scratch


@contextlib.contextmanager
def worker_api(workers: int) -> Iterator[int]:
    """Our local API handing its functions to `workers` worker processes: its port."""
    from bench_setup import local_api

    from gligabao import bootstrap
    from gligabao.local.containers import ContainerPools

    pools = ContainerPools(workers, settings_dump=bootstrap.bundle().settings.model_dump())
    with local_api(pools) as (port, _):
        yield port


@contextlib.contextmanager
def embedding_waits_noted() -> Iterator[None]:
    """Each retrieval of ours in this process notes how long it waited for the question's
    embedding after its keyword statement (LAST_EMBEDDING_WAIT_MS)."""
    from gligabao.memory import query

    retrieve = query.retrieve

    def noted(*args, **kwargs):
        context = retrieve(*args, **kwargs)
        LAST_EMBEDDING_WAIT_MS.append(context.timings_ms["embedding_wait"])
        return context

    query.retrieve = noted
    try:
        yield
    finally:
        query.retrieve = retrieve


@dataclass
class Stage:
    """What every run beside the reference shares: the fakes, a scratch directory, the certificate
    authority of the run and the TLS-terminating proxy the reference's model calls go through."""

    anthropic: object
    openai: object
    directory: Path
    authority: object
    proxy: TlsTerminatingProxy


@contextlib.contextmanager
def stage(responder, prefix: str) -> Iterator[Stage]:
    """The fakes started (the Anthropic one answering by `responder`), the scratch directory, the
    authority and the proxy; all stopped and removed at the end."""
    from fakes.anthropic_server import FakeAnthropic
    from fakes.openai_server import FakeOpenAI
    from tls_proxy import CertificateAuthority, TlsTerminatingProxy

    anthropic, openai = FakeAnthropic().start(), FakeOpenAI().start()
    anthropic.responder = responder
    try:
        with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
            directory = Path(scratch)
            authority = CertificateAuthority.make(directory / "tls", list(REFERENCE_HOSTS))
            upstreams = {"api.anthropic.com": anthropic.url, "api.openai.com": openai.url}
            proxy = TlsTerminatingProxy(upstreams, authority).start()
            try:
                yield Stage(anthropic, openai, directory, authority, proxy)
            finally:
                proxy.stop()
    finally:
        anthropic.stop()
        openai.stop()


# --- measuring ----------------------------------------------------------------------------------


class JsonClient:
    """POSTs over one keep-alive connection: (the decoded 200 reply, milliseconds)."""

    def __init__(self, port: int):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def post(self, path: str, body: dict) -> tuple[dict, float]:
        payload = json.dumps(body)
        started = time.perf_counter()
        self.connection.request("POST", path, payload, {"content-type": "application/json"})
        reply = self.connection.getresponse()
        raw = reply.read()
        elapsed = (time.perf_counter() - started) * 1000
        if reply.status != 200:
            raise RuntimeError(f"POST {path}: {reply.status} {raw[:500]!r}")
        return json.loads(raw), elapsed


@dataclass
class Contestant:
    name: str
    client: JsonClient
    proxy: TlsTerminatingProxy | None = None  # the reference's: its model calls go through it


@dataclass
class Sample:
    ms: float
    correct: bool  # query: the answer states the asked fact; remember: every fact stored
    in_context: bool | None = None  # query: the model's context held the asked fact
    proxy_ms: float = 0.0  # the reference's: the proxy's own time
    model_ms: float = 0.0  # the reference's: its model calls from the proxy's side, the fake's included
    model_calls: int = 0
    embedding_wait_ms: float | None = None  # ours in this process: the retrieval's wait for the embedding


@dataclass
class Figures:
    samples: list[Sample] = field(default_factory=list)

    def median(self) -> float:
        return statistics.median(s.ms for s in self.samples)

    def p95(self) -> float:
        return statistics.quantiles([s.ms for s in self.samples], n=20, method="inclusive")[18]


def query_body() -> dict:
    return {"user_id": "bench", "dataset": "small", "query": QUESTION}


def context_body() -> dict:
    """The client's `context()`: the query without the answer."""
    return {**query_body(), "answer": False}


def remember_body(dataset: str, facts: int = REMEMBER_FACTS) -> dict:
    from remember_helpers import chain_text

    return {"user_id": "bench", "dataset": dataset, "text": chain_text(facts)}


def calls_of(contestant: Contestant) -> tuple[str, ...]:
    if contestant.name == FLOOR:
        return ("query",)
    return tuple(call for call in CALLS if call != CONTEXT or contestant.name != REFERENCE)


def measure(contestant: Contestant, call: str, run: int, model: BothModels) -> Sample:
    body = {"query": query_body, CONTEXT: context_body, "remember": lambda: remember_body(f"r-{run}")}[call]()
    proxy = contestant.proxy
    before = (proxy.busy_seconds, proxy.round_trip_seconds, proxy.forwarded) if proxy else None
    model.asked_fact_seen = None
    LAST_EMBEDDING_WAIT_MS.clear()
    reply, ms = contestant.client.post("/v1/gb/query" if call == CONTEXT else f"/v1/gb/{call}", body)
    if call == CONTEXT:
        in_context = correct = ASKED_FACT in reply["context"]
    else:
        correct = (
            ASKED_FACT.rstrip(".") in reply["answer"]
            if call == "query"
            else len(reply["edges"]) == REMEMBER_FACTS
        )
        in_context = model.asked_fact_seen if call == "query" else None
    sample = Sample(
        ms=ms,
        correct=correct,
        in_context=in_context,
        embedding_wait_ms=LAST_EMBEDDING_WAIT_MS[-1] if LAST_EMBEDDING_WAIT_MS else None,
    )
    if proxy:
        proxy.settle()
        sample.proxy_ms = (proxy.busy_seconds - before[0]) * 1000
        sample.model_ms = (proxy.round_trip_seconds - before[1]) * 1000
        sample.model_calls = proxy.forwarded - before[2]
    return sample


def remember_small_graph(contestants: list[Contestant]) -> None:
    """The same text of DATASET_FACTS facts into each server's dataset "small" (one remember each:
    the worker's local API shares our database)."""
    for contestant in contestants:
        if contestant.name in (OURS_WORKER, FLOOR):
            continue
        reply, _ = contestant.client.post("/v1/gb/remember", remember_body("small", DATASET_FACTS))
        stored = len(reply["edges"])
        if stored != DATASET_FACTS:
            sys.exit(f"{contestant.name} stored {stored} of the small graph's {DATASET_FACTS} facts: {reply}")


def reference_stored_facts(database: Path, dataset: str) -> int:
    """The facts the reference holds in `dataset`, read from its SQLite file: the fake's replies to
    its prompts parsed into its graph, not only into its reply."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as connection:
        (count,) = connection.execute(
            "SELECT count(*) FROM gb_edges e JOIN gb_datasets d ON d.id = e.dataset_id "
            "WHERE d.user_id = ? AND d.name = ? AND e.invalid_at IS NULL",
            ("bench", dataset),
        ).fetchone()
    return count


def run_interleaved(
    contestants: list[Contestant],
    runs: int,
    warm_up: int,
    model: BothModels,
) -> dict[tuple[str, str], Figures]:
    """{(call, contestant): figures}: each run asks every contestant in turn, the order rotating."""
    figures = {(call, c.name): Figures() for c in contestants for call in calls_of(c)}
    for run in range(warm_up + runs):
        turn = run % len(contestants)
        order = contestants[turn:] + contestants[:turn]
        for call in CALLS:
            for contestant in (c for c in order if call in calls_of(c)):
                sample = measure(contestant, call, run, model)
                if run >= warm_up:
                    figures[(call, contestant.name)].samples.append(sample)
    return figures


# --- the report ---------------------------------------------------------------------------------


def print_report(
    figures: dict[tuple[str, str], Figures],
    names: list[str],
    runs: int,
    latencies_ms: tuple[float, float] = (0, 0),
) -> None:
    llm_ms, embeddings_ms = latencies_ms
    answering = (
        f"fake providers answer after {llm_ms:g} ms (LLM) and {embeddings_ms:g} ms (embeddings)"
        if llm_ms or embeddings_ms
        else "fake providers answer instantly"
    )
    print(f"ours beside the reference server, interleaved: {runs} runs each, {answering}")
    print(
        f"query: a graph of {DATASET_FACTS} facts, '{QUESTION}'; context: the same without the answer "
        f"(ours only, beside the reference's query); remember: a text of {REMEMBER_FACTS} facts\n"
    )
    header = f"{'':<10}{'server':<24}{'median ms':>10}{'p95 ms':>9}{'ours/ref':>10}{'p95 ratio':>10}  checks"
    print(header)
    print("-" * (len(header) + 34))
    for call in CALLS:
        reference = figures[("query" if call == CONTEXT else call, REFERENCE)]
        for name in names:
            if (call, name) not in figures:
                continue
            own = figures[(call, name)]
            ratio = "" if name == REFERENCE else f"{own.median() / reference.median():10.2f}"
            p95_ratio = "" if name == REFERENCE else f"{own.p95() / reference.p95():10.2f}"
            print(
                f"{call:<10}{name:<24}{own.median():>10.2f}{own.p95():>9.2f}{ratio:>10}{p95_ratio:>10}  "
                f"{checks(call, own, name)}"
            )
        print_embedding_wait(figures.get((call, OURS)))
        if call != CONTEXT:
            print_reference_model_calls(reference)
    print(
        "\nours/ref: ours' median (or p95) over the reference's (for context, over its query). The reference's"
    )
    print(
        "model calls go through the proxy (TLS, parsing, one more hop to the fake): a cost ours does not pay,"
    )
    print(
        "inside its figures; its own part is printed under each operation (the TLS handshake of each tunnel,"
    )
    print("once, is not).")


def print_embedding_wait(own: Figures | None) -> None:
    """What of ours (in this process) waited on the question's embedding after its keyword statement."""
    waits = [s.embedding_wait_ms for s in own.samples if s.embedding_wait_ms is not None] if own else []
    if waits:
        print(
            f"{'':<10}{'(of ours:':<24} the retrieval waited {statistics.median(waits):.2f} ms median for the "
            "question's embedding after its keyword statement)"
        )


def print_reference_model_calls(reference: Figures) -> None:
    proxied = statistics.median(s.proxy_ms for s in reference.samples)
    model = statistics.median(s.model_ms for s in reference.samples)
    calls = statistics.median(s.model_calls for s in reference.samples)
    print(
        f"{'':<10}{'(of the reference:':<24} {calls:g} model calls through the proxy, {model:.2f} ms "
        f"median seen from it, of which the proxy's own {proxied:.2f} ms)"
    )


def checks(call: str, figures: Figures, name: str = "") -> str:
    total = len(figures.samples)
    correct = sum(s.correct for s in figures.samples)
    if name == FLOOR:
        return f"no retrieval (its prompt holds the fact); answered {correct}/{total}"
    if call == "remember":
        return f"{REMEMBER_FACTS} facts stored {correct}/{total}"
    if call == CONTEXT:
        return f"asked fact in context {correct}/{total}"
    in_context = sum(bool(s.in_context) for s in figures.samples)
    return f"asked fact in context {in_context}/{total}, in answer {correct}/{total}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="measured runs per figure")
    parser.add_argument("--warm-up", type=int, default=20, help="runs first, not measured")
    parser.add_argument("--no-worker", action="store_true", help="leave out ours with a worker process")
    parser.add_argument("--reference-binary", help="the reference's binary (default: gligabao-server's)")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also a server doing only the I/O a query of ours needs, none of its work (floor_server)",
    )
    parser.add_argument(
        "--llm-latency-ms",
        type=float,
        default=0,
        help="every fake LLM reply this late (a deployment sees ~800)",
    )
    parser.add_argument(
        "--embeddings-latency-ms",
        type=float,
        default=0,
        help="every fake embeddings reply this late (a deployment sees ~150)",
    )
    args = parser.parse_args()
    binary = reference_binary(args.reference_binary)
    enter_private_network()
    latencies = (args.llm_latency_ms, args.embeddings_latency_ms)
    figures, names = bench(
        binary,
        args.runs,
        args.warm_up,
        with_worker=not args.no_worker,
        latencies_ms=latencies,
        with_floor=args.floor,
    )
    print_report(figures, names, args.runs, latencies)


def bench(
    binary: str,
    runs: int,
    warm_up: int,
    with_worker: bool,
    latencies_ms: tuple[float, float] = (0, 0),
    with_floor: bool = False,
) -> tuple[dict[tuple[str, str], Figures], list[str]]:
    """The fakes, the proxy, the reference and ours, the small graph in each, then the interleaved
    runs, the fakes answering `latencies_ms` late (LLM, embeddings): (the figures, the servers'
    names in the order printed)."""
    model = BothModels()
    with stage(model, "gb-reference-") as run:
        anthropic, openai, directory = run.anthropic, run.openai, run.directory
        with (
            reference_server(binary, directory, run.proxy.url, run.authority.ca_file) as reference_port,
            our_servers(anthropic, openai, with_worker, with_floor) as ours,
        ):
            contestants = [Contestant(name, JsonClient(port)) for name, port in ours.items()]
            contestants.append(Contestant(REFERENCE, JsonClient(reference_port), run.proxy))
            remember_small_graph(contestants)
            held = reference_stored_facts(directory / REFERENCE_DATABASE, "small")
            if held != DATASET_FACTS:
                sys.exit(f"the reference holds {held} of the small graph's {DATASET_FACTS} facts")
            anthropic.latency_s, openai.latency_s = (ms / 1000 for ms in latencies_ms)
            figures = run_interleaved(contestants, runs, warm_up, model)
            return figures, [c.name for c in contestants]


if __name__ == "__main__":
    main()
