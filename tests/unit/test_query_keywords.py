"""The keywords of query (seeds/query.md, "How it works", step 1): the terms of the question
and the score of an entity's name and description."""

from __future__ import annotations

from query_helpers import keyword_score

from gligabao.memory.retrieval import query_terms


def test_terms_are_lowercased_without_short_terms_stopwords_or_duplicates_and_at_most_12():
    assert query_terms("Where does ALICE work? Alice, and a B at Acme!") == ["alice", "work", "acme"]
    many = " ".join(f"word{i}" for i in range(20))
    assert query_terms(many) == [f"word{i}" for i in range(12)]
    assert query_terms("What is it?") == []


def test_keyword_score_is_5_for_the_whole_name_3_per_term_in_the_name_1_per_term_in_the_description():
    terms = query_terms("What happened in New York?")
    assert terms == ["happened", "new", "york"]
    question = "what happened in new york?"
    assert keyword_score("New York", "a city", terms, question) == 5 + 3 + 3
    assert keyword_score("York", "", terms, question) == 5 + 3
    assert keyword_score("Newark", "", terms, question) == 3
    assert keyword_score("Museum", "a museum in New York", terms, question) == 1 + 1
