"""The eval run with an in-process API and judge: every call an eval call, remembers in order before
the questions, failures counted, an interrupted run resumed without redoing what finished."""

from __future__ import annotations

import json
import threading

import pytest

from gligabao.evals.api import CallFailed
from gligabao.evals.judge import JudgeFailed, Judgement
from gligabao.evals.report import build_report
from gligabao.evals.runner import run_suite
from gligabao.evals.state import RESULTS_FILE, RunState, StateError
from gligabao.evals.suite import parse_suite

ITEMS = [
    {"type": "remember", "id": "a1", "dataset": "alice", "text": "Alice works at Acme.", "session_id": "a"},
    {"type": "remember", "id": "a2", "dataset": "alice", "text": "Alice joined Globex.", "session_id": "b"},
    {"type": "remember", "id": "b1", "dataset": "bob", "text": "Bob runs marathons."},
    {
        "type": "question",
        "id": "q1",
        "dataset": "alice",
        "category": "temporal",
        "question": "Work?",
        "answer": "Globex",
    },
    {
        "type": "question",
        "id": "q2",
        "dataset": "alice",
        "category": "temporal",
        "question": "Before?",
        "answer": "Acme",
    },
    {
        "type": "question",
        "id": "q3",
        "dataset": "bob",
        "category": "multi-hop",
        "question": "Sport?",
        "answer": "running",
    },
    {
        "type": "question",
        "id": "q4",
        "dataset": "bob",
        "category": "unanswerable",
        "question": "Wife?",
        "unanswerable": True,
    },
]


def trajectory(prompt: int, completion: int, cost: float) -> dict:
    return {
        "schema_version": "ATIF-v1.8",
        "trajectory_id": f"t-{prompt}",
        "agent": {"name": "gligabao", "version": "0.1.0"},
        "steps": [{"step_id": 1, "source": "user", "message": ""}],
        "final_metrics": {
            "total_prompt_tokens": prompt,
            "total_completion_tokens": completion,
            "total_cost_usd": cost,
        },
    }


class InProcessApi:
    def __init__(self, answers: dict[str, str], failing: set[str] = frozenset()):
        self.answers = answers
        self.failing = failing
        self.calls: list[tuple[str, dict]] = []
        self.lock = threading.Lock()

    def remember(self, body, *, idempotency_key):
        with self.lock:
            self.calls.append(("remember", body))
        if body["text"] in self.failing:
            raise CallFailed(502, "LLM call of stage extract failed")
        return {"entities": [], "trajectory": trajectory(100, 10, 0.001)}

    def query(self, body):
        with self.lock:
            self.calls.append(("query", body))
        if body["query"] in self.failing:
            raise CallFailed(502, "LLM call of stage query failed")
        return {"answer": self.answers[body["query"]], "trajectory": trajectory(200, 20, 0.002)}


class ScriptedJudge:
    def __init__(self, verdicts: dict[str, bool], interrupt_at: int | None = None):
        self.verdicts = verdicts
        self.interrupt_at = interrupt_at
        self.calls: list[str] = []

    def __call__(self, question, expected, answer, *, unanswerable):
        self.calls.append(question)
        if self.interrupt_at is not None and len(self.calls) == self.interrupt_at:
            raise KeyboardInterrupt
        verdict = self.verdicts[question]
        if verdict is None:
            raise JudgeFailed("the judge's provider answered 529")
        return Judgement(verdict, "scripted", "judge-model", 50, 5, 0.0005)


ANSWERS = {
    "Work?": "She works at Globex.",
    "Before?": "Globex",
    "Sport?": "Running.",
    "Wife?": "I don't know.",
}


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "suite.jsonl"
    path.write_text("\n".join(json.dumps(item) for item in ITEMS) + "\n")
    return path


def run(suite_file, out, api, judge, **options):
    suite = parse_suite(suite_file.read_text().splitlines())
    state = RunState.open(out, suite_file, "http://api", **options)
    run_suite(suite, api, judge, state, concurrency=2)
    return build_report(suite, state.run, state.results)


def test_every_call_is_an_eval_call_of_the_runs_user_and_remembers_come_first_in_order(suite_file, tmp_path):
    api = InProcessApi(ANSWERS)
    run(suite_file, tmp_path / "out", api, ScriptedJudge(dict.fromkeys(ANSWERS, True)))

    users = {body["user_id"] for _, body in api.calls}
    assert len(users) == 1 and users.pop().startswith("eval-")
    assert all(body["eval"] is True for _, body in api.calls)
    kinds = [kind for kind, _ in api.calls]
    assert kinds == ["remember"] * 3 + ["query"] * 4
    alice = [body["text"] for kind, body in api.calls if kind == "remember" and body["dataset"] == "alice"]
    assert alice == ["Alice works at Acme.", "Alice joined Globex."]


def test_the_reports_accuracy_tokens_and_cost_follow_from_the_verdicts_and_trajectories(suite_file, tmp_path):
    verdicts = {"Work?": True, "Before?": False, "Sport?": True, "Wife?": True}
    report = run(suite_file, tmp_path / "out", InProcessApi(ANSWERS), ScriptedJudge(verdicts))

    accuracy = report["accuracy"]
    # exact: "Running." and the decline; contains: those and "She works at Globex."
    assert accuracy["overall"] == {
        "questions": 4,
        "failed": 0,
        "correct": 3,
        "accuracy": 0.75,
        "exact": 0.5,
        "contains": 0.75,
    }
    assert (accuracy["temporal"]["accuracy"], accuracy["multi-hop"]["accuracy"]) == (0.5, 1.0)
    assert accuracy["unanswerable"]["contains"] == 1.0
    usage = report["usage"]
    assert usage["remember"] == {"calls": 3, "prompt_tokens": 300, "completion_tokens": 30, "cost_usd": 0.003}
    assert usage["query"] == {"calls": 4, "prompt_tokens": 800, "completion_tokens": 80, "cost_usd": 0.008}
    assert usage["judge"] == {"calls": 4, "prompt_tokens": 200, "completion_tokens": 20, "cost_usd": 0.002}
    assert usage["total_cost_usd"] == 0.013
    assert report["complete"] and report["latency"]["query"]["calls"] == 4


def test_a_failed_call_is_counted_as_failed_and_the_run_goes_on(suite_file, tmp_path):
    api = InProcessApi(ANSWERS, failing={"Bob runs marathons.", "Work?"})
    judge = ScriptedJudge({"Before?": True, "Sport?": True, "Wife?": None})
    report = run(suite_file, tmp_path / "out", api, judge)

    assert report["remembers"] == {"total": 3, "run": 3, "failed": 1}
    assert report["accuracy"]["overall"]["questions"] == 4
    assert report["accuracy"]["overall"]["failed"] == 2  # the 502 and the judge's failure
    assert report["accuracy"]["overall"]["correct"] == 2
    assert report["accuracy"]["temporal"]["accuracy"] == 0.5
    failures = {failure["id"]: failure for failure in report["failures"]}
    assert set(failures) == {"b1", "q1", "q4"}
    assert failures["q1"]["status"] == 502
    assert failures["q4"]["error"].startswith("judge: ")
    assert report["latency"]["query"]["calls"] == 3  # the three queries that answered


def test_an_interrupted_run_resumes_without_redoing_finished_items(suite_file, tmp_path):
    out = tmp_path / "out"
    first_api = InProcessApi(ANSWERS)
    first_judge = ScriptedJudge(dict.fromkeys(ANSWERS, True), interrupt_at=2)
    suite = parse_suite(suite_file.read_text().splitlines())
    state = RunState.open(out, suite_file, "http://api")
    with pytest.raises(KeyboardInterrupt):
        run_suite(suite, first_api, first_judge, state, concurrency=1)
    finished = set(RunState.open(out, suite_file, "http://api").results)
    assert finished == {"a1", "a2", "b1", "q1"}

    second_api = InProcessApi(ANSWERS)
    report = run(suite_file, out, second_api, ScriptedJudge(dict.fromkeys(ANSWERS, True)))

    assert [body.get("query") for _, body in second_api.calls] == ["Before?", "Sport?", "Wife?"]
    assert {body["user_id"] for _, body in first_api.calls + second_api.calls} == {state.user_id}
    assert report["complete"] and report["accuracy"]["overall"]["correct"] == 4


def test_failed_items_are_run_again_only_when_asked(suite_file, tmp_path):
    out = tmp_path / "out"
    run(
        suite_file, out, InProcessApi(ANSWERS, failing={"Work?"}), ScriptedJudge(dict.fromkeys(ANSWERS, True))
    )

    again = InProcessApi(ANSWERS)
    run(suite_file, out, again, ScriptedJudge(dict.fromkeys(ANSWERS, True)))
    assert again.calls == []
    report = run(suite_file, out, again, ScriptedJudge(dict.fromkeys(ANSWERS, True)), retry_failed=True)
    assert [body["query"] for _, body in again.calls] == ["Work?"]
    assert report["accuracy"]["overall"]["correct"] == 4


def test_a_line_cut_by_a_crash_is_run_again(suite_file, tmp_path):
    out = tmp_path / "out"
    run(suite_file, out, InProcessApi(ANSWERS), ScriptedJudge(dict.fromkeys(ANSWERS, True)))
    results = out / RESULTS_FILE
    last = json.loads(results.read_text().splitlines()[-1])["id"]
    results.write_text(results.read_text()[:-20])

    kept = set(RunState.open(out, suite_file, "http://api").results)
    assert kept == {item["id"] for item in ITEMS} - {last}


def test_an_out_folder_of_another_suite_is_not_resumed(suite_file, tmp_path):
    out = tmp_path / "out"
    RunState.open(out, suite_file, "http://api")
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(ITEMS[3]) + "\n")

    with pytest.raises(StateError, match="holds a run of another suite"):
        RunState.open(out, other, "http://api")


def test_every_trajectory_is_kept_in_a_file_of_its_item(suite_file, tmp_path):
    out = tmp_path / "out"
    run(suite_file, out, InProcessApi(ANSWERS), ScriptedJudge(dict.fromkeys(ANSWERS, True)))

    files = sorted(path.name for path in (out / "trajectories").iterdir())
    assert len(files) == 7 and all(name.endswith(".json") for name in files)
    results = [json.loads(line) for line in (out / RESULTS_FILE).read_text().splitlines()]
    for result in results:
        saved = json.loads((out / result["trajectory_file"]).read_text())
        assert saved["final_metrics"]["total_prompt_tokens"] == result["prompt_tokens"]


def test_against_a_jwt_api_the_run_names_no_user_and_keeps_to_datasets_of_its_own(suite_file, tmp_path):
    out = tmp_path / "out"
    api = InProcessApi(ANSWERS)
    suite = parse_suite(suite_file.read_text().splitlines())
    state = RunState.open(out, suite_file, "http://api", user_per_run=False)
    run_suite(suite, api, ScriptedJudge(dict.fromkeys(ANSWERS, True)), state, concurrency=2)

    prefix = state.run["dataset_prefix"]
    assert prefix.startswith("eval-") and state.user_id is None
    assert all("user_id" not in body for _, body in api.calls)
    assert {body["dataset"] for _, body in api.calls} == {f"{prefix}alice", f"{prefix}bob"}
    assert RunState.open(out, suite_file, "http://api").run["dataset_prefix"] == prefix
