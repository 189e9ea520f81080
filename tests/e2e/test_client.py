"""gligabao.client.Memory against the local API: every method, its typed results, its errors,
and the retries (through a fake upstream in front of the API that fails as told)."""

from __future__ import annotations

import http.server
import threading
import urllib.request
from datetime import UTC, datetime

import pytest
from conftest import count_rows
from image_files import image_file
from query_helpers import reply_citing

from gligabao.api.forget_models import ForgetResponse
from gligabao.api.graph_models import GraphExport
from gligabao.api.models import DatasetList, Health
from gligabao.api.query_models import QueryResponse
from gligabao.api.readback_models import ArtifactReadback, EntityReadback, SessionReadback
from gligabao.api.remember_models import AcceptedResponse, RememberResponse
from gligabao.api.trajectory_models import TrajectoryRecord
from gligabao.client import (
    ApiConnectionError,
    BadRequestError,
    ConflictError,
    Memory,
    NotFoundError,
    Retries,
    ServiceUnavailableError,
    UpstreamError,
)

FAST = Retries(max_retries=3, base_delay_s=0.01, max_delay_s=0.02)
REFERENCE_TIME = datetime(2025, 1, 31, 9, 0, tzinfo=UTC)


@pytest.fixture
def memory(api):
    with Memory(api.base_url, user_id="u1", retries=FAST) as client:
        yield client


def test_remember_returns_the_api_model_of_what_was_stored(memory, db, models):
    stored = memory.remember("Alice works at Acme.", session_id="chat-42", reference_time=REFERENCE_TIME)

    assert isinstance(stored, RememberResponse)
    assert (stored.session_id, stored.dataset) == ("chat-42", "main")
    assert [e.name for e in stored.entities] == ["Alice", "Acme"]
    [edge] = stored.edges
    assert (edge.relation, edge.valid_at, edge.artifact_id) == (
        "works_at",
        "2025-01-31T09:00:00Z",
        stored.artifact_id,
    )


def test_query_returns_the_answer_and_its_evidence(memory, db, models):
    fake_anthropic, _ = models
    stored = memory.remember("Alice works at Acme.", dataset="work")
    fake_anthropic.queue(reply_citing("Alice works at Acme.", edges=[stored.edges[0].id]))

    answer = memory.query("Where does Alice work?", dataset="work", session_id="chat-42")

    assert isinstance(answer, QueryResponse)
    assert answer.answer == "Alice works at Acme."
    assert answer.session_id == "chat-42"
    assert [e.id for e in answer.evidence.edges] == [stored.edges[0].id]


def test_an_episode_is_remembered_as_one(memory, db, models):
    stored = memory.remember("Alice works at Acme.", kind="episode")

    assert stored.kind == "episode"
    assert memory.artifact(stored.artifact_id).memory_kind == "episode"


def test_datasets_list_and_delete(memory, db, models):
    memory.remember("Alice works at Acme.", dataset="work")

    listed = memory.datasets()
    deleted = memory.delete_dataset("work")

    assert isinstance(listed, DatasetList)
    assert [(d.name, d.artifacts, d.entities, d.edges) for d in listed.datasets] == [("work", 1, 2, 1)]
    assert (deleted.dataset, deleted.deleted) == ("work", True)
    assert memory.datasets().datasets == []


def test_read_back_a_session_an_artifact_and_an_entity_timeline(memory, db, models):
    first = memory.remember("Alice lives in Paris.", session_id="a/1", reference_time="2023-05-01T09:00:00Z")
    memory.remember("Alice moved to Rome in 2025.", session_id="a/1", reference_time=REFERENCE_TIME)

    session = memory.session("a/1")  # a slash in a session id travels percent-encoded
    artifact = memory.artifact(first.artifact_id)
    alice = next(e for e in first.entities if e.name == "Alice")
    timeline = memory.entity(alice.id)

    assert isinstance(session, SessionReadback) and session.session_id == "a/1"
    assert len(session.artifacts) == 2 and session.next_cursor is None
    assert isinstance(artifact, ArtifactReadback)
    assert (artifact.text, artifact.status, artifact.session_id) == ("Alice lives in Paris.", "done", "a/1")
    assert isinstance(timeline, EntityReadback) and timeline.name == "Alice"
    assert sorted(e.relation for e in timeline.edges) == ["lives_in", "lives_in"]
    assert [e.expired_at is not None for e in timeline.edges].count(True) == 1  # Paris superseded


def test_pages_follow_the_cursors_to_the_end(memory, db, models):
    memory.remember("Alice works at Acme. Bob knows Alice.", session_id="s")

    pages = list(memory.session_pages("s", limit=1))
    graph_pages = list(memory.graph_pages(limit=1))

    assert len(pages) >= 3 and pages[-1].next_cursor is None
    assert sorted({e.name for page in pages for e in page.entities}) == ["Acme", "Alice", "Bob"]
    assert all(isinstance(p, GraphExport) for p in graph_pages)
    assert sum(len(p.entities) for p in graph_pages) == 3
    assert sum(len(p.edges) for p in graph_pages) == 2


def test_graph_export_as_json_and_as_graphml(memory, db, models):
    memory.remember("Alice lives in Paris.", reference_time="2023-05-01T09:00:00Z")
    memory.remember("Alice moved to Rome in 2025.", reference_time=REFERENCE_TIME)

    live = memory.graph()
    everything = memory.graph(include_expired=True)
    graphml = memory.graphml()

    assert [e.relation for e in live.edges] == ["lives_in"]
    assert len(everything.edges) == 2
    assert graphml.document.startswith("<?xml") and "<graphml" in graphml.document
    assert graphml.next_cursor is None


def test_forget_an_edge_an_entity_and_an_artifact(memory, db, models):
    stored = memory.remember("Alice works at Acme. Bob knows Alice.")
    works_at = next(e for e in stored.edges if e.relation == "works_at")
    bob = next(e for e in stored.entities if e.name == "Bob")

    edge = memory.forget_edge(works_at.id)
    entity = memory.forget_entity(bob.id)
    artifact = memory.forget_artifact(stored.artifact_id)

    assert isinstance(edge, ForgetResponse) and edge.deleted.edges == 1
    assert entity.deleted.entities == 1
    assert artifact.deleted.artifacts == 1
    assert count_rows(db, "gb_edges") == 0 and count_rows(db, "gb_artifacts") == 0


def test_an_async_remember_is_accepted_then_waited_for(memory, db, models, local_jobs):
    accepted = memory.remember("Alice works at Acme.", run_async=True)
    batch = memory.remember_batch(
        ["Bob knows Alice.", {"text": "Carol works at Acme.", "session_id": "c"}], eval=True
    )

    done = memory.wait(accepted.artifact_id, interval=0.05)
    last = memory.wait(batch.artifacts[-1].artifact_id, interval=0.05)

    assert isinstance(accepted, AcceptedResponse) and accepted.status == "pending"
    assert [a.status for a in batch.artifacts] == ["pending", "pending"]
    assert done.status == "done" and sorted(e.name for e in done.entities) == ["Acme", "Alice"]
    assert (last.status, last.session_id) == ("done", "c")
    [recorded] = memory.trajectories(artifact_id=last.id).trajectories
    assert recorded.kind == "remember"


def test_waiting_for_a_dataset_returns_once_its_batch_is_stored_with_the_failures_counted(
    api, db, models, sqs_jobs
):
    from job_helpers import pump

    waits = []

    def one_job_per_wait(seconds: float) -> None:
        waits.append(seconds)
        pump(sqs_jobs, rounds=1)

    with Memory(api.base_url, user_id="u1", retries=FAST, sleep=one_job_per_wait) as memory:
        memory.remember_batch(["Alice works at Acme.", "Bob knows Alice."], dataset="batch")

        summary = memory.wait_for_dataset("batch", interval=0.05)

        assert waits == [0.05]  # the first job stored both texts, a window (memory/windows.py)
        assert (summary.name, summary.artifacts, summary.queued, summary.failed) == ("batch", 2, 0, 0)
        assert summary.edges == 2
        with pytest.raises(LookupError):
            memory.wait_for_dataset("none", interval=0.05)


def test_waiting_for_a_dataset_whose_texts_stay_queued_times_out(api, db, models, sqs_jobs):
    with Memory(api.base_url, user_id="u1", retries=FAST, sleep=lambda seconds: None) as memory:
        memory.remember_batch(["Alice works at Acme."], dataset="batch")

        with pytest.raises(TimeoutError, match="1 queued"):
            memory.wait_for_dataset("batch", timeout=0.2, interval=0.05)


def test_an_image_is_remembered_with_its_media_type_read_from_its_bytes(memory, db, models):
    stored = memory.remember_image(image_file("image/jpeg"), caption="Alice works at Acme.", eval=True)

    assert stored.description is not None and "image/jpeg" in stored.description
    assert stored.repeated is False
    assert stored.trajectory is not None
    assert [e.name for e in stored.entities] == ["Alice", "Acme"]


def test_eval_calls_return_their_trajectories_and_read_them_back(memory, db, models):
    fake_anthropic, _ = models
    stored = memory.remember("Alice works at Acme.", session_id="s", eval=True)
    fake_anthropic.queue(reply_citing("Alice works at Acme."), times=2)
    answer = memory.query("Where does Alice work?", session_id="s", eval=True)
    plain = memory.query("Where does Alice work?", session_id="s")

    listed = memory.trajectories(session_id="s")
    record = memory.trajectory(listed.trajectories[-1].id)
    pages = list(memory.trajectory_pages(limit=1))
    of_the_remember = memory.trajectories(artifact_id=stored.artifact_id, kind="remember")

    assert stored.trajectory is not None and stored.trajectory.schema_version == "ATIF-v1.8"
    assert answer.trajectory is not None and plain.trajectory is None
    assert [t.kind for t in listed.trajectories] == ["remember", "query"]
    assert isinstance(record, TrajectoryRecord)
    assert (record.kind, record.session_id, record.dataset) == ("query", "s", "main")
    assert record.trajectory.steps[0].message == "Where does Alice work?"
    assert [t.id for page in pages for t in page.trajectories] == [t.id for t in listed.trajectories]
    assert [t.artifact_id for t in of_the_remember.trajectories] == [stored.artifact_id]


def test_health_and_the_openapi_document(memory, db):
    health = memory.health()
    document = memory.openapi()

    assert isinstance(health, Health) and health.database.ok
    assert "/v1/gb/remember" in document["paths"]


def test_an_api_error_carries_the_status_and_the_error_text(memory, db, models):
    with pytest.raises(BadRequestError) as bad:
        memory.remember("   ")
    with pytest.raises(NotFoundError) as missing:
        memory.artifact(999)
    with pytest.raises(BadRequestError) as no_user:
        memory.for_user("").datasets()

    assert bad.value.status == 400 and bad.value.error == "text must not be empty"
    assert missing.value.status == 404 and "artifact" in missing.value.error
    assert "user_id" in no_user.value.error
    assert count_rows(db, "gb_artifacts") == 0


def test_a_provider_failure_is_an_upstream_error_and_a_remember_without_key_is_not_retried(
    memory, db, fake_anthropic, fake_openai
):
    from fakes.anthropic_server import Reply

    fake_anthropic.queue(Reply.error(400, "invalid_request_error"))

    with pytest.raises(UpstreamError) as failed:
        memory.remember("Alice works at Acme.", idempotency_key=None)

    assert failed.value.status == 502
    assert len(fake_anthropic.messages) == 1


def test_for_user_keeps_each_users_data_apart(memory, db, models):
    memory.remember("Alice works at Acme.")

    assert memory.for_user("u2").datasets().datasets == []
    assert [d.name for d in memory.datasets().datasets] == ["main"]


def test_an_unreachable_api_is_a_connection_error(db):
    with (
        Memory("http://127.0.0.1:9", user_id="u1", retries=FAST) as unreachable,
        pytest.raises(ApiConnectionError),
    ):
        unreachable.datasets()


# --- retries: a fake upstream in front of the local API ------------------------------------------


class FlakyUpstream:
    """An HTTP proxy to the local API that answers the first `failures` requests itself with
    `status` (after forwarding them, when `forward_first`: the API did the work, the answer was lost)."""

    def __init__(self, api_url: str):
        self.api_url = api_url
        self.failures = 0
        self.status = 503
        self.forward_first = False
        self.seen: list[tuple[str, str, str | None]] = []  # method, path, Idempotency-Key
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _serve(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
                upstream.seen.append((self.command, self.path, self.headers.get("Idempotency-Key")))
                failing = upstream.failures > 0
                if failing:
                    upstream.failures -= 1
                if not failing or upstream.forward_first:
                    status, headers, payload = upstream.forward(self, body)
                if failing:
                    status, headers, payload = upstream.status, {}, b'{"error": "try again"}'
                self.send_response(status)
                for name, value in headers.items():
                    if name.lower() not in (
                        "content-length",
                        "transfer-encoding",
                        "connection",
                        "date",
                        "server",
                    ):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = _serve

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def forward(self, handler, body: bytes | None):
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("host", "content-length")}
        request = urllib.request.Request(self.api_url + handler.path, body, headers, method=handler.command)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, dict(response.headers.items()), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers.items()), error.read()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def flaky(api):
    upstream = FlakyUpstream(api.base_url)
    yield upstream
    upstream.close()


def test_a_read_is_retried_after_a_503_and_succeeds(flaky, db, models):
    flaky.failures = 1
    with Memory(flaky.url, user_id="u1", retries=FAST) as memory:
        listed = memory.datasets()

    assert listed.datasets == []
    assert [method for method, _, _ in flaky.seen] == ["GET", "GET"]


@pytest.mark.parametrize("status", [429, 502, 504])
def test_a_query_is_retried_on_each_retryable_status(flaky, db, models, status):
    fake_anthropic, _ = models
    with Memory(flaky.url, user_id="u1", retries=FAST) as memory:
        memory.remember("Alice works at Acme.")
        flaky.failures, flaky.status = 1, status
        fake_anthropic.queue(reply_citing("Alice works at Acme."))
        answer = memory.query("Where does Alice work?")

    assert answer.answer == "Alice works at Acme."
    assert [m for m, p, _ in flaky.seen if p == "/v1/gb/query"] == ["POST", "POST"]


def test_retries_give_up_after_the_policy_with_the_last_error(flaky, db):
    flaky.failures = 10
    with (
        Memory(flaky.url, user_id="u1", retries=FAST) as memory,
        pytest.raises(ServiceUnavailableError) as err,
    ):
        memory.datasets()

    assert err.value.error == "try again"
    assert len(flaky.seen) == 1 + FAST.max_retries


def test_a_lost_remember_answer_is_retried_with_the_same_key_and_stored_once(flaky, db, models):
    flaky.failures, flaky.status, flaky.forward_first = 1, 502, True
    with Memory(flaky.url, user_id="u1", retries=FAST) as memory:
        stored = memory.remember("Alice works at Acme.")

    [(_, _, first_key), (_, _, second_key)] = flaky.seen
    assert first_key is not None and first_key == second_key  # generated once, sent with each attempt
    assert count_rows(db, "gb_artifacts") == 1  # the retry got the first run's answer back
    assert stored.artifact_id == db.execute("SELECT id FROM gb_artifacts").fetchone()[0]


def test_a_remember_without_idempotency_key_is_never_retried(flaky, db, models):
    flaky.failures = 1
    with Memory(flaky.url, user_id="u1", retries=FAST) as memory, pytest.raises(ServiceUnavailableError):
        memory.remember("Alice works at Acme.", idempotency_key=None)

    assert [(m, key) for m, _, key in flaky.seen] == [("POST", None)]
    assert count_rows(db, "gb_artifacts") == 0


def test_a_key_reused_with_another_text_is_a_conflict(memory, db, models):
    memory.remember("Alice works at Acme.", idempotency_key="k-1")

    with pytest.raises(ConflictError) as conflict:
        memory.remember("Bob works at Acme.", idempotency_key="k-1")

    assert conflict.value.status == 409 and "Idempotency-Key" in conflict.value.error
