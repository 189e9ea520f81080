"""The string scores beside the judge's: exact and contains on normalized text; a decline for an
unanswerable question."""

from __future__ import annotations

import pytest

from gligabao.evals.scoring import declines, normalize, string_scores


def test_normalized_text_drops_case_punctuation_articles_and_extra_spaces():
    assert normalize("  The  Acme, Corp.! ") == "acme corp"


def test_exact_is_the_expected_answer_and_contains_finds_it_in_a_sentence():
    assert string_scores("Acme Corp.", "acme corp", unanswerable=False).exact
    sentence = string_scores("Alice works at Acme Corp since 2021.", "Acme Corp", unanswerable=False)
    assert (sentence.exact, sentence.contains) == (False, True)


def test_contains_matches_whole_words_only():
    assert not string_scores("She lives in Lyonnais country.", "Lyon", unanswerable=False).contains


def test_a_wrong_answer_scores_nothing():
    scores = string_scores("Globex", "Acme", unanswerable=False)
    assert (scores.exact, scores.contains) == (False, False)


@pytest.mark.parametrize(
    "answer",
    [
        "I don't know.",
        "The memory has no information about Alice's dog.",
        "Nothing about a wife was mentioned.",
        "Bob's wife is not mentioned in the context.",
        "I don't have any information in memory to answer that.",  # the service's own decline
        "There is no mention of a teapot's price.",
        "The memory doesn't say.",
    ],
)
def test_a_decline_is_right_for_an_unanswerable_question(answer):
    assert declines(answer)
    assert string_scores(answer, None, unanswerable=True).contains


@pytest.mark.parametrize(
    "answer", ["Alice's dog is called Rex.", "Alice does not have a dog, she has a cat."]
)
def test_an_answer_that_asserts_something_is_not_a_decline(answer):
    scores = string_scores(answer, None, unanswerable=True)
    assert (scores.exact, scores.contains) == (False, False)
