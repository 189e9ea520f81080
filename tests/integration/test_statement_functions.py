"""The query's keyword and context statements run as PL/pgSQL functions (db/statement_functions.py,
migration 0038 and later ones written by `make statement-functions`): plans that each database
connection keeps, also without server-side prepared statements (through RDS Proxy). What must
hold: each function is the current statement (else a changed statement would silently run its old
text), reads its arguments as the statement read its parameters, gives the statement's rows, and
keeps row-level security as the caller's."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from conftest import ROOT, reconfigure
from psycopg.rows import dict_row
from query_helpers import basis
from remember_helpers import chain_text, use_rule_based_model
from sql_counting import capturing_statement_texts

from gligabao import bootstrap
from gligabao.db import graph_reads
from gligabao.db.connection import Database, register_vector
from gligabao.db.migrate import available_migrations
from gligabao.db.statement_functions import StatementFunction, inferred_parameter_types, result_columns
from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.query import answer
from gligabao.memory.question import Question
from gligabao.memory.remember import TextToRemember, remember_text
from gligabao.memory.retrieval import term_grams

FUNCTIONS = {function.name: function for function in graph_reads.STATEMENT_FUNCTIONS}
REGENERATE = "the statement changed: run `make statement-functions` and commit the migration it writes"


def migrations_text() -> str:
    return "".join(text for _, _, text in available_migrations())


@pytest.mark.parametrize("name", FUNCTIONS)
def test_each_statement_function_is_created_by_a_migration_as_the_statement_is_now(db, name):
    function = FUNCTIONS[name]

    created = function.create(result_columns(db, function))

    assert f"CREATE FUNCTION {function.function_name}(" in migrations_text(), REGENERATE
    assert created in migrations_text(), REGENERATE


@pytest.mark.parametrize("name", FUNCTIONS)
def test_each_function_reads_its_arguments_as_the_statement_reads_its_parameters(db, name):
    function = FUNCTIONS[name]

    assert inferred_parameter_types(db, function.statement) == dict(function.parameter_types)


def test_the_functions_name_follows_its_statement_and_its_parameters_types():
    keywords = FUNCTIONS["gb_keyword_seeds"]
    reworded = StatementFunction(keywords.name, keywords.statement + " ", keywords.parameter_types)
    retyped = StatementFunction(
        keywords.name, keywords.statement, {**keywords.parameter_types, "window": "integer"}
    )

    assert len({keywords.function_name, reworded.function_name, retyped.function_name}) == 3
    assert re.fullmatch(r"gb_keyword_seeds_[0-9a-f]{10}", keywords.function_name)


def test_types_that_do_not_name_the_statements_parameters_in_order_are_refused():
    keywords = FUNCTIONS["gb_keyword_seeds"]
    shuffled = dict(reversed(list(keywords.parameter_types.items())))

    with pytest.raises(ValueError, match="in order"):
        StatementFunction(keywords.name, keywords.statement, shuffled)
    with pytest.raises(ValueError, match="in order"):
        StatementFunction(keywords.name, keywords.statement, {**keywords.parameter_types, "extra": "text"})


def test_only_the_service_role_may_call_the_functions(db):
    for function in graph_reads.STATEMENT_FUNCTIONS:
        grantees = db.execute(
            """SELECT array_agg(coalesce(r.rolname, 'PUBLIC') ORDER BY 1)
               FROM pg_proc AS p CROSS JOIN LATERAL aclexplode(p.proacl) AS a
               LEFT JOIN pg_roles AS r ON r.oid = a.grantee
               WHERE p.proname = %s AND a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner""",
            [function.function_name],
        ).fetchone()[0]
        assert grantees == ["gligabao_app"], function.function_name


def a_small_graph(users: tuple[str, ...] = ("u1",)) -> None:
    for user in users:
        remember_text(bootstrap.bundle(), TextToRemember(user_id=user, dataset="main", text=chain_text(12)))


def keyword_parameters(user: str, question: str = "who does person3 know") -> dict:
    terms = ["person3", "know"]
    return {
        "user_id": user,
        "dataset": "main",
        "question": question,
        "prefixes": [],
        "limit": 5,
        "window": 50,
        "walk_rows": 500,
        "terms": terms,
        "grams": [gram for term in terms for gram in graph_reads_grams(term)],
        "gram_terms": [i for i, term in enumerate(terms, start=1) for _ in graph_reads_grams(term)],
        "term_count": len(terms),
        "whole_name_score": 3,
        "term_in_name_score": 2,
        "term_in_description_score": 1,
    }


def graph_reads_grams(term: str) -> list[str]:
    return term_grams(term)


def rows_as(database_url: str, user: str, query: str, params: dict) -> list[dict]:
    with psycopg.connect(database_url, row_factory=dict_row) as conn, conn.transaction():
        register_vector(conn)
        conn.execute("SELECT set_config('gligabao.user_id', %s, true)", [user])
        return conn.execute(query, params).fetchall()


def test_the_keyword_function_gives_the_statements_rows_and_another_user_nothing(
    db, database_url, fake_anthropic, fake_openai
):
    use_rule_based_model(fake_anthropic)
    a_small_graph()
    function = FUNCTIONS["gb_keyword_seeds"]
    params = keyword_parameters("u1")

    through_function = rows_as(database_url, "u1", function.call, params)
    through_statement = rows_as(database_url, "u1", function.statement, params)
    of_another_user = rows_as(database_url, "u2", function.call, {**params, "user_id": "u2"})
    asking_for_u1 = rows_as(database_url, "u2", function.call, params)  # u1's name, u2's transaction

    assert through_function == through_statement
    assert [row["id"] for row in through_function if row["id"] is not None]  # seeds found: not vacuous
    assert of_another_user == [] and asking_for_u1 == []


def context_rows_both_ways(db, database_url, name: str, as_of: datetime | None) -> tuple[list, list, list]:
    """The context rows of u1's small graph through the function `name` and through its statement,
    and what the function gives u2 with u1's parameters."""
    dataset_id = db.execute("SELECT id FROM gb_datasets WHERE user_id = 'u1'").fetchone()[0]
    seeds = [row[0] for row in db.execute("SELECT id FROM gb_entities ORDER BY id LIMIT 2")]
    params = graph_reads.context_parameters(
        dataset_id=dataset_id, vector=basis(0), keyword_seeds=seeds, limits=DEFAULT_LIMITS, as_of=as_of
    )
    function = FUNCTIONS[name]
    return (
        rows_as(database_url, "u1", function.call, params),
        rows_as(database_url, "u1", function.statement, params),
        rows_as(database_url, "u2", function.call, params),
    )


NOW = datetime.now(UTC) + timedelta(days=1)  # after every fact of the graph


@pytest.mark.parametrize(("name", "as_of"), [("gb_context_rows", None), ("gb_context_rows_as_of", NOW)])
def test_the_context_functions_give_the_statements_rows(
    db, database_url, fake_anthropic, fake_openai, name, as_of
):
    use_rule_based_model(fake_anthropic)
    a_small_graph()

    through_function, through_statement, of_another_user = context_rows_both_ways(
        db, database_url, name, as_of
    )

    assert through_function == through_statement
    assert {row["band"] for row in through_function} >= {
        graph_reads.Band.KEYWORD_SEED,
        graph_reads.Band.EXPANSION,
    }
    assert [row for row in of_another_user if row["band"] != graph_reads.Band.SEARCH_PATH] == []


def test_as_of_a_time_before_the_facts_the_function_gives_the_statements_rows_without_them(
    db, database_url, fake_anthropic, fake_openai
):
    use_rule_based_model(fake_anthropic)
    a_small_graph()
    before = datetime(1900, 1, 1, tzinfo=UTC)

    through_function, through_statement, _ = context_rows_both_ways(
        db, database_url, "gb_context_rows_as_of", before
    )

    assert through_function == through_statement
    assert not [row for row in through_function if row["source_id"] is not None]  # no fact was valid then
    # the seeds passed in come back: the rows compared above are not empty
    assert [row for row in through_function if row["band"] == graph_reads.Band.KEYWORD_SEED]


def test_without_prepared_statements_a_query_calls_the_functions_and_is_answered(
    db, database_url, fake_anthropic, fake_openai
):
    """The production profile (RDS Proxy): psycopg prepares nothing, the functions keep the plans."""
    use_rule_based_model(fake_anthropic)
    a_small_graph()
    unprepared = Database(lambda: database_url, server_side_prepare=False)
    try:
        reconfigure(database=unprepared)
        with capturing_statement_texts() as texts:
            for _ in range(3):
                reply = answer(
                    bootstrap.bundle(), Question(user_id="u1", dataset="main", query="Who does Person3 know?")
                )
            in_the_past = answer(
                bootstrap.bundle(),
                Question(user_id="u1", dataset="main", query="Who does Person3 know?", as_of=NOW),
            )
        prepared = (
            unprepared.connection()
            .execute("SELECT count(*) AS n FROM pg_prepared_statements")
            .fetchone()["n"]
        )
    finally:
        unprepared.close()

    called = [text for text in texts if b"SELECT * FROM gb_" in text]
    assert reply.evidence.edges  # answered from the graph
    assert prepared == 0
    assert sum(FUNCTIONS["gb_keyword_seeds"].function_name.encode() in text for text in called) == 4
    assert sum(FUNCTIONS["gb_context_rows"].function_name.encode() in text for text in called) == 3
    assert sum(FUNCTIONS["gb_context_rows_as_of"].function_name.encode() in text for text in called) == 1
    assert in_the_past.evidence.edges
    assert not any(
        b"gb_entities_named" in text for text in texts
    )  # the statement's text stays in the database


def test_the_migration_of_the_statement_functions_is_written_by_the_make_target():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")

    assert "statement-functions: install" in makefile
    assert (ROOT / "infra" / "statement_functions.py").is_file()
