"""Long texts (SPEC section 5, step 2): chunks of at most 4,000 characters at paragraph, then
sentence boundaries, about 400 characters of overlap."""

from __future__ import annotations

from itertools import pairwise

import pytest
from remember_helpers import FILLER, paragraphs

from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.chunking import chunk_spans, split_text

CHUNK_MAX_CHARS = DEFAULT_LIMITS.chunk_max_chars
CHUNK_OVERLAP_CHARS = DEFAULT_LIMITS.chunk_overlap_chars
CHUNKING_THRESHOLD = DEFAULT_LIMITS.chunking_threshold_chars


def test_a_text_up_to_6000_characters_is_not_chunked():
    assert split_text("a " * (CHUNKING_THRESHOLD // 2)) == []
    assert len(split_text("a " * (CHUNKING_THRESHOLD // 2) + "b")) > 1


@pytest.mark.parametrize(
    "text",
    [
        paragraphs(12, 10),  # paragraphs of ~720 characters
        " ".join([FILLER] * 200),  # one paragraph of sentences
        paragraphs(3, 80),  # paragraphs longer than a chunk
        "x" * 9_000,  # no boundary at all
        "word " * 3_000,  # words only
    ],
)
def test_chunks_are_at_most_4000_characters_and_cover_the_text(text):
    spans = chunk_spans(text)

    assert all(end - start <= CHUNK_MAX_CHARS for start, end in spans)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(next_start < end for (_, end), (next_start, _) in pairwise(spans))
    assert all(start < next_start for (start, _), (next_start, _) in pairwise(spans))


def test_chunks_end_at_paragraph_boundaries_when_there_are_some():
    text = paragraphs(12, 10)

    for _start, end in chunk_spans(text)[:-1]:
        assert text[end - 2 : end] == "\n\n", repr(text[end - 20 : end])


def test_chunks_end_at_sentence_boundaries_inside_a_long_paragraph():
    text = " ".join([FILLER] * 200)

    for start, end in chunk_spans(text)[:-1]:
        assert text[:end].rstrip().endswith(".")
        assert end - start > CHUNK_MAX_CHARS - len(FILLER) - 2  # the last sentence that fits


def test_consecutive_chunks_overlap_by_about_400_characters_at_a_sentence_boundary():
    text = " ".join([FILLER] * 200)
    spans = chunk_spans(text)

    for (_, end), (next_start, _) in pairwise(spans):
        overlap = end - next_start
        assert CHUNK_OVERLAP_CHARS - len(FILLER) <= overlap <= CHUNK_OVERLAP_CHARS + len(FILLER)
        assert text[next_start:].startswith("The committee")
