"""`gligabao serve`, `gligabao explore` and `gligabao mcp --http` start and stop cleanly, as real
processes: a port in use (or an address this machine does not have) is one line on stderr and
exit 2, with nothing started; Ctrl-C (SIGINT) and SIGTERM stop serve, its workers, its job queue
and the embedded PostgreSQL it started, and leave running one it found running, saying so; the
explorer prints the URL of the page opened on the user (?user=, which the page reads)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from conftest import ROOT

# The database of a serve under test is its own data folder's embedded PostgreSQL.
DATABASE_VARIABLES = (
    "DATABASE_URL",
    "GB_MIGRATION_DATABASE_URL",
    "GB_DB_APP_SECRET_ARN",
    "GB_JOBS_QUEUE_URL",
)
START_TIMEOUT_S = 120


def command_env(data_dir: Path, **variables: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in DATABASE_VARIABLES}
    return {**env, "PYTHONPATH": str(ROOT / "layers" / "core"), "GB_DATA_DIR": str(data_dir), **variables}


def gligabao(*args: str) -> list[str]:
    return [sys.executable, "-m", "gligabao.local.cli", *args]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def held_port() -> Iterator[int]:
    """A port of 127.0.0.1 that a plain socket listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


class Running:
    """A command running in the background, its stdout and stderr read as they come."""

    def __init__(self, args: list[str], env: dict[str, str], port: int | None = None, preexec_fn=None):
        self.port = port
        self.process = subprocess.Popen(
            args,
            env=env,
            cwd=ROOT,
            preexec_fn=preexec_fn,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, args=(self.process.stdout, self.out), daemon=True),
            threading.Thread(target=self._read, args=(self.process.stderr, self.err), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream, lines: list[str]) -> None:
        for line in stream:
            lines.append(line.rstrip("\n"))

    def wait_for_line(self, starting: str, timeout: float = START_TIMEOUT_S) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = next((line for line in self.out if line.startswith(starting)), None)
            if found:
                return found
            assert self.process.poll() is None, f"exited {self.process.returncode}: {self.err}"
            time.sleep(0.1)
        raise AssertionError(f"no line {starting!r} in {timeout} s: {self.out} {self.err}")

    def stop(self, signum: int, timeout: float = 60) -> int:
        """SIGINT to the process group, as a terminal's Ctrl-C sends it; another signal to the
        process alone, as `kill` sends it."""
        if signum == signal.SIGINT:
            os.killpg(self.process.pid, signum)
        else:
            self.process.send_signal(signum)
        code = self.process.wait(timeout)
        self.read_to_the_end()
        return code

    def read_to_the_end(self) -> None:
        """Wait until what the ended process wrote has been read."""
        for reader in self._readers:
            reader.join(10)

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)


@contextmanager
def serving(data_dir: Path, *options: str, **variables: str) -> Iterator[Running]:
    """`gligabao serve` on a free port with the data folder `data_dir`, once it listens."""
    served = start_serving(data_dir, options, variables)
    try:
        served.wait_for_line("gligabao listening on")
        yield served
    finally:
        served.kill()


def start_serving(data_dir: Path, options: tuple[str, ...], variables: dict[str, str]) -> Running:
    """`gligabao serve` started on a free port, on another when the one picked was taken before
    serve bound it (a port is free when probed, not when used: the other test worker, or any
    connection's ephemeral port, may take it in between)."""
    for _ in range(3):
        port = free_port()
        served = Running(
            gligabao("serve", "--port", str(port), *options), command_env(data_dir, **variables), port
        )
        if not port_was_taken(served):
            return served
    return served


def port_was_taken(served: Running) -> bool:
    """Whether serve stopped at once for its port being in use (it says so before anything starts)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and served.process.poll() is None:
        if any(line.startswith("gligabao listening on") for line in served.out):
            return False
        time.sleep(0.1)
    if served.process.poll() != 2:
        return False
    served.read_to_the_end()
    return any("is in use" in line for line in served.err)


def postgres_of(pgdata: Path) -> list[psutil.Process]:
    """The PostgreSQL processes serving `pgdata`: its postmaster and the postmaster's children."""
    pid_file = pgdata / "postmaster.pid"
    if not pid_file.exists():
        return []
    try:
        postmaster = psutil.Process(int(pid_file.read_text().split()[0]))
        return [postmaster, *postmaster.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def gone(processes: list[psutil.Process], timeout: float = 10) -> bool:
    _, alive = psutil.wait_procs(processes, timeout=timeout)
    return not alive


@pytest.fixture(autouse=True)
def no_postgres_left(tmp_path):
    """A test that failed midway leaves no PostgreSQL running on its data folder."""
    yield
    left = postgres_of(tmp_path / "pgdata")
    if left:
        left[0].send_signal(signal.SIGINT)  # the postmaster's fast shutdown
        gone(left)


def get(port: int, path: str) -> int:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as reply:
        return reply.status


# --- a port in use, a bad address --------------------------------------------------------------

PORT_COMMANDS = {
    "serve": lambda port: gligabao("serve", "--port", str(port)),
    "explore": lambda port: gligabao("explore", "--port", str(port)),
    "mcp --http": lambda port: gligabao("mcp", "--user-id", "u1", "--http", "--port", str(port)),
}


@pytest.mark.parametrize("command", list(PORT_COMMANDS))
def test_a_port_in_use_is_one_line_naming_it_and_exit_2_with_nothing_started(command, tmp_path):
    with held_port() as port:
        finished = subprocess.run(
            PORT_COMMANDS[command](port),
            env=command_env(tmp_path),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert finished.returncode == 2, finished
    assert finished.stderr.splitlines() == [
        f"gligabao {command}: 127.0.0.1:{port} is in use (another gligabao {command}? stop it or pass --port)"
    ]
    assert "Traceback" not in finished.stdout
    assert list(tmp_path.iterdir()) == []  # no embedded PostgreSQL, no job store


@pytest.mark.parametrize("command", list(PORT_COMMANDS))
def test_an_address_this_machine_does_not_have_is_one_line_and_exit_2(command, tmp_path):
    port = free_port()
    args = [*PORT_COMMANDS[command](port), "--host", "192.0.2.1"]  # TEST-NET-1: no machine's own
    env = command_env(tmp_path, GB_MCP_TOKEN="token-of-the-test")  # mcp refuses other hosts without

    finished = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)

    assert finished.returncode == 2, finished
    assert finished.stderr.splitlines() == [
        f"gligabao {command}: cannot listen on 192.0.2.1:{port}: not an address of this machine (pass --host)"
    ]
    assert list(tmp_path.iterdir()) == []


# --- stopping -----------------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_stops_serve_its_workers_and_the_embedded_postgresql_it_started(signum, tmp_path):
    pgdata = tmp_path / "pgdata"
    with serving(tmp_path, "--workers", "1") as served:
        assert get(served.port, "/v1/gb/health") == 200  # a worker process serves it
        postgres = postgres_of(pgdata)
        workers = psutil.Process(served.process.pid).children(recursive=True)
        assert postgres and workers

        assert served.stop(signum) == 0

    assert gone(postgres), [process.pid for process in postgres if process.is_running()]
    assert not (pgdata / "postmaster.pid").exists()
    assert gone(workers)
    assert (
        served.out[-1] == f"gligabao serve: stopped; the embedded PostgreSQL it started ({pgdata}) is stopped"
    )
    assert not any("Traceback" in line for line in served.err + served.out), served.err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_embedded_postgresql_serve_found_running_keeps_running_and_the_stop_line_says_so(
    signum, tmp_path, embedded_postgres_version
):
    from gligabao.local.embedded_pg import embedded_server

    pgdata = tmp_path / "pgdata"
    # As a test run, or an earlier serve, leaves it running.
    started_by_the_test = embedded_server(str(pgdata), version=embedded_postgres_version)
    try:
        postgres = postgres_of(pgdata)
        with serving(tmp_path, "--workers", "0") as served:
            assert get(served.port, "/v1/gb/health") == 200

            assert served.stop(signum) == 0

        assert all(process.is_running() for process in postgres)
        assert postgres_of(pgdata)[0].pid == postgres[0].pid
        assert served.out[-1] == (
            f"gligabao serve: stopped; the embedded PostgreSQL in {pgdata} was running before it "
            "(another process started it) and is left running"
        )
        assert not any("Traceback" in line for line in served.err + served.out), served.err
    finally:
        started_by_the_test.stop()


def test_serve_on_a_database_url_stops_without_a_word_of_postgresql(
    database_url, admin_database_url, tmp_path
):
    with serving(
        tmp_path, "--workers", "0", DATABASE_URL=database_url, GB_MIGRATION_DATABASE_URL=admin_database_url
    ) as served:
        assert get(served.port, "/v1/gb/health") == 200
        assert served.stop(signal.SIGTERM) == 0

    assert served.out[-1] == "gligabao serve: stopped"
    assert not (tmp_path / "pgdata").exists()


# --- the explorer's URL -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "variables", "opened_on"),
    [
        ((), {}, ""),
        (("--user-id", "u1"), {}, "?user=u1"),
        (
            (),
            {"GB_USER_ID": "ann lee/1", "GB_DATASET": "chats&notes"},
            "?user=ann%20lee%2F1&dataset=chats%26notes",
        ),
        (("--user-id", "u2", "--dataset", "d"), {"GB_USER_ID": "u1"}, "?user=u2&dataset=d"),
    ],
    ids=["nobody", "user", "from-the-environment", "flags-over-the-environment"],
)
def test_the_explorer_prints_the_url_of_the_page_opened_on_the_user(options, variables, opened_on, tmp_path):
    port = free_port()
    env = command_env(tmp_path, **variables)
    for name in ("GB_USER_ID", "GB_DATASET"):
        if name not in variables:
            env.pop(name, None)
    explorer = Running(gligabao("explore", "--port", str(port), *options), env)
    try:
        line = explorer.wait_for_line("gligabao explorer on")
    finally:
        explorer.kill()

    assert line.startswith(f"gligabao explorer on http://127.0.0.1:{port}/{opened_on} (API ")


# --- what serve runs on ------------------------------------------------------------------------

NO_KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "GB_LLM_PROVIDER": "", "GB_EMBEDDING_PROVIDER": ""}


def post(port: int, path: str, body: dict) -> tuple[int, dict]:
    import json
    import urllib.request

    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        return reply.status, json.loads(reply.read())


def test_with_no_key_serve_says_it_runs_offline_and_does_the_main_job(tmp_path):
    with serving(tmp_path, **NO_KEYS) as served:
        line = served.wait_for_line("providers:")
        remembered = post(served.port, "/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."})
        answered = post(served.port, "/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"})

    assert line.startswith(
        "providers: LLM offline (rule-based: no ANTHROPIC_API_KEY), embeddings offline (hashed words: no "
        "OPENAI_API_KEY); offline providers are for trying the API"
    )
    assert remembered[0] == 200 and [e["relation"] for e in remembered[1]["edges"]] == ["works_at"]
    assert answered == (200, answered[1]) and answered[1]["answer"] == "Alice works at Acme."


def test_keys_that_are_set_are_used_and_a_database_of_offline_vectors_is_refused_to_real_ones(tmp_path):
    with serving(tmp_path, **NO_KEYS) as served:
        assert post(served.port, "/v1/gb/remember", {"user_id": "u1", "text": "Bob lives in Rome."})[0] == 200
        served.stop(signal.SIGTERM)
    keyed = {**NO_KEYS, "ANTHROPIC_API_KEY": "sk-ant-test", "OPENAI_API_KEY": "sk-test-unused-key"}

    refused = subprocess.run(
        gligabao("serve", "--port", str(free_port())),
        env=command_env(tmp_path, **keyed),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
    )

    assert refused.returncode == 2, refused.stderr
    assert [line for line in refused.stderr.splitlines() if line] == [
        "gligabao serve: this database's vectors were made by offline:offline-hash, and the configured "
        "embeddings are openai:text-embedding-3-small: their vectors cannot be compared. Set the embeddings "
        "back (GB_EMBEDDING_PROVIDER, OPENAI_API_KEY), or use another database (GB_DATA_DIR or DATABASE_URL) "
        "for the new ones"
    ]
    assert "sk-test-unused-key" not in refused.stdout + refused.stderr
    with serving(tmp_path / "keyed", **keyed) as served:
        assert served.wait_for_line("providers:") == (
            "providers: LLM anthropic claude-haiku-5-5, embeddings openai text-embedding-3-small"
        )


def test_ctrl_c_stops_serve_even_when_it_started_with_sigint_ignored(tmp_path):
    """A shell's background job (`make serve &`) starts with SIGINT ignored: Ctrl-C, or `kill
    -INT`, must stop it all the same."""
    port = free_port()
    served = Running(
        gligabao("serve", "--port", str(port), "--workers", "0"),
        command_env(tmp_path),
        port,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        served.wait_for_line("providers:")
        postgres = postgres_of(tmp_path / "pgdata")
        assert served.stop(signal.SIGINT) == 0
    finally:
        served.kill()

    assert served.out[-1].startswith("gligabao serve: stopped; the embedded PostgreSQL it started")
    assert gone(postgres)
