"""Eval calls over HTTP (SPEC section 10): `"eval": true` on query and remember records the call's
ATIF v1.8 trajectory, returns it and stores it; GET /v1/gb/trajectories[/{id}] read it back with
the isolation of every other read."""

from __future__ import annotations

import json
import time
from urllib.parse import quote

import atif
import pytest
from conftest import count_rows, reconfigure
from fakes.anthropic_server import Reply
from image_files import b64, image_body, image_file
from remember_helpers import prompt_of, remember, rule_based_model

from gligabao.limits import Limits

WHERE_QUESTION = "Where does Alice work?"


def reader(body: dict) -> dict:
    """The rule-based model, and for the query stage an answer citing what it was given."""
    prompt = prompt_of(body)
    if "<graph>" not in prompt:
        return rule_based_model(body)
    return {"answer": "Alice works at Acme.", "entities": [], "edges": [], "passages": []}


@pytest.fixture
def eval_models(fake_anthropic, fake_openai):
    fake_anthropic.responder = reader
    return fake_anthropic, fake_openai


def url(path: str, **params) -> str:
    return path + "?" + "&".join(f"{k}={quote(str(v))}" for k, v in params.items())


def query(api, **fields):
    return api.post("/v1/gb/query", {"user_id": "u1", "query": WHERE_QUESTION, **fields})


def steps_named(trajectory: dict, source: str) -> list[dict]:
    return [step for step in trajectory["steps"] if step["source"] == source]


def stage_names(trajectory: dict) -> list[str]:
    return [step["extra"]["stage"] for step in steps_named(trajectory, "system")]


# --- query ----------------------------------------------------------------------------------------


def test_an_eval_query_returns_a_valid_atif_trajectory_of_its_stages_and_model_calls(api, eval_models):
    remember(api, "Alice works at Acme.")

    reply = query(api, eval=True, session_id="chat-42")

    assert reply.status == 200, reply.json
    trajectory = reply.json["trajectory"]
    atif.Trajectory.model_validate(trajectory)
    assert trajectory["schema_version"] == "ATIF-v1.8"
    assert trajectory["session_id"] == "chat-42"
    assert trajectory["agent"]["name"] == "gligabao"
    [user] = steps_named(trajectory, "user")
    assert user["step_id"] == 1 and user["message"] == WHERE_QUESTION
    assert stage_names(trajectory) == ["keyword_seeds", "search_vectors", "expand", "passages", "rank"]
    assert trajectory["extra"]["input"]["query"] == WHERE_QUESTION
    assert trajectory["extra"]["input"]["session_id"] == "chat-42"
    assert trajectory["extra"]["kind"] == "query"


def test_with_the_seeds_retrieval_the_context_is_not_ranked_and_has_no_rank_step(api, eval_models):
    reconfigure(limits=Limits(retrieval="seed"))
    remember(api, "Alice works at Acme.")

    trajectory = query(api, eval=True).json["trajectory"]

    assert stage_names(trajectory) == ["keyword_seeds", "search_vectors", "expand", "passages"]


def test_each_query_stage_reports_what_it_produced_and_the_times_that_can_be_measured(api, eval_models):
    remember(api, "Alice works at Acme.")

    trajectory = query(api, eval=True).json["trajectory"]

    stages = {step["extra"]["stage"]: step["extra"] for step in steps_named(trajectory, "system")}
    keyword = stages["keyword_seeds"]
    assert keyword["inputs"]["terms"] == ["alice", "work"]
    assert {seed["name"] for seed in keyword["outputs"]["seeds"]} == {"Alice"}
    assert keyword["duration_ms"] > 0
    assert stages["search_vectors"]["duration_ms"] > 0
    began = [step["timestamp"] for step in steps_named(trajectory, "system")]
    assert began == sorted(began)  # each stage's start, in order
    # one SQL statement does the vector search, the expansion and the passages: no time of their own
    assert stages["expand"]["duration_ms"] is None and stages["passages"]["duration_ms"] is None
    assert [(e["source"], e["relation"], e["target"]) for e in stages["expand"]["outputs"]["edges"]] + [
        (e["source"], e["relation"], e["target"])
        for e in stages["search_vectors"]["outputs"]["similar_edges"]
    ] == [("Alice", "works_at", "Acme")]


def test_every_model_call_of_a_query_is_an_agent_step_with_its_model_level_tokens_and_cost(api, eval_models):
    remember(api, "Alice works at Acme.")
    reconfigure(max_reasoning="low")

    trajectory = query(api, eval=True, reasoning={"query": "low"}).json["trajectory"]

    agents = steps_named(trajectory, "agent")
    assert [step["extra"]["stage"] for step in agents] == ["embed", "query"]
    embed, answer = agents
    assert embed["model_name"] == "text-embedding-3-small" and embed["metrics"]["prompt_tokens"] > 0
    # the price table's: text-embedding-3-small 0.02 USD per million tokens
    assert embed["metrics"]["cost_usd"] == pytest.approx(embed["metrics"]["prompt_tokens"] * 0.02 / 1e6)
    assert answer["model_name"] == "claude-haiku-5-5" and answer["reasoning_effort"] == "low"
    assert answer["llm_call_count"] == 1
    prompt, completion = answer["metrics"]["prompt_tokens"], answer["metrics"]["completion_tokens"]
    assert prompt > 0 and completion > 0
    # claude-haiku-5-5: 0.10 USD per million input tokens, 0.50 per million output (thinking included)
    assert answer["metrics"]["cost_usd"] == pytest.approx((prompt * 0.10 + completion * 0.50) / 1e6)
    # the answer is the last step
    assert trajectory["steps"][-1] == answer and answer["message"] == "Alice works at Acme."
    totals = trajectory["final_metrics"]
    assert totals["total_steps"] == len(trajectory["steps"])
    assert totals["total_prompt_tokens"] == sum(s["metrics"]["prompt_tokens"] for s in agents)
    assert totals["total_cost_usd"] == pytest.approx(sum(s["metrics"]["cost_usd"] for s in agents))


def test_an_eval_query_with_nothing_to_answer_from_ends_with_an_agent_step_without_a_model_call(
    api, eval_models
):
    remember(api, "hello there")  # the dataset exists and holds no entity

    trajectory = query(api, eval=True).json["trajectory"]

    atif.Trajectory.model_validate(trajectory)
    last = trajectory["steps"][-1]
    assert last["source"] == "agent" and last["llm_call_count"] == 0 and "metrics" not in last
    assert last["message"] == "I don't have any information in memory to answer that."


def test_a_query_without_eval_records_no_trajectory(api, db, eval_models):
    remember(api, "Alice works at Acme.")

    reply = query(api)

    assert reply.status == 200 and "trajectory" not in reply.json
    assert count_rows(db, "gb_trajectories") == 0


def test_an_eval_query_is_stored_and_read_back_by_id_as_returned(api, db, eval_models):
    remember(api, "Alice works at Acme.")
    returned = query(api, eval=True).json["trajectory"]

    read = api.get(url(f"/v1/gb/trajectories/{returned['trajectory_id']}", user_id="u1"))

    assert read.status == 200, read.json
    assert read.json["trajectory"] == returned
    assert (read.json["kind"], read.json["dataset"], read.json["artifact_id"]) == ("query", "main", None)
    # without a session, the trajectory is its own session
    assert returned["session_id"] == returned["trajectory_id"] == str(read.json["id"])
    atif.Trajectory.model_validate(read.json["trajectory"])


def test_eval_must_be_true_or_false(api, eval_models):
    reply = query(api, eval="yes")

    assert reply.status == 400
    assert "eval" in reply.json["error"]


# --- remember -----------------------------------------------------------------------------------


class SteppingClock:
    """memory/trajectory.py's `time`: the real perf_counter, each reading 0.25 s later again than
    the one before it, as if each stage took that much more."""

    def __init__(self):
        self.readings = 0

    def perf_counter(self) -> float:
        self.readings += 1
        return time.perf_counter() + 0.25 * self.readings


def test_an_eval_remember_returns_a_valid_atif_trajectory_of_its_five_stages(
    api, db, eval_models, monkeypatch
):
    monkeypatch.setattr("gligabao.memory.trajectory.time", SteppingClock())
    reply = api.post(
        "/v1/gb/remember",
        {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "a", "eval": True},
    )

    assert reply.status == 200, reply.json
    trajectory = reply.json["trajectory"]
    atif.Trajectory.model_validate(trajectory)
    assert stage_names(trajectory) == ["chunking", "extraction", "embedding", "resolution", "storage"]
    assert trajectory["session_id"] == "a"
    assert trajectory["extra"]["input"]["text"] == "Alice works at Acme."
    assert trajectory["extra"]["artifact_id"] == reply.json["artifact_id"]
    stages = {step["extra"]["stage"]: step["extra"] for step in steps_named(trajectory, "system")}
    assert [(f["source"], f["relation"], f["target"]) for f in stages["extraction"]["outputs"]["facts"]] == [
        ("Alice", "works_at", "Acme")
    ]
    assert stages["storage"]["outputs"]["artifact_id"] == reply.json["artifact_id"]
    # each stage measured apart, from the end of the one before: its clock's step at least, and
    # together no more than the whole call
    durations = [stage["duration_ms"] for stage in stages.values()]
    assert len(durations) == 5 and all(duration >= 250 for duration in durations)
    assert sum(durations) <= trajectory["final_metrics"]["extra"]["duration_ms"] + 0.01
    assert [s["extra"]["stage"] for s in steps_named(trajectory, "agent")[:-1]] == ["extract", "embed"]
    assert trajectory["steps"][-1]["llm_call_count"] == 0  # what was stored: no model call of its own
    assert count_rows(db, "gb_trajectories") == 1


def test_a_resolve_call_follows_the_resolution_step(api, eval_models):
    remember(api, "Alice lives in Paris.")

    trajectory = api.post(
        "/v1/gb/remember", {"user_id": "u1", "text": "Alice lives in Berlin.", "eval": True}
    ).json["trajectory"]

    sources = [(s["source"], s["extra"]["stage"]) for s in trajectory["steps"][1:]]
    resolution = sources.index(("system", "resolution"))
    assert sources[resolution + 1] == ("agent", "resolve")
    storage = next(s for s in steps_named(trajectory, "system") if s["extra"]["stage"] == "storage")
    [superseded] = storage["extra"]["outputs"]["superseded"]
    assert superseded > 0


def test_a_remember_that_fails_stores_no_trajectory(api, db, fake_anthropic, fake_openai):
    fake_anthropic.queue(Reply.error(400))

    reply = api.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme.", "eval": True})

    assert reply.status == 502
    assert count_rows(db, "gb_trajectories") == 0


def test_forgetting_a_text_forgets_the_trajectory_that_holds_it(api, db, eval_models):
    forgotten = remember(api, "Alice works at Acme.", eval=True)
    kept = remember(api, "Bob works at Initech.", eval=True)
    query(api, eval=True)

    reply = api.delete(url(f"/v1/gb/artifacts/{forgotten['artifact_id']}", user_id="u1"))

    assert reply.status == 200, reply.json
    gone = api.get(url(f"/v1/gb/trajectories/{forgotten['trajectory']['trajectory_id']}", user_id="u1"))
    assert gone.status == 404
    left = api.get(url("/v1/gb/trajectories", user_id="u1")).json["trajectories"]
    assert [(t["kind"], t["artifact_id"]) for t in left] == [
        ("remember", kept["artifact_id"]),
        ("query", None),
    ]


def test_an_eval_image_remember_records_its_vision_call_and_never_the_images_bytes(api, eval_models):
    data = image_file("image/png")

    reply = api.post("/v1/gb/remember", image_body(data, caption="Alice works at Acme.", eval=True))

    assert reply.status == 200, reply.json
    trajectory = reply.json["trajectory"]
    atif.Trajectory.model_validate(trajectory)
    assert stage_names(trajectory) == ["extraction", "embedding", "resolution", "storage"]
    assert [s["extra"]["stage"] for s in steps_named(trajectory, "agent")[:-1]] == ["image", "embed"]
    assert trajectory["extra"]["input"]["data"] == {"bytes": len(data)}
    assert b64(data) not in json.dumps(trajectory)


def test_an_eval_remember_of_a_repeated_image_records_its_lookup_and_no_model_call(api, db, eval_models):
    data = image_file("image/png")
    api.post("/v1/gb/remember", image_body(data, caption="Alice works at Acme."))

    again = api.post("/v1/gb/remember", image_body(data, eval=True))

    assert again.status == 200 and again.json["repeated"] is True
    trajectory = again.json["trajectory"]
    atif.Trajectory.model_validate(trajectory)
    assert stage_names(trajectory) == ["lookup"]
    assert trajectory["final_metrics"]["total_cost_usd"] == 0
    assert count_rows(db, "gb_trajectories") == 1


# --- GET /v1/gb/trajectories --------------------------------------------------------------------


def test_the_list_by_session_pages_the_sessions_trajectories_oldest_first(api, eval_models):
    remember(api, "Alice works at Acme.", session_id="a", eval=True)
    first = query(api, eval=True, session_id="a").json["trajectory"]
    second = query(api, eval=True, session_id="a").json["trajectory"]
    query(api, eval=True, session_id="b")
    query(api, session_id="a")  # no eval: no trajectory

    page = api.get(url("/v1/gb/trajectories", user_id="u1", session_id="a", limit=2)).json
    rest = api.get(url("/v1/gb/trajectories", user_id="u1", session_id="a", cursor=page["next_cursor"])).json

    listed = page["trajectories"] + rest["trajectories"]
    assert [t["kind"] for t in listed] == ["remember", "query", "query"]
    assert [str(t["id"]) for t in listed[1:]] == [first["trajectory_id"], second["trajectory_id"]]
    assert rest["next_cursor"] is None
    assert listed[1]["final_metrics"]["total_steps"] == listed[1]["steps"] == len(first["steps"])
    queries = api.get(url("/v1/gb/trajectories", user_id="u1", kind="query")).json["trajectories"]
    assert len(queries) == 3


def test_the_list_finds_a_remember_by_its_artifact(api, eval_models):
    stored = remember(api, "Alice works at Acme.", eval=True)
    remember(api, "Bob works at Initech.", eval=True)

    listed = api.get(url("/v1/gb/trajectories", user_id="u1", artifact_id=stored["artifact_id"])).json

    assert [t["id"] for t in listed["trajectories"]] == [int(stored["trajectory"]["trajectory_id"])]


def test_another_users_trajectory_is_a_404_and_never_listed(api, eval_models):
    remember(api, "Alice works at Acme.", session_id="a")
    mine = query(api, eval=True, session_id="a").json["trajectory"]
    api.post("/v1/gb/remember", {"user_id": "u2", "text": "Bob works at Initech."})

    theirs = api.get(url(f"/v1/gb/trajectories/{mine['trajectory_id']}", user_id="u2"))
    their_list = api.get(url("/v1/gb/trajectories", user_id="u2", session_id="a"))

    assert theirs.status == 404 and theirs.json == {"error": f"trajectory {mine['trajectory_id']} not found"}
    assert their_list.status == 200 and their_list.json["trajectories"] == []


@pytest.mark.parametrize(
    "path",
    [
        "/v1/gb/trajectories/0?user_id=u1",
        "/v1/gb/trajectories/abc?user_id=u1",
        "/v1/gb/trajectories/99999999999999999999?user_id=u1",
        "/v1/gb/trajectories/1",
        "/v1/gb/trajectories?user_id=u1&kind=other",
        "/v1/gb/trajectories?user_id=u1&limit=0",
        "/v1/gb/trajectories?user_id=u1&limit=100000",
        "/v1/gb/trajectories?user_id=u1&cursor=not-a-cursor",
        "/v1/gb/trajectories?user_id=u1&artifact_id=-1",
        "/v1/gb/trajectories?user_id=u1&dataset=bad%20name",
        "/v1/gb/trajectories?user_id=%20u1",
        "/v1/gb/trajectories",
    ],
)
def test_bad_input_is_a_400_with_an_error(api, path):
    reply = api.get(path)

    assert reply.status == 400, (path, reply.status, reply.raw)
    assert set(reply.json) == {"error"}


def test_an_unknown_trajectory_or_dataset_is_a_404(api, eval_models):
    remember(api, "Alice works at Acme.")

    unknown = api.get(url("/v1/gb/trajectories/12345", user_id="u1"))
    no_dataset = api.get(url("/v1/gb/trajectories", user_id="u1", dataset="other"))

    assert (unknown.status, no_dataset.status) == (404, 404)


def test_only_get_is_served(api):
    reply = api.post("/v1/gb/trajectories?user_id=u1", {})

    assert reply.status == 405
    assert {k.lower(): v for k, v in reply.headers.items()}["allow"] == "GET"
