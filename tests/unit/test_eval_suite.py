"""The suite file: JSON Lines of remembers and questions, refused with the line that is wrong."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from gligabao.evals.suite import QuestionItem, RememberItem, SuiteError, dump_suite, load_suite, parse_suite

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_SUITE = ROOT / "evals" / "suites" / "gligabao.jsonl"

REMEMBER = {
    "type": "remember",
    "id": "alice-1",
    "dataset": "alice",
    "session_id": "a",
    "reference_time": "2023-05-01T09:00:00Z",
    "text": "Alice works at Acme.",
}
QUESTION = {
    "type": "question",
    "id": "q-work",
    "dataset": "alice",
    "category": "temporal",
    "question": "Where does Alice work?",
    "answer": "Acme",
}


def lines(*items: dict) -> list[str]:
    return [json.dumps(item) for item in items]


def test_a_suite_is_remembers_then_questions_read_line_by_line():
    suite = parse_suite([*lines(REMEMBER), "", *lines(QUESTION)])

    assert [type(item) for item in suite.items] == [RememberItem, QuestionItem]
    assert suite.remembers_by_dataset() == {"alice": [suite.items[0]]}
    assert suite.questions[0].category == "temporal"


def test_what_is_sent_is_the_api_request_without_the_suites_own_fields():
    suite = parse_suite(
        lines({**REMEMBER, "meta": {"source": "x"}}, {**QUESTION, "as_of": "2024-01-01T00:00:00Z"})
    )

    assert suite.remembers[0].body() == {
        "dataset": "alice",
        "text": "Alice works at Acme.",
        "session_id": "a",
        "reference_time": "2023-05-01T09:00:00Z",
    }
    assert suite.questions[0].body() == {
        "dataset": "alice",
        "query": "Where does Alice work?",
        "as_of": "2024-01-01T00:00:00Z",
    }


def test_a_numeric_answer_is_read_as_text():
    suite = parse_suite(lines({**QUESTION, "answer": 2022}))

    assert suite.questions[0].answer == "2022"


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ({**QUESTION, "answer": None}, 'needs an "answer"'),
        ({**QUESTION, "answr": "Acme"}, "answr: Extra inputs are not permitted"),
        ({**QUESTION, "type": "ask"}, "does not match any of the expected tags"),
        ({**REMEMBER, "dataset": "no spaces"}, "dataset must be 1-64 characters"),
        ({**REMEMBER, "reference_time": "2023-05-01 09:00"}, "reference_time"),
        ({**REMEMBER, "text": ""}, "text"),
    ],
)
def test_a_wrong_item_is_refused_naming_its_line_and_field(item, problem):
    with pytest.raises(SuiteError) as refused:
        parse_suite(lines(REMEMBER, item, QUESTION), "s.jsonl")

    assert str(refused.value).startswith("s.jsonl:2: ")
    assert problem in str(refused.value)


def test_an_unanswerable_question_needs_no_answer():
    suite = parse_suite(lines({**QUESTION, "answer": None, "unanswerable": True}))

    assert suite.questions[0].unanswerable


def test_a_line_that_is_not_json_and_an_id_used_twice_are_refused():
    with pytest.raises(SuiteError, match=r"suite:1: not JSON"):
        parse_suite(["{"])
    with pytest.raises(SuiteError, match=r"suite:2: the id 'q-work' is used twice"):
        parse_suite(lines(QUESTION, QUESTION))


def test_a_suite_without_a_question_is_refused():
    with pytest.raises(SuiteError, match="no question"):
        parse_suite(lines(REMEMBER))


def test_a_dumped_suite_reads_back_the_same(tmp_path):
    suite = parse_suite(lines(REMEMBER, {**QUESTION, "meta": {"n": 1}}))
    dump_suite(suite.items, tmp_path / "copy.jsonl")

    assert load_suite(tmp_path / "copy.jsonl") == suite
    assert json.loads((tmp_path / "copy.jsonl").read_text().splitlines()[0])["type"] == "remember"


def test_the_shipped_suite_has_60_questions_of_every_kind_each_asked_of_remembered_texts():
    suite = load_suite(SHIPPED_SUITE)
    categories = Counter(question.category for question in suite.questions)

    assert len(suite.questions) >= 60
    assert set(categories) == {
        "temporal",
        "multi-session",
        "contradiction",
        "paraphrase",
        "multi-hop",
        "paraphrased-role",
        "unanswerable",
    }
    assert all(count >= 5 for count in categories.values()), categories
    assert categories["multi-hop"] >= 20  # chains of 2 and 3 facts among namesakes too
    # the shapes of the benchmark's family and business worlds, in their own wording
    assert {"household", "firm"} <= {q.dataset for q in suite.questions if q.category == "paraphrased-role"}
    assert {q.dataset for q in suite.questions} <= set(suite.remembers_by_dataset())
    assert all(q.unanswerable == (q.category == "unanswerable") for q in suite.questions)
    assert all(r.reference_time and r.session_id for r in suite.remembers)
