"""The rank bands of the context rows (db/graph_reads.py `Band`), as the decoder reads them
(memory/retrieval.py `context_from_rows`): a row's band is its kind and its role."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from gligabao.db import graph_reads
from gligabao.db.graph_reads import BAND_PARAMETERS, Band
from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.retrieval import CONTEXT_COLUMNS, Passage, context_from_rows, context_from_tuples
from gligabao.model import StoredEdge, StoredEntity

T0 = datetime(2025, 1, 31, 9, 0, 0, tzinfo=UTC)
COLUMNS = (
    "band rank id name type description source_id target_id relation artifact_id valid_at invalid_at "
    "created_at expired_at parent_id chunk_index summary text"
).split()


def row(band: Band, rank: int, id_: int | None, **columns) -> dict:
    """A row of graph_reads.send_context_rows, the columns its kind has no use for NULL."""
    return {**dict.fromkeys(COLUMNS), "band": int(band), "rank": rank, "id": id_, **columns}


def entity(band: Band, rank: int, id_: int, name: str) -> dict:
    return row(band, rank, id_, name=name, type="person", description=f"{name} here")


def edge(band: Band, rank: int, id_: int, source_id: int, target_id: int) -> dict:
    return row(
        band,
        rank,
        id_,
        description="a fact",
        source_id=source_id,
        target_id=target_id,
        relation="knows",
        artifact_id=None,
        valid_at=T0,
        created_at=T0,
    )


def search(index: str, path: str) -> dict:
    return row(Band.SEARCH_PATH, 0, None, name=index, type=path)


# --- the bands ----------------------------------------------------------------------------


def test_each_band_is_of_one_kind_and_the_bands_of_a_kind_are_in_rendering_order():
    kinds = {band: band.kind for band in Band}
    assert set(kinds.values()) == {"entity", "edge", "passage", "search"}
    assert Band.KEYWORD_SEED < Band.SIMILARITY_SEED < Band.FALLBACK_SEED < Band.ENDPOINT
    assert {band.kind for band in (Band.KEYWORD_SEED, Band.SIMILARITY_SEED, Band.FALLBACK_SEED)} == {"entity"}
    assert Band.ENDPOINT.kind == "entity"
    assert Band.SIMILAR_FACT < Band.EXPANSION and {Band.SIMILAR_FACT.kind, Band.EXPANSION.kind} == {"edge"}
    assert Band.PASSAGE_WITH_TEXT < Band.PASSAGE_SUMMARY_ONLY
    assert {Band.PASSAGE_WITH_TEXT.kind, Band.PASSAGE_SUMMARY_ONLY.kind} == {"passage"}


def test_every_band_is_a_parameter_of_the_context_statement_never_a_literal():
    statement = graph_reads.context_statement()
    assert len(set(BAND_PARAMETERS.values())) == len(Band)
    for band in Band:
        assert f"%({band.parameter})s" in statement, band
        assert BAND_PARAMETERS[band.parameter] == band
    parameters = graph_reads.context_parameters(
        dataset_id=1, vector=[0.0], keyword_seeds=[], limits=DEFAULT_LIMITS
    )
    assert BAND_PARAMETERS.items() <= parameters.items()


def test_the_context_statement_takes_the_seeds_numbers_as_parameters():
    """No rank, cap or threshold is written into the SQL: its only number literals are 0, 1 and 2
    (a distance to a similarity, a side of an edge, an edge's two ends)."""
    statement = graph_reads.context_statement()
    without_parameters = re.sub(r"%\(\w+\)s", "", statement)
    literals = set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", without_parameters))
    assert literals <= {"0", "1", "2"}, literals
    parameters = graph_reads.context_parameters(
        dataset_id=7, vector=[0.0], keyword_seeds=[3], limits=DEFAULT_LIMITS
    )
    named = set(re.findall(r"%\((\w+)\)s", statement))
    assert named <= parameters.keys()
    assert parameters["threshold"] == DEFAULT_LIMITS.similarity_threshold
    assert parameters["expansion"] == DEFAULT_LIMITS.expansion_edges
    assert parameters["fallback"] == DEFAULT_LIMITS.fallback_seeds


def test_the_keyword_scores_are_parameters_of_the_keyword_statement():
    class Recording:
        def execute(self, statement, parameters):
            self.statement, self.parameters = statement, parameters
            return self

        def fetchall(self):
            return []

    for terms in (["acme", "paris"], []):
        conn = Recording()
        graph_reads.read_keyword_seeds(
            graph_reads.send_keyword_seeds(
                conn,
                user_id="u1",
                dataset="main",
                terms=terms,
                term_grams=[[term] for term in terms],
                normalized_question="acme paris",
                name_prefixes=["a"],
                limit=10,
                window=1000,
                whole_name_score=7,
                term_in_name_score=4,
                term_in_description_score=2,
            )
        )
        assert {"whole_name_score": 7}.items() <= conn.parameters.items()
        assert {"term_in_name_score": 4, "term_in_description_score": 2}.items() <= conn.parameters.items()
        assert "%(whole_name_score)s" in conn.statement
        assert not re.search(r"> 0 THEN [0-9]", conn.statement), "a score written into the SQL"


# --- decoding -----------------------------------------------------------------------------


def test_an_entity_row_is_a_seed_of_the_kind_its_band_names():
    context = context_from_rows(
        1,
        [
            entity(Band.KEYWORD_SEED, 1, 10, "Alice"),
            entity(Band.SIMILARITY_SEED, 2, 11, "Carol"),
            entity(Band.ENDPOINT, 8, 12, "Acme"),
        ],
    )

    assert [e.id for e in context.entities] == [10, 11, 12]
    assert context.entities[0] == StoredEntity(10, "Alice", "person", "Alice here")
    assert context.similarity_seeds == [11]
    assert not context.fallback


def test_a_fallback_seed_row_marks_the_context_as_a_fallback():
    context = context_from_rows(1, [entity(Band.FALLBACK_SEED, 1, 10, "Thing")])

    assert context.fallback
    assert context.similarity_seeds == []
    assert [e.id for e in context.entities] == [10]


def test_an_edge_row_is_a_similar_fact_only_in_its_band_and_carries_its_ends_names():
    context = context_from_rows(
        1,
        [
            entity(Band.KEYWORD_SEED, 1, 10, "Alice"),
            entity(Band.ENDPOINT, 2, 12, "Acme"),
            entity(Band.ENDPOINT, 3, 13, "Globex"),
            edge(Band.SIMILAR_FACT, 1, 100, 10, 12),
            edge(Band.EXPANSION, 1, 101, 10, 13),
        ],
    )

    assert context.similar_edges == [100]
    assert [e.id for e in context.edges] == [100, 101]
    assert context.edges[1] == StoredEdge(
        101, 10, 13, "knows", "a fact", None, T0, None, T0, None, "Alice", "Globex"
    )


def test_a_passage_row_is_given_as_the_row_holds_it_text_and_summary():
    context = context_from_rows(
        1,
        [
            row(Band.PASSAGE_WITH_TEXT, 1, 50, parent_id=5, chunk_index=0, summary="s0", text="t0"),
            row(Band.PASSAGE_WITH_TEXT, 2, 51, parent_id=5, chunk_index=1, summary=None, text="t1"),
            row(Band.PASSAGE_SUMMARY_ONLY, 4, 53, parent_id=5, chunk_index=3, summary="s3", text=None),
        ],
    )

    assert context.passages == [
        Passage(50, 5, 0, "s0", "t0"),
        Passage(51, 5, 1, None, "t1"),
        Passage(53, 5, 3, "s3", None),
    ]
    assert context.entities == [] and context.edges == [] and not context.empty


def test_a_search_path_row_is_no_context_only_the_path_of_an_index():
    context = context_from_rows(1, [search("entities", "hnsw"), search("chunks", "exact")])

    assert context.search_paths == {"entities": "hnsw", "chunks": "exact"}
    assert context.empty


def test_a_row_of_an_unknown_band_is_an_error_never_dropped():
    with pytest.raises(ValueError):
        context_from_rows(1, [{**entity(Band.KEYWORD_SEED, 1, 10, "Alice"), "band": 99}])


def test_the_context_records_are_the_shared_typed_records():
    context = context_from_rows(1, [entity(Band.KEYWORD_SEED, 1, 10, "Alice")])
    assert [type(e) for e in context.entities] == [StoredEntity]


def test_rows_as_tuples_are_decoded_by_their_columns_whatever_their_order():
    """retrieve reads the statement's rows as tuples (context_from_tuples), by column name."""
    rows = [
        {**entity(Band.KEYWORD_SEED, 1, 10, "Alice"), "similarity": 0.9, "model_id": 3},
        entity(Band.ENDPOINT, 2, 11, "Acme"),
        {**edge(Band.SIMILAR_FACT, 1, 20, 10, 11), "similarity": 0.8},
        row(Band.PASSAGE_WITH_TEXT, 1, 30, parent_id=5, chunk_index=0, summary="s", text="t"),
        search("edges", "hnsw"),
    ]
    columns = sorted({name for record in rows for name in record} | {"similarity", "model_id"}, reverse=True)
    tuples = [tuple(record.get(name) for name in columns) for record in rows]

    as_tuples = context_from_tuples(1, columns, tuples)
    as_mappings = context_from_rows(1, rows)

    assert as_tuples == as_mappings
    assert as_tuples.edges[0].source == "Alice" and as_tuples.entities[0].model_id == 3
    assert as_tuples.similarity == {("entity", 10): 0.9, ("edge", 20): 0.8}
    assert as_tuples.search_paths == {"edges": "hnsw"} and as_tuples.similar_edges == [20]


def test_rows_without_a_column_the_decoder_reads_are_an_error():
    columns = [name for name in CONTEXT_COLUMNS if name != "relation"]

    with pytest.raises(ValueError, match="relation"):
        context_from_tuples(1, columns, [])
