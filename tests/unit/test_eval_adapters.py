"""LoCoMo and LongMemEval files, in their published formats, converted into suites."""

from __future__ import annotations

import json

import pytest

from gligabao.evals.adapters import MAX_TEXT_CHARS
from gligabao.evals.adapters.locomo import convert_locomo, parse_locomo_time
from gligabao.evals.adapters.longmemeval import convert_longmemeval, parse_longmemeval_time
from gligabao.evals.cli import main
from gligabao.evals.suite import QuestionItem, RememberItem, SuiteError, load_suite

LOCOMO = [
    {
        "sample_id": "conv-26",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {
                    "speaker": "Caroline",
                    "dia_id": "D1:1",
                    "text": "I went to a LGBTQ support group yesterday.",
                },
                {
                    "speaker": "Melanie",
                    "dia_id": "D1:2",
                    "text": "Look what I painted!",
                    "img_url": ["https://example.invalid/1.jpg"],
                    "blip_caption": "a painting of a sunrise",
                },
            ],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [{"speaker": "Melanie", "dia_id": "D2:1", "text": "We went camping last week."}],
        },
        "qa": [
            {
                "question": "When did Caroline go to the LGBTQ support group?",
                "answer": "7 May 2023",
                "evidence": ["D1:1"],
                "category": 2,
            },
            {
                "question": "When did Melanie paint a sunrise?",
                "answer": 2023,
                "evidence": ["D1:2"],
                "category": 4,
            },
            {
                "question": "What did Caroline paint?",
                "adversarial_answer": "a sunrise",
                "evidence": ["D1:2"],
                "category": 5,
            },
        ],
        "event_summary": {},
        "observation": {},
        "session_summary": {},
    }
]


def haystack_instance(question_id: str, **overrides) -> dict:
    return {
        "question_id": question_id,
        "question_type": "knowledge-update",
        "question": "Where do I live now?",
        "answer": "Munich",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["sharegpt_1", "answer_2"],
        # not in order of time, as in longmemeval_oracle.json
        "haystack_dates": ["2023/05/22 (Mon) 10:00", "2023/05/20 (Sat) 02:21"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "I moved to Munich.", "has_answer": True},
                {"role": "assistant", "content": "Nice!"},
            ],
            [{"role": "user", "content": "I live in Berlin."}, {"role": "assistant", "content": ""}],
        ],
        "answer_session_ids": ["sharegpt_1"],
        **overrides,
    }


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_locomo_and_longmemeval_dates_become_rfc3339_times():
    assert parse_locomo_time("1:56 pm on 8 May, 2023") == "2023-05-08T13:56:00Z"
    assert parse_locomo_time("12:09 am on 13 September, 2023") == "2023-09-13T00:09:00Z"
    assert parse_longmemeval_time("2023/05/20 (Sat) 02:21") == "2023-05-20T02:21:00Z"
    assert parse_longmemeval_time("2023/05/30") == "2023-05-30T00:00:00Z"


def test_a_locomo_conversation_is_a_dataset_with_a_remember_per_session_at_its_date(tmp_path):
    items = convert_locomo(write(tmp_path, "locomo10.json", LOCOMO))
    remembers = [item for item in items if isinstance(item, RememberItem)]

    assert [(r.id, r.dataset, r.session_id, r.reference_time) for r in remembers] == [
        ("conv-26/session_1", "conv-26", "session_1", "2023-05-08T13:56:00Z"),
        ("conv-26/session_2", "conv-26", "session_2", "2023-06-27T10:37:00Z"),
    ]
    assert remembers[0].text == (
        "Caroline: I went to a LGBTQ support group yesterday.\n"
        "Melanie: Look what I painted! [shares a photo: a painting of a sunrise]"
    )


def test_locomo_categories_are_named_and_an_adversarial_question_must_be_declined(tmp_path):
    questions = [
        item for item in convert_locomo(write(tmp_path, "l.json", LOCOMO)) if isinstance(item, QuestionItem)
    ]

    assert [(q.category, q.answer, q.unanswerable) for q in questions] == [
        ("temporal", "7 May 2023", False),
        ("single-hop", "2023", False),
        ("adversarial", None, True),
    ]
    assert questions[2].meta["adversarial_answer"] == "a sunrise"
    assert questions[0].meta["locomo_category"] == 2


def test_a_longmemeval_question_is_a_dataset_of_its_haystack_in_order_of_time_asked_at_its_date(tmp_path):
    items = convert_longmemeval(write(tmp_path, "longmemeval_oracle.json", [haystack_instance("e47becba")]))

    assert [(i.type, i.session_id, getattr(i, "reference_time", None)) for i in items] == [
        ("remember", "answer_2", "2023-05-20T02:21:00Z"),
        ("remember", "sharegpt_1", "2023-05-22T10:00:00Z"),
        ("question", None, None),
    ]
    assert items[0].text == "user: I live in Berlin."  # the empty turn is left out
    assert items[1].meta["evidence"] is True
    question = items[2]
    assert (question.dataset, question.category, question.answer) == (
        "lme-e47becba",
        "knowledge-update",
        "Munich",
    )
    assert question.as_of == "2023-05-30T23:40:00Z" and not question.unanswerable


def test_a_longmemeval_abstention_question_is_unanswerable(tmp_path):
    abstention = haystack_instance("gpt4_2655b836_abs", answer="You did not mention a dog.")
    [question] = [
        i for i in convert_longmemeval(write(tmp_path, "s.json", [abstention])) if i.type == "question"
    ]

    assert (question.category, question.unanswerable) == ("abstention", True)
    assert question.meta["question_type"] == "knowledge-update"


def test_a_session_longer_than_a_synchronous_remember_is_sent_in_parts_cut_between_turns(tmp_path):
    turn = "x" * 6000
    long_session = [{"role": "user", "content": turn} for _ in range(7)]
    instance = haystack_instance(
        "q1",
        haystack_sessions=[long_session, []],
        haystack_session_ids=["s1", "s2"],
        haystack_dates=["2023/05/01 (Mon) 10:00", "2023/05/02 (Tue) 10:00"],
    )
    remembers = [
        i for i in convert_longmemeval(write(tmp_path, "m.json", [instance])) if i.type == "remember"
    ]

    assert [r.id for r in remembers] == ["lme-q1/001/part1", "lme-q1/001/part2", "lme-q1/001/part3"]
    assert all(len(r.text) <= MAX_TEXT_CHARS for r in remembers)
    assert sum(r.text.count("user: ") for r in remembers) == 7
    assert {r.session_id for r in remembers} == {"s1"}


def test_the_convert_command_writes_a_suite_the_run_reads(tmp_path, capsys):
    source = write(
        tmp_path,
        "longmemeval_s.json",
        [haystack_instance("a"), haystack_instance("b"), haystack_instance("c")],
    )

    assert main(["convert", "longmemeval", str(source), str(tmp_path / "lme.jsonl"), "--limit", "2"]) == 0

    suite = load_suite(tmp_path / "lme.jsonl")
    assert [q.dataset for q in suite.questions] == ["lme-a", "lme-b"]
    assert "4 remembers and 2 questions in 2 datasets" in capsys.readouterr().out


def test_a_file_of_another_shape_is_refused_naming_the_problem(tmp_path, capsys):
    with pytest.raises(SuiteError, match="not a LoCoMo file"):
        convert_locomo(write(tmp_path, "x.json", {"qa": []}))
    broken = write(
        tmp_path, "y.json", [{"question_id": "q", "haystack_sessions": [[]], "haystack_dates": []}]
    )
    assert main(["convert", "longmemeval", str(broken), str(tmp_path / "y.jsonl")]) == 2
    assert "question 0" in capsys.readouterr().err
