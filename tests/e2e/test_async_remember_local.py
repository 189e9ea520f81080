"""Asynchronous and batch remembers over HTTP against the local API (`gligabao serve`), whose
in-process queue runs the same worker handler as the Lambda."""

from __future__ import annotations

from graph_rows import graph_counts

ALICE = {"user_id": "u1", "dataset": "main", "text": "Alice works at Acme.", "session_id": "s1"}


def test_an_async_remember_is_202_then_its_artifact_reads_back_done(api, models, local_jobs):
    reply = api.post("/v1/gb/remember", {**ALICE, "async": True})

    assert reply.status == 202
    assert reply.json == {"artifact_id": reply.json["artifact_id"], "status": "pending"}
    assert local_jobs.wait_until_empty(30)
    artifact = api.get(f"/v1/gb/artifacts/{reply.json['artifact_id']}?user_id=u1")
    assert artifact.status == 200
    assert artifact.json["status"] == "done"
    assert sorted(e["name"] for e in artifact.json["entities"]) == ["Acme", "Alice"]


def test_a_batch_is_applied_in_order_of_reference_time_whatever_the_order_sent(api, models, local_jobs):
    texts = [
        {"text": "Alice lives in Rome.", "reference_time": "2025-06-01T00:00:00Z", "session_id": "b"},
        {"text": "Alice lives in Paris.", "reference_time": "2024-06-01T00:00:00Z", "session_id": "a"},
    ]
    reply = api.post("/v1/gb/remember/batch", {"user_id": "u1", "dataset": "main", "texts": texts})

    assert reply.status == 202
    rome, paris = (a["artifact_id"] for a in reply.json["artifacts"])  # the order of the request
    assert [a["status"] for a in reply.json["artifacts"]] == ["pending", "pending"]
    assert paris < rome  # the ids follow the order of the queue (reference time), not the request's
    assert local_jobs.wait_until_empty(30)
    graph = api.get("/v1/gb/graph?user_id=u1&dataset=main&include_expired=true").json
    names = {e["id"]: e["name"] for e in graph["entities"]}
    lives = {names[e["target_id"]]: e for e in graph["edges"] if e["relation"] == "lives_in"}
    assert "expired_at" not in lives["Rome"] or lives["Rome"]["expired_at"] is None
    assert lives["Paris"]["invalid_at"].startswith("2025-06-01")  # Rome superseded Paris


def test_a_batch_of_more_than_100_texts_or_none_is_400_and_stores_nothing(api, db, local_jobs):
    too_many = [{"text": f"Person{i} lives in Rome."} for i in range(101)]
    for texts in (too_many, []):
        reply = api.post("/v1/gb/remember/batch", {"user_id": "u1", "texts": texts})
        assert reply.status == 400 and "texts" in reply.json["error"], reply.json
    unknown = api.post("/v1/gb/remember/batch", {"user_id": "u1", "texts": [{"text": "x", "async": True}]})
    assert unknown.status == 400 and "async" in unknown.json["error"]
    assert graph_counts(db)["gb_artifacts"] == 0


def test_async_must_be_a_boolean(api, db, local_jobs):
    reply = api.post("/v1/gb/remember", {**ALICE, "async": "soon"})

    assert reply.status == 400 and "async" in reply.json["error"]
    assert graph_counts(db)["gb_artifacts"] == 0


def test_a_job_queued_when_the_server_stopped_is_done_by_the_next_server(api, models, db, tmp_path):
    from job_helpers import artifact_status, worker

    from gligabao import bootstrap
    from gligabao.local.job_queue import LocalJobQueue

    store = tmp_path / "jobs.json"
    limits = bootstrap.bundle().limits
    stopped = LocalJobQueue(worker(), max_attempts=limits.async_max_attempts, store=store)
    stopped.stop()  # the server is gone before its queue runs the job
    bootstrap.bundle().use_job_queue(stopped)
    try:
        reply = api.post("/v1/gb/remember", {**ALICE, "async": True})
        assert reply.status == 202
        assert artifact_status(db, reply.json["artifact_id"]) == ("pending", None)

        restarted = LocalJobQueue(worker(), max_attempts=limits.async_max_attempts, store=store)
        bootstrap.bundle().use_job_queue(restarted)
        try:
            assert restarted.wait_until_empty(30)
        finally:
            restarted.stop()
    finally:
        bootstrap.bundle().use_job_queue(None)

    artifact = api.get(f"/v1/gb/artifacts/{reply.json['artifact_id']}?user_id=u1")
    assert artifact.json["status"] == "done"
    assert sorted(e["name"] for e in artifact.json["entities"]) == ["Acme", "Alice"]


def test_a_batch_over_http_extracts_and_embeds_each_text_once_and_stores_them_in_order(
    api, models, local_jobs
):
    from remember_helpers import stages_called

    fake_anthropic, fake_openai = models
    cities = ["Paris", "Rome", "Oslo", "Lima", "Kyiv", "Bern"]
    texts = [
        {"text": f"Alice lives in {city}.", "reference_time": f"{2010 + i}-01-01T00:00:00Z"}
        for i, city in reversed(list(enumerate(cities)))
    ]

    reply = api.post("/v1/gb/remember/batch", {"user_id": "u1", "dataset": "main", "texts": texts})

    assert reply.status == 202
    assert local_jobs.wait_until_empty(60)
    assert stages_called(fake_anthropic).count("extract") == len(cities)  # four of them ahead
    assert len(fake_openai.embedding_requests) == len(cities)
    for artifact in reply.json["artifacts"]:
        assert api.get(f"/v1/gb/artifacts/{artifact['artifact_id']}?user_id=u1").json["status"] == "done"
    graph = api.get("/v1/gb/graph?user_id=u1&dataset=main&include_expired=true").json
    names = {e["id"]: e["name"] for e in graph["entities"]}
    live = [
        names[e["target_id"]]
        for e in graph["edges"]
        if e["relation"] == "lives_in" and not e.get("invalid_at")
    ]
    assert live == ["Bern"]


def test_the_datasets_list_counts_the_texts_still_queued_and_those_failed(api, models, sqs_jobs):
    from conftest import reconfigure
    from job_helpers import pump, pump_refused

    from gligabao import bootstrap

    # One text a job, so that the counts can be read between jobs (windows: test_bulk_windows.py).
    reconfigure(limits=bootstrap.bundle().limits.model_copy(update={"bulk_window_texts": 1}))

    def counts() -> dict:
        [listed] = api.get("/v1/gb/datasets?user_id=u1").json["datasets"]
        return {k: listed[k] for k in ("artifacts", "queued", "failed", "edges")}

    texts = [{"text": f"Alice lives in {city}."} for city in ("Rome", "Oslo", "Lima")]
    assert (
        api.post("/v1/gb/remember/batch", {"user_id": "u1", "dataset": "main", "texts": texts}).status == 202
    )

    assert counts() == {"artifacts": 3, "queued": 3, "failed": 0, "edges": 0}

    pump(sqs_jobs, rounds=2)

    assert counts() == {"artifacts": 3, "queued": 1, "failed": 0, "edges": 1}

    pump_refused(sqs_jobs)

    assert counts() == {"artifacts": 3, "queued": 0, "failed": 1, "edges": 1}
    assert (
        api.post("/v1/gb/remember", {"user_id": "u1", "dataset": "main", "text": "Bob works at Acme."}).status
        == 200
    )
    assert counts() == {"artifacts": 4, "queued": 0, "failed": 1, "edges": 2}
