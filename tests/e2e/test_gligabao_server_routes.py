"""The gligabao server's routes (issue 39), over the local API: POST /v1/gb/eval/remember and
/v1/gb/eval/query answer as remember and query do, as eval calls, with `trajectory_id` and
`trajectory`; GET /v1/gb/datasets/{name}/graph is GET /v1/gb/graph?dataset=; DELETE
/v1/gb/datasets/{name} answers 204. Ours stay: `"eval": true`, strict bodies, the 413."""

from __future__ import annotations

import base64

import atif
import pytest
from conftest import count_rows
from graph_rows import alice_works_at_acme, nothing_stored
from image_files import image_file
from remember_helpers import prompt_of, remember, rule_based_model

from gligabao.limits import DEFAULT_LIMITS

ALICE = {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "chat-42"}
QUESTION = {"user_id": "u1", "query": "Where does Alice work?"}


def reader(body: dict) -> dict:
    """The rule-based model, and for the query stage an answer."""
    if "<graph>" not in prompt_of(body):
        return rule_based_model(body)
    return {"answer": "Alice works at Acme.", "entities": [], "edges": [], "passages": []}


@pytest.fixture
def eval_models(fake_anthropic, fake_openai):
    fake_anthropic.responder = reader
    return fake_anthropic, fake_openai


def stored_trajectory(api, trajectory_id: int) -> dict:
    reply = api.get(f"/v1/gb/trajectories/{trajectory_id}?user_id=u1")
    assert reply.status == 200, reply.json
    return reply.json


# --- POST /v1/gb/eval/remember ------------------------------------------------------------------


def test_eval_remember_is_remember_with_its_stored_trajectory_and_its_id(api, db, eval_models):
    reply = api.post("/v1/gb/eval/remember", {**ALICE, "kind": "episode"})

    assert reply.status == 200, reply.json
    body = reply.json
    assert (body["session_id"], body["kind"], body["chunks"]) == ("chat-42", "episode", [])
    assert [e["name"] for e in body["entities"]] == ["Alice", "Acme"]
    atif.Trajectory.model_validate(body["trajectory"])
    assert isinstance(body["trajectory_id"], int)
    assert body["trajectory"]["trajectory_id"] == str(body["trajectory_id"])
    assert body["trajectory"]["extra"]["artifact_id"] == body["artifact_id"]
    record = stored_trajectory(api, body["trajectory_id"])
    assert (record["kind"], record["artifact_id"]) == ("remember", body["artifact_id"])
    assert record["trajectory"] == body["trajectory"]
    assert count_rows(db, "gb_trajectories") == 1


def test_eval_remember_takes_an_image_as_bare_base64(api, db, eval_models):
    image = base64.b64encode(image_file()).decode()

    reply = api.post("/v1/gb/eval/remember", {"user_id": "u1", "image": image})

    assert reply.status == 200, reply.json
    assert reply.json["description"] == "A image/png picture"
    assert stored_trajectory(api, reply.json["trajectory_id"])["artifact_id"] == reply.json["artifact_id"]


def test_eval_remember_implies_eval_whatever_the_body_says(api, db, eval_models):
    reply = api.post("/v1/gb/eval/remember", {**ALICE, "eval": False})

    assert reply.status == 200, reply.json
    assert reply.json["trajectory_id"] == int(reply.json["trajectory"]["trajectory_id"])


def test_remember_without_eval_still_answers_without_a_trajectory(api, db, eval_models):
    body = remember(api, "Alice works at Acme.")

    assert "trajectory" not in body and "trajectory_id" not in body
    assert count_rows(db, "gb_trajectories") == 0


def test_an_asynchronous_eval_remember_is_a_202_its_trajectory_stored_with_the_job(
    api, db, eval_models, local_jobs
):
    reply = api.post("/v1/gb/eval/remember", {**ALICE, "async": True})

    assert reply.status == 202, reply.json
    assert reply.json == {"artifact_id": reply.json["artifact_id"], "status": "pending"}
    assert local_jobs.wait_until_empty(30)
    listed = api.get(f"/v1/gb/trajectories?user_id=u1&artifact_id={reply.json['artifact_id']}").json
    assert len(listed["trajectories"]) == 1


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({**ALICE, "sesion_id": "x"}, "sesion_id"),  # ours stays strict
        ({**ALICE, "kind": "memo"}, "kind"),
        ({"user_id": "u1", "facts": {"entities": [{"name": "Alice", "type": "person"}]}}, "eval"),
        ({"user_id": "u1", "image": "not base64!"}, "image"),
        ({**ALICE, "text": "  "}, "text"),
    ],
)
def test_a_bad_eval_remember_is_a_400_that_stores_nothing(api, db, eval_models, body, says):
    reply = api.post("/v1/gb/eval/remember", body)

    assert reply.status == 400, reply.json
    assert says in reply.json["error"]
    assert nothing_stored(db) and count_rows(db, "gb_trajectories") == 0


def test_a_too_large_eval_remember_is_a_413_that_stores_nothing(api, db, eval_models):
    text = "x" * (DEFAULT_LIMITS.remember_max_body_bytes + 1)

    reply = api.post("/v1/gb/eval/remember", {**ALICE, "text": text})

    assert reply.status == 413
    assert nothing_stored(db)


# --- POST /v1/gb/eval/query ---------------------------------------------------------------------


def test_eval_query_is_query_with_its_stored_trajectory_and_its_id(api, db, eval_models):
    remember(api, "Alice works at Acme.")

    reply = api.post("/v1/gb/eval/query", {**QUESTION, "session_id": "chat-42"})

    assert reply.status == 200, reply.json
    body = reply.json
    assert body["answer"] == "Alice works at Acme."
    assert "evidence" in body
    atif.Trajectory.model_validate(body["trajectory"])
    assert body["trajectory"]["session_id"] == "chat-42"
    record = stored_trajectory(api, body["trajectory_id"])
    assert (record["kind"], record["artifact_id"]) == ("query", None)
    assert record["trajectory"] == body["trajectory"]


def test_eval_query_of_an_unknown_dataset_is_a_404_and_records_nothing(api, db, eval_models):
    reply = api.post("/v1/gb/eval/query", {**QUESTION, "dataset": "nowhere"})

    assert reply.status == 404
    assert count_rows(db, "gb_trajectories") == 0


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({**QUESTION, "answer": False}, "eval records the trajectory of an answer"),
        ({**QUESTION, "qeury": "x"}, "qeury"),
        ({"user_id": "u1", "query": ""}, "query"),
        ({**QUESTION, "models": {"extract_graph": "claude-haiku-5-5"}}, "extract_graph"),
    ],
)
def test_a_bad_eval_query_is_a_400_that_records_nothing(api, db, eval_models, body, says):
    remember(api, "Alice works at Acme.")
    before = count_rows(db, "gb_inferences")

    reply = api.post("/v1/gb/eval/query", body)

    assert reply.status == 400, reply.json
    assert says in reply.json["error"]
    assert count_rows(db, "gb_trajectories") == 0 and count_rows(db, "gb_inferences") == before


def test_a_too_large_eval_query_is_a_413(api, db, eval_models):
    query = "x" * (DEFAULT_LIMITS.query_max_body_bytes + 1)

    reply = api.post("/v1/gb/eval/query", {**QUESTION, "query": query})

    assert reply.status == 413
    assert count_rows(db, "gb_trajectories") == 0


# --- GET /v1/gb/datasets/{name}/graph -----------------------------------------------------------


def test_the_graph_under_the_dataset_is_the_graph_of_the_dataset(api, db):
    alice_works_at_acme(db, name="work")
    alice_works_at_acme(db, name="main")

    under = api.get("/v1/gb/datasets/work/graph?user_id=u1&include_expired=true")
    ours = api.get("/v1/gb/graph?user_id=u1&dataset=work&include_expired=true")

    assert under.status == ours.status == 200, under.json
    assert under.json == ours.json
    assert {e["name"] for e in under.json["entities"]} == {"Acme", "Alice"}


def test_the_graph_under_the_dataset_pages_and_speaks_graphml_as_ours(api, db):
    alice_works_at_acme(db, name="work")

    page = api.get("/v1/gb/datasets/work/graph?user_id=u1&limit=1")
    graphml = api.get("/v1/gb/datasets/work/graph?user_id=u1&format=graphml")

    assert page.status == 200 and len(page.json["entities"]) == 1 and page.json["next_cursor"]
    assert graphml.status == 200 and graphml.raw.startswith(b"<?xml")


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/v1/gb/datasets/nowhere/graph?user_id=u1", 404, "nowhere"),
        ("/v1/gb/datasets/work/graph?user_id=u2", 404, "work"),  # another user's dataset
        ("/v1/gb/datasets/work/graph", 400, "user_id"),
        ("/v1/gb/datasets/b%20d/graph?user_id=u1", 400, "dataset"),
        ("/v1/gb/datasets/work/graph?user_id=u1&format=csv", 400, "format"),
    ],
)
def test_a_bad_graph_request_under_the_dataset_is_a_4xx(api, db, path, status, says):
    alice_works_at_acme(db, name="work")

    reply = api.get(path)

    assert reply.status == status, reply.json
    assert says in reply.json["error"]


# --- DELETE /v1/gb/datasets/{name} --------------------------------------------------------------


def test_deleting_a_dataset_answers_204_without_a_body(api, db):
    alice_works_at_acme(db, name="work")

    reply = api.delete("/v1/gb/datasets/work?user_id=u1")

    assert reply.status == 204 and reply.raw == b""
    assert api.get("/v1/gb/datasets/work/graph?user_id=u1").status == 404
    again = api.delete("/v1/gb/datasets/work?user_id=u1")
    assert again.status == 404 and "work" in again.json["error"]


def test_another_users_dataset_is_not_deleted(api, db):
    alice_works_at_acme(db, name="work")
    edges = count_rows(db, "gb_edges")

    reply = api.delete("/v1/gb/datasets/work?user_id=u2")

    assert reply.status == 404
    assert count_rows(db, "gb_edges") == edges > 0
