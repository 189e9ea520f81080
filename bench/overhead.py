"""Where the time of one query and one remember goes, part by part, over HTTP and in-process.

Where the time of one query and one remember goes, part by part: through the local API over HTTP,
and with the handler called in this process with an API Gateway HTTP API (payload 2.0) event.

    .venv/bin/python bench/overhead.py [--runs 200] [--warm-up 20] [--unprepared]

As bench/remember.py: the test suite's fake providers in this process (real SDKs and HTTP, instant
answers), a scratch database (dropped at the end) on DATABASE_URL's server or on the embedded
PostgreSQL in var/bench-pgdata, the service's role gligabao_app. The local API is `gligabao serve`'s
server on a loopback port of this process, called over one keep-alive connection, its functions
in this process (`--workers 0`) so that their parts can be timed; then the same requests through a
worker process (`serve`'s default), whose hand-off is the difference.

Nothing in the service is changed: the bench wraps the service's and the libraries' functions
(monkeypatching, timed with perf_counter) and charges each moment of a request to the innermost
wrapped call running on the request's path (the client, the server's thread, the function's
thread). A part's time is its own, without the parts it calls. The query embeds its question on a
thread of its own while its keyword SQL runs: only the time the request waits for that thread is
charged to the embeddings client (the thread's whole time is printed beside). "other" is the rest
of the total: the bench's own JSON and loop, and what falls between the wrapped calls.

A query: a small graph (50 facts), the answer from the LLM. A remember: a text of 10 facts, each
run into a dataset of its own, so that every run does the same work.

Last, the query's and context()'s SQL round trip by round trip (bench/sql_round_trips.py): each
round trip's client wait beside the server's planning and execution of each statement it carried.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import inspect
import json
import os
import statistics
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

from bench_setup import local_api  # noqa: E402  (bench/bench_setup.py)

DATASET_FACTS = 50  # facts of the graph the queries read
REMEMBER_FACTS = 10  # facts of each remembered text
QUESTION = "Who does Person7 know?"

# The parts, in the order printed.
HTTP_CLIENT = "HTTP client and sockets"
HTTP_SERVER = "HTTP server (body, reply)"
LOCAL_ROUTING = "local API routing"
EVENT = "event building"
HAND_OFF = "worker hand-off"
HANDLER = "handler entry (limits, auth, tracing)"
VALIDATION = "routing and validation (Powertools, pydantic)"
BUNDLE = "bundle"
SQL = "SQL round trips (psycopg)"
EMBEDDINGS = "embeddings client"
LLM = "LLM client"
RANKING = "ranking"
MEMORY = "memory core (prompts, resolution, rest)"
MONITORING = "monitoring and EMF"
SERIALISATION = "serialisation"
OTHER = "other"
PARTS = (
    HTTP_CLIENT,
    HTTP_SERVER,
    LOCAL_ROUTING,
    EVENT,
    HAND_OFF,
    HANDLER,
    VALIDATION,
    BUNDLE,
    SQL,
    EMBEDDINGS,
    LLM,
    RANKING,
    MEMORY,
    MONITORING,
    SERIALISATION,
)

# Threads that work for the request beside it (their time overlaps the request's own).
SIDE_THREADS = ("gb-embed", "window", "ThreadPoolExecutor", "prepare-ahead")


class PartClock:
    """The time of each part on the request's path: a stack of the wrapped calls running, each moment
    charged to the innermost. The request's path hops threads (client, server, function), one of
    them working while the others wait inside a wrapped call; a thread's new call goes right above
    its own innermost one, so that a client that starts waiting while the server already works does
    not take the server's time (and a call ending out of order is charged up to its end)."""

    def __init__(self):
        self.active = False
        self.stack: list[tuple[str, int]] = []  # (part, thread), innermost last
        self.last = 0.0  # when time was last charged
        self.own: dict[str, float] = defaultdict(float)
        self.side: dict[str, float] = defaultdict(float)  # on the side threads
        self.lock = threading.Lock()
        self.serving = threading.local()  # set on the server's thread while it serves a request

    def on_path(self) -> bool:
        thread = threading.current_thread()
        return (
            thread is threading.main_thread()
            or thread.name.startswith("gligabao-container")
            or getattr(self.serving, "on", False)
        )

    def _charge(self) -> None:
        now = time.perf_counter()
        if self.stack:
            self.own[self.stack[-1][0]] += now - self.last
        self.last = now

    def _push(self, frame: tuple[str, int]) -> None:
        with self.lock:
            self._charge()
            position = len(self.stack)
            for index in range(len(self.stack) - 1, -1, -1):
                if self.stack[index][1] == frame[1]:
                    position = index + 1
                    break
            self.stack.insert(position, frame)

    def _pop(self, frame: tuple[str, int]) -> None:
        with self.lock:
            self._charge()
            for index in range(len(self.stack) - 1, -1, -1):
                if self.stack[index] is frame:
                    del self.stack[index]
                    return

    @contextlib.contextmanager
    def part(self, name: str) -> Iterator[None]:
        if not self.active:
            yield
            return
        if not self.on_path():
            started = time.perf_counter()
            try:
                yield
            finally:
                if threading.current_thread().name.startswith(SIDE_THREADS):
                    with self.lock:
                        self.side[name] += time.perf_counter() - started
            return
        frame = (name, threading.get_ident())
        self._push(frame)
        try:
            yield
        finally:
            self._pop(frame)

    @contextlib.contextmanager
    def request(self) -> Iterator[dict]:
        """One request's total, its parts' own times and the side threads' (in milliseconds)."""
        self.own.clear()
        self.side.clear()
        self.stack.clear()
        self.active = True
        figures: dict = {}
        started = self.last = time.perf_counter()
        try:
            with self.part(OTHER):
                yield figures
        finally:
            self.active = False
        figures["total"] = (self.last - started) * 1000
        figures["parts"] = {name: seconds * 1000 for name, seconds in self.own.items()}
        figures["side"] = {name: seconds * 1000 for name, seconds in self.side.items()}


CLOCK = PartClock()


def timed(function: Callable, name: str) -> Callable:
    def wrapper(*args, **kwargs):
        with CLOCK.part(name):
            return function(*args, **kwargs)

    wrapper.__wrapped__ = function  # type: ignore[attr-defined]
    return wrapper


@contextlib.contextmanager
def wrapped(targets: list[tuple[object, str, str]]) -> Iterator[None]:
    """Each (owner, attribute, part): the attribute timed as that part, restored at the end."""
    originals = []
    for owner, attribute, name in targets:
        own = attribute in vars(owner)  # else inherited: deleted again at the end
        original = inspect.getattr_static(owner, attribute)
        originals.append((owner, attribute, original, own))
        if isinstance(original, staticmethod | classmethod):
            setattr(owner, attribute, type(original)(timed(original.__func__, name)))
        else:
            setattr(owner, attribute, timed(original, name))
    try:
        yield
    finally:
        for owner, attribute, original, own in reversed(originals):
            if own:
                setattr(owner, attribute, original)
            else:
                delattr(owner, attribute)


def service_targets() -> list[tuple[object, str, str]]:
    """The calls the parts are made of (what each part is, by the functions it runs)."""
    import psycopg
    from aws_lambda_powertools.event_handler import api_gateway
    from aws_lambda_powertools.event_handler.middlewares import openapi_validation

    from gligabao import bootstrap
    from gligabao.ai.embeddings import Embedder
    from gligabao.ai.llm import LLM as LLMClient
    from gligabao.api import deps
    from gligabao.api import handler as api_handler
    from gligabao.api.routes import query as query_route
    from gligabao.api.routes import remember as remember_route
    from gligabao.local import containers, server
    from gligabao.memory import query, ranking
    from gligabao.observability import monitoring

    return [
        (server.LocalApi, "invoke", LOCAL_ROUTING),
        (server, "build_event", EVENT),
        (containers.InProcessContainer, "invoke", HAND_OFF),
        (containers.InProcessContainer, "_run", HANDLER),
        (api_handler, "_configured_then_served", HANDLER),
        (api_handler, "memory", BUNDLE),
        (deps, "memory", BUNDLE),
        (bootstrap, "bundle", BUNDLE),
        (openapi_validation.OpenAPIRequestValidationMiddleware, "handler", VALIDATION),
        (openapi_validation.OpenAPIResponseValidationMiddleware, "_handle_response", SERIALISATION),
        (api_gateway.ResponseBuilder, "build", SERIALISATION),
        (psycopg.Connection, "wait", SQL),
        (psycopg.Connection, "execute", SQL),
        (psycopg.Connection, "commit", SQL),
        (psycopg.Connection, "rollback", SQL),
        (psycopg.Cursor, "execute", SQL),
        (psycopg.Cursor, "executemany", SQL),
        (psycopg.Cursor, "fetchone", SQL),
        (psycopg.Cursor, "fetchmany", SQL),
        (psycopg.Cursor, "fetchall", SQL),
        (psycopg.Pipeline, "sync", SQL),
        (psycopg.Pipeline, "__exit__", SQL),
        (Embedder, "embed", EMBEDDINGS),
        (query, "wait_for", EMBEDDINGS),  # the wait for the question's embedding thread
        (LLMClient, "complete", LLM),
        (ranking, "rank_context", RANKING),
        (query_route.query, "answer", MEMORY),
        (remember_route, "remember_text", MEMORY),
        (monitoring.RequestReport, "__init__", MONITORING),
        (monitoring.RequestReport, "emit", MONITORING),
        (api_handler, "reporting", MONITORING),
        (monitoring, "emit_event", MONITORING),
    ]


def embedding_waits_timed() -> contextlib.AbstractContextManager:
    """The request's wait for the question's embedding (future.result() inside the retrieval), as the
    embeddings client's: the futures of the query's embedding pool are marked."""
    from concurrent.futures import Future

    from gligabao.memory import query

    pool = query.embedding_pool()
    original_submit, original_result = pool.submit, Future.result

    def submit(*args, **kwargs):
        future = original_submit(*args, **kwargs)
        future.bench_embedding = True
        return future

    def result(self, *args, **kwargs):
        if getattr(self, "bench_embedding", False):
            with CLOCK.part(EMBEDDINGS):
                return original_result(self, *args, **kwargs)
        return original_result(self, *args, **kwargs)

    @contextlib.contextmanager
    def patched():
        pool.submit, Future.result = submit, result
        try:
            yield
        finally:
            del pool.submit
            Future.result = original_result

    return patched()


@contextlib.contextmanager
def server_thread_marked() -> Iterator[None]:
    """The server's thread counts as the request's path while it serves one; its own work is HTTP."""
    from gligabao.local.server import _RequestHandler

    original = _RequestHandler._serve

    def serve(self):
        CLOCK.serving.on = True
        try:
            with CLOCK.part(HTTP_SERVER):
                return original(self)
        finally:
            CLOCK.serving.on = False

    _RequestHandler._serve = serve
    try:
        yield
    finally:
        _RequestHandler._serve = original


def http_client_timed() -> contextlib.AbstractContextManager:
    return wrapped(
        [
            (http.client.HTTPConnection, "request", HTTP_CLIENT),
            (http.client.HTTPConnection, "getresponse", HTTP_CLIENT),
            (http.client.HTTPResponse, "read", HTTP_CLIENT),
        ]
    )


# --- the two ways in ----------------------------------------------------------------------------


class OverHttp:
    """POST to the local API over one keep-alive connection."""

    def __init__(self, port: int):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def post(self, path: str, body: dict) -> dict:
        self.connection.request("POST", path, json.dumps(body), {"content-type": "application/json"})
        reply = self.connection.getresponse()
        raw = reply.read()
        assert reply.status == 200, raw
        return json.loads(raw)


class InProcess:
    """The function's handler called in this process with the event API Gateway would send."""

    def __init__(self, api):
        self.api = api

    def post(self, path: str, body: dict) -> dict:
        from types import SimpleNamespace

        from gligabao.local import server

        route, _ = self.api.find_route("POST", path)
        handler = self.api.handler_of(route)
        payload = json.dumps(body).encode()
        event = server.build_event(
            SimpleNamespace(path=route.path, method=route.method),
            {},
            "POST",
            path,
            "",
            {"content-type": "application/json", "host": "localhost"},
            payload,
            "127.0.0.1",
        )
        context = server.LambdaContext(route.function, event["requestContext"]["requestId"])
        with CLOCK.part(HANDLER):  # what runs it in Lambda is not ours
            result = handler(event, context)
        assert result["statusCode"] == 200, result
        return json.loads(result["body"])


def query_body() -> dict:
    return {"user_id": "bench", "dataset": "small", "query": QUESTION}


def context_body() -> dict:
    return {**query_body(), "answer": False}


def remember_body(run: int) -> dict:
    from remember_helpers import chain_text

    return {"user_id": "bench", "dataset": f"r-{run}", "text": chain_text(REMEMBER_FACTS)}


def measure(way, call: str, run: int) -> dict:
    body = query_body() if call == "query" else remember_body(run)
    path = f"/v1/gb/{call}"
    with CLOCK.request() as figures:
        reply = way.post(path, body)
    if call == "query":
        assert reply["answer"], reply
    else:
        assert len(reply["edges"]) == REMEMBER_FACTS, reply
    return figures


def breakdown(runs: list[dict]) -> dict:
    """Each part's median, the total's, and "other": the total's median less the parts' medians."""
    parts = {name: statistics.median(run["parts"].get(name, 0.0) for run in runs) for name in PARTS}
    total = statistics.median(run["total"] for run in runs)
    side = {
        name: statistics.median(run["side"].get(name, 0.0) for run in runs)
        for name in {name for run in runs for name in run["side"]}
    }
    unwrapped = statistics.median(run["parts"].get(OTHER, 0.0) for run in runs)
    return {
        "parts": parts,
        "total": total,
        "other": total - sum(parts.values()),
        "unwrapped": unwrapped,
        "side": side,
    }


def in_worker_processes(runs: int, warm_up: int) -> dict[str, tuple[float, float]]:
    """`gligabao serve`'s default: each function in worker processes (one here), the request handed
    over a pipe. Its parts cannot be timed from this process: {call: (median total, median time
    inside ContainerPools.invoke, the hand-off and the whole handler)}."""
    from gligabao import bootstrap
    from gligabao.local.containers import ContainerPools

    pools = ContainerPools(1, settings_dump=bootstrap.bundle().settings.model_dump())
    figures: dict[str, list[dict]] = defaultdict(list)
    with local_api(pools) as (port, _), wrapped([(ContainerPools, "invoke", HAND_OFF)]):
        way = OverHttp(port)
        for index in range(warm_up + runs):
            for call in ("query", "remember"):
                measured = measure(way, call, 10**6 + index)
                if index >= warm_up:
                    figures[call].append(measured)
    return {
        call: (
            statistics.median(run["total"] for run in runs_),
            statistics.median(run["parts"].get(HAND_OFF, 0.0) for run in runs_),
        )
        for call, runs_ in figures.items()
    }


def run_bench(
    port: int, api, runs: int, warm_up: int, keep: dict | None = None
) -> dict[tuple[str, str], dict]:
    """{(way, call): breakdown} for way in "http", "in-process" and call in "query", "remember";
    `keep`: filled with each run's own figures too."""
    ways = {"http": OverHttp(port), "in-process": InProcess(api)}
    figures: dict[tuple[str, str], list[dict]] = defaultdict(list)
    counter = iter(range(10**9))
    for index in range(warm_up + runs):
        for name, way in ways.items():
            for call in ("query", "remember"):
                measured = measure(way, call, next(counter))
                if index >= warm_up:
                    figures[(name, call)].append(measured)
    if keep is not None:
        keep.update(figures)
    return {key: breakdown(value) for key, value in figures.items()}


def print_report(results: dict[tuple[str, str], dict], runs: int) -> None:
    print(f"per-request time, part by part: median ms of {runs} runs; fake providers answer instantly")
    print(f"query: a graph of {DATASET_FACTS} facts, answered; remember: a text of {REMEMBER_FACTS} facts\n")
    columns = [("http", "query"), ("in-process", "query"), ("http", "remember"), ("in-process", "remember")]
    header = f"{'part':<46}" + "".join(f"{f'{call} {way}':>20}" for way, call in columns)
    print(header)
    print("-" * len(header))
    for name in PARTS:
        print(f"{name:<46}" + "".join(f"{results[column]['parts'][name]:>20.2f}" for column in columns))
    print(f"{OTHER:<46}" + "".join(f"{results[column]['other']:>20.2f}" for column in columns))
    print("-" * len(header))
    print(f"{'total':<46}" + "".join(f"{results[column]['total']:>20.2f}" for column in columns))
    unwrapped = [results[column]["unwrapped"] for column in columns]
    print(f"{'(of other: outside every wrapped call)':<46}" + "".join(f"{ms:>20.2f}" for ms in unwrapped))
    side = [results[column]["side"].get(EMBEDDINGS, 0.0) for column in columns]
    print(f"{'(embeddings on their own thread, overlapped)':<46}" + "".join(f"{ms:>20.2f}" for ms in side))
    print("\nEach part: its own time, without the wrapped calls inside it. other: the total's median less")
    print("the parts' medians: mostly that medians do not add up; what ran outside every wrapped call")
    print("(the bench's own JSON and loop) is the line below it.")


@contextlib.contextmanager
def instrumented() -> Iterator[None]:
    with (
        wrapped(service_targets()),
        embedding_waits_timed(),
        server_thread_marked(),
        http_client_timed(),
    ):
        yield


def _model(body: dict) -> dict:
    """The rule-based model of the tests; for the query stage, an answer citing nothing."""
    from remember_helpers import prompt_of, rule_based_model

    if "<graph>" in prompt_of(body):
        return {"answer": "Person7 knows Person8.", "entities": [], "edges": [], "passages": []}
    return rule_based_model(body)


def remember_small_graph() -> None:
    """The graph the queries read: a chain of DATASET_FACTS facts in the dataset "small"."""
    from remember_helpers import chain_text

    from gligabao import bootstrap
    from gligabao.memory.remember import TextToRemember, remember_text

    remember_text(
        bootstrap.bundle(), TextToRemember(user_id="bench", dataset="small", text=chain_text(DATASET_FACTS))
    )


@contextlib.contextmanager
def bench_service(unprepared: bool = False) -> Iterator[tuple[int, object]]:
    """The fakes, a scratch database with the small graph, the local API: (port, api); `unprepared`:
    psycopg prepares nothing on the server, as behind RDS Proxy (the `production` profile)."""
    import http.server

    http.server.BaseHTTPRequestHandler.disable_nagle_algorithm = True  # see bench/remember.py
    from bench_setup import bench_admin_url, provider_settings, scratch_database
    from fakes.anthropic_server import FakeAnthropic
    from fakes.openai_server import FakeOpenAI

    anthropic, openai = FakeAnthropic().start(), FakeOpenAI().start()
    anthropic.responder = _model
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="WARNING")
    settings = {**provider_settings(anthropic, openai), "auth_mode": "none"}
    try:
        with scratch_database(bench_admin_url(), settings) as scratch:
            if unprepared:
                from gligabao import bootstrap
                from gligabao.db.connection import Database

                url = scratch.bundle.settings.database_url
                bundle = bootstrap.Bundle(
                    scratch.bundle.settings, database=Database(lambda: url, server_side_prepare=False)
                )
                bootstrap.install(bundle)
            remember_small_graph()
            with local_api() as (port, api):
                yield port, api
    finally:
        anthropic.stop()
        openai.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="measured runs per figure (median)")
    parser.add_argument("--warm-up", type=int, default=20, help="runs first, not measured")
    parser.add_argument(
        "--unprepared",
        action="store_true",
        help="no server-side prepared statements, as behind RDS Proxy (the functions in this process; "
        "the worker process prepares as `serve` does)",
    )
    args = parser.parse_args()
    with bench_service(args.unprepared) as (port, api):
        with instrumented():
            results = run_bench(port, api, args.runs, args.warm_up)
            workers = in_worker_processes(args.runs, args.warm_up)
        print_report(results, args.runs)
        print_workers(results, workers)
        print_sql_round_trips(api, args.runs)


def print_sql_round_trips(api, runs: int) -> None:
    """The query's SQL, round trip by round trip (bench/sql_round_trips.py), the handler called in
    this process. Not the remember's: its statements depend on each other's writes (ids, rows), so
    they cannot be explained one by one afterwards."""
    from sql_round_trips import measure as recorded_runs
    from sql_round_trips import print_round_trips

    from gligabao import bootstrap

    way, database = InProcess(api), bootstrap.bundle().database
    for title, body in (("query", query_body()), ("context() (a query without the answer)", context_body())):
        requests = recorded_runs(lambda body=body: way.post("/v1/gb/query", body), runs)
        print_round_trips(f"{title}, in-process", requests, database, "bench")


def print_workers(results: dict[tuple[str, str], dict], workers: dict[str, tuple[float, float]]) -> None:
    print("\nthrough a worker process (`gligabao serve`'s default, --workers 4; one here), median ms;")
    print("the worker's handler is not timed part by part (nothing is wrapped in that process):")
    for call, (total, inside) in workers.items():
        in_process = results[("http", call)]["total"]
        print(
            f"  {call:<9} total {total:6.2f} (in-process functions: {in_process:.2f}); "
            f"handed to the worker and back, its handler included: {inside:.2f}"
        )


if __name__ == "__main__":
    main()
