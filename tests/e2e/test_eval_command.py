"""`gligabao eval` end to end against the local API, the judge's verdicts scripted on the Anthropic
fake: the report's numbers follow from them, an interrupted run resumes without redoing what
finished, and an item the API fails (502) is counted as failed, not lost."""

from __future__ import annotations

import json
import re
import threading

import atif
import pytest
from conftest import ROOT, reconfigure
from fakes.anthropic_server import Reply, input_tokens, word_count
from jwt_keys import AUDIENCE, ISSUER, SigningKey, write_jwks
from remember_helpers import prompt_of, rule_based_model

from gligabao import bootstrap
from gligabao.ai.prompts.judge import JUDGE_SYSTEM
from gligabao.evals.cli import EXIT_INTERRUPTED
from gligabao.evals.cli import main as eval_main
from gligabao.evals.judge import LlmJudge
from gligabao.local.cli import main
from gligabao.local.jwt_authorizer import JwtAuthorizer
from gligabao.local.server import make_server

SUITE = [
    {"type": "remember", "id": "r1", "dataset": "alice", "session_id": "a",
     "reference_time": "2023-05-01T09:00:00Z", "text": "Alice works at Acme. Alice lives in Paris."},
    {"type": "remember", "id": "r2", "dataset": "alice", "session_id": "b",
     "reference_time": "2025-01-31T09:00:00Z", "text": "Alice moved to Lyon in 2024."},
    {"type": "question", "id": "q1", "dataset": "alice", "category": "temporal",
     "question": "Where does Alice live?", "answer": "Lyon"},
    {"type": "question", "id": "q2", "dataset": "alice", "category": "temporal",
     "question": "Where did Alice live before?", "answer": "Paris"},
    {"type": "question", "id": "q3", "dataset": "alice", "category": "paraphrase",
     "question": "Which company employs Alice?", "answer": "Acme"},
    {"type": "question", "id": "q4", "dataset": "alice", "category": "unanswerable",
     "question": "What is Alice's dog called?", "unanswerable": True},
    {"type": "question", "id": "q5", "dataset": "alice", "category": "multi-hop",
     "question": "Who manages Alice's employer?", "answer": "Bob"},
]  # fmt: skip
ANSWERS = {
    "Where does Alice live?": "Alice lives in Lyon.",
    "Where did Alice live before?": "Alice lived in Marseille.",
    "Which company employs Alice?": "Acme.",
    "What is Alice's dog called?": "I don't know: nothing about a dog is in memory.",
}
VERDICTS = {  # the judge's scripted verdicts: q2 wrong, q5 never answered (the API's 502)
    "Where does Alice live?": True,
    "Where did Alice live before?": False,
    "Which company employs Alice?": True,
    "What is Alice's dog called?": True,
}
FAILING_QUESTION = "Who manages Alice's employer?"


def question_in(prompt: str) -> str:
    return re.search(r"<question>\n(.*?)\n</question>", prompt, re.DOTALL).group(1)


def scripted_model(body: dict):
    """The judge's verdicts by question; the query's answers by question (the failing one a 500 at
    every attempt, so the API answers 502); extraction and resolution by the rule-based model."""
    prompt = prompt_of(body)
    if body.get("system") == JUDGE_SYSTEM:
        return {"correct": VERDICTS[question_in(prompt)], "reason": "scripted"}
    if "<graph>" in prompt:
        question = question_in(prompt)
        if question == FAILING_QUESTION:
            return Reply.error(500)
        return {"answer": ANSWERS[question], "entities": [], "edges": [], "passages": []}
    return rule_based_model(body)


def calls_of(fake_anthropic) -> dict[str, list[dict]]:
    """The Messages requests received, by who made them."""
    calls: dict[str, list[dict]] = {"judge": [], "query": [], "remember": []}
    for body in fake_anthropic.messages:
        prompt = prompt_of(body)
        kind = (
            "judge" if body.get("system") == JUDGE_SYSTEM else "query" if "<graph>" in prompt else "remember"
        )
        calls[kind].append(body)
    return calls


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in SUITE))
    return path


@pytest.fixture
def scripted(fake_anthropic, fake_openai):
    fake_anthropic.responder = scripted_model
    return fake_anthropic


def eval_args(suite_file, local_api_server, out) -> list[str]:
    return [str(suite_file), "--api", local_api_server, "--out", str(out), "--concurrency", "2",
            "--retries", "0", "--no-progress"]  # fmt: skip


def test_the_report_follows_from_the_judges_verdicts_and_the_trajectories(
    api, local_api_server, scripted, suite_file, tmp_path, capsys
):
    out = tmp_path / "run"

    assert main(["eval", *eval_args(suite_file, local_api_server, out)]) == 0

    report = json.loads((out / "report.json").read_text())
    accuracy = report["accuracy"]
    # exact: "Acme." and the decline; contains: those and "Alice lives in Lyon."
    assert accuracy["overall"] == {
        "questions": 5, "failed": 1, "correct": 3, "accuracy": 0.6, "exact": 0.4, "contains": 0.6,
    }  # fmt: skip
    assert {name: tally["accuracy"] for name, tally in accuracy.items()} == {
        "overall": 0.6, "multi-hop": 0.0, "paraphrase": 1.0, "temporal": 0.5, "unanswerable": 1.0,
    }  # fmt: skip
    assert report["remembers"] == {"total": 2, "run": 2, "failed": 0}
    assert [(f["id"], f["status"]) for f in report["failures"]] == [("q5", 502)]
    assert (report["latency"]["remember"]["calls"], report["latency"]["query"]["calls"]) == (2, 4)
    assert report["latency"]["query"]["p95_ms"] >= report["latency"]["query"]["p50_ms"] > 0
    for chart in ("accuracy.png", "latency.png"):
        assert (out / chart).read_bytes().startswith(b"\x89PNG")
    assert "| **overall** | 5 | 1 | 3 | 60.0% |" in (out / "report.md").read_text()
    assert "3 of 5 questions right (60.0%), 1 failed" in capsys.readouterr().out

    # Every call was an eval call: its trajectory, valid ATIF, is in the folder; the report's
    # service tokens are the trajectories' final metrics, the judge's those of its own calls.
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    saved = [
        json.loads((out / r["trajectory_file"]).read_text()) for r in results if r.get("trajectory_file")
    ]
    assert len(saved) == 6  # two remembers, four answered queries
    for trajectory in saved:
        atif.Trajectory.model_validate(trajectory)
    service = report["usage"]["service"]
    assert service["prompt_tokens"] == sum(t["final_metrics"]["total_prompt_tokens"] for t in saved) > 0
    assert service["cost_usd"] == pytest.approx(sum(t["final_metrics"]["total_cost_usd"] for t in saved))
    judged = calls_of(scripted)["judge"]
    assert len(judged) == 4
    assert report["usage"]["judge"]["prompt_tokens"] == sum(input_tokens(body) for body in judged)
    assert report["usage"]["judge"]["completion_tokens"] == 4 * word_count(
        '{"correct": true, "reason": "scripted"}'
    )


def test_an_interrupted_run_resumes_without_redoing_finished_items(
    api, local_api_server, scripted, suite_file, tmp_path
):
    out = tmp_path / "run"
    real_judge = LlmJudge(bootstrap.bundle().llm)
    judged = []

    def judge_then_interrupt(question, expected, answer, *, unanswerable):
        if len(judged) == 2:
            raise KeyboardInterrupt  # Ctrl-C during the third judgement
        judged.append(question)
        return real_judge(question, expected, answer, unanswerable=unanswerable)

    args = eval_args(suite_file, local_api_server, out)
    args[args.index("--concurrency") + 1] = "1"
    assert eval_main(args, judge=judge_then_interrupt) == EXIT_INTERRUPTED
    first = calls_of(scripted)
    assert (len(first["remember"]) > 0, len(first["judge"])) == (True, 2)
    assert not json.loads((out / "report.json").read_text())["complete"]

    scripted.reset()
    scripted.responder = scripted_model
    assert main(["eval", *args]) == 0

    second = calls_of(scripted)
    assert second["remember"] == []  # every remember had finished
    asked = [question_in(prompt_of(body)) for body in second["query"]]
    assert sorted(set(asked)) == sorted(q["question"] for q in SUITE[4:])  # q1, q2 not asked again
    assert len(second["judge"]) == 2  # q3 and q4; q5 failed at the API
    report = json.loads((out / "report.json").read_text())
    assert report["complete"] and report["accuracy"]["overall"]["correct"] == 3
    assert report["accuracy"]["overall"]["failed"] == 1


@pytest.fixture(scope="module")
def identity_provider() -> SigningKey:
    return SigningKey("eval-key-1")


@pytest.fixture(scope="module")
def jwt_api_server(database_url, identity_provider, tmp_path_factory):
    """`gligabao serve --auth jwt` with the tests' identity provider."""
    jwks = write_jwks(tmp_path_factory.mktemp("idp") / "jwks.json", identity_provider)
    authorizer = JwtAuthorizer(ISSUER, [AUDIENCE], str(jwks))
    server = make_server(ROOT / "template.yaml", "127.0.0.1", 0, quiet=True, authorizer=authorizer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_against_a_jwt_api_the_run_is_the_tokens_user_in_datasets_of_its_own(
    db, jwt_api_server, identity_provider, scripted, tmp_path
):
    # The token as every command takes it: GB_API_TOKEN (the bundle's settings), never a flag.
    reconfigure(auth_mode="jwt", mcp_api_token=identity_provider.token("u1"))
    path = tmp_path / "one.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in (SUITE[0], SUITE[4])))
    args = [str(path), "--api", jwt_api_server, "--out", str(tmp_path / "run"), "--no-progress"]

    assert main(["eval", *args]) == 0

    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert (report["user_id"], report["accuracy"]["overall"]["correct"]) == (None, 1)
    [(user, dataset)] = db.execute("SELECT user_id, name FROM gb_datasets").fetchall()
    assert (user, dataset) == ("u1", f"{report['dataset_prefix']}alice")
