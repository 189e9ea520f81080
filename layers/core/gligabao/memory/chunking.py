"""Long texts into overlapping chunks (SPEC section 5, step 2).

A text longer than `chunking_threshold_chars` is cut into chunks of at most `chunk_max_chars`,
each ending at the last paragraph boundary that fits, else the last sentence boundary, else the
last space; the next chunk starts at the sentence (else word) boundary nearest
`chunk_overlap_chars` before the end of the previous one (gligabao.limits).
"""

from __future__ import annotations

import bisect
import re

from gligabao.limits import DEFAULT_LIMITS, Limits

# A chunk ends no earlier than this share of CHUNK_MAX_CHARS, so a blank line near the start of
# a window does not make a tiny chunk.
MIN_FILL = 0.5

# Boundaries are the positions where the next unit starts.
_PARAGRAPH = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_SENTENCE = re.compile(r"[.!?…。！？]+[\"'”’)\]]*\s+")
_WORD = re.compile(r"\s+")


def split_text(text: str, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """The chunks of `text`, or [] when it is short enough to be remembered whole."""
    if len(text) <= limits.chunking_threshold_chars:
        return []
    spans = chunk_spans(text, limits.chunk_max_chars, limits.chunk_overlap_chars)
    return [text[start:end].strip() for start, end in spans]


def chunk_spans(
    text: str,
    max_chars: int = DEFAULT_LIMITS.chunk_max_chars,
    overlap: int = DEFAULT_LIMITS.chunk_overlap_chars,
) -> list[tuple[int, int]]:
    """(start, end) of each chunk: every span at most `max_chars`, together covering the text."""
    paragraphs = _boundaries(_PARAGRAPH, text)
    sentences = sorted(set(_boundaries(_SENTENCE, text)) | set(paragraphs))
    words = _boundaries(_WORD, text)
    spans: list[tuple[int, int]] = []
    start = 0
    while len(text) - start > max_chars:
        limit = start + max_chars
        earliest = start + int(max_chars * MIN_FILL)
        end = next(
            (
                cut
                for cut in (_last_in(levels, earliest, limit) for levels in (paragraphs, sentences, words))
                if cut
            ),
            limit,
        )
        spans.append((start, end))
        start = _overlap_start(end - overlap, start, end, sentences, words, overlap)
    spans.append((start, len(text)))
    return spans


def _boundaries(pattern: re.Pattern[str], text: str) -> list[int]:
    return [match.end() for match in pattern.finditer(text) if 0 < match.end() < len(text)]


def _last_in(positions: list[int], low: int, high: int) -> int | None:
    """The largest position in (low, high], if any."""
    index = bisect.bisect_right(positions, high) - 1
    return positions[index] if index >= 0 and positions[index] > low else None


def _overlap_start(
    target: int, previous_start: int, end: int, sentences: list[int], words: list[int], overlap: int
) -> int:
    """Where the next chunk starts: a boundary near `target`, after the previous start, before `end`."""
    for levels, reach in ((sentences, overlap // 2), (words, 40)):
        near = [p for p in _window(levels, target - reach, target + reach) if previous_start < p < end]
        if near:
            return min(near, key=lambda p: abs(p - target))
    return max(target, previous_start + 1)


def _window(positions: list[int], low: int, high: int) -> list[int]:
    return positions[bisect.bisect_left(positions, low) : bisect.bisect_right(positions, high)]
