"""Offline embeddings (GB_EMBEDDING_PROVIDER=offline): hashed words and their letter trigrams.

Each word (lowercased, lightly stemmed) adds 1, and each of its letter trigrams 0.3, at a position
its BLAKE2 digest picks, with a sign from the digest (so that collisions cancel out on average
instead of adding up); the vector is then normalised. Texts that share words, or parts of words
("married", "marriage"), are near; a paraphrase with no word in common is not: these vectors
carry lexical similarity only, which is what keyword and vector retrieval need to work offline.
Deterministic across processes and machines (no salted hash): the same text, the same vector.
"""

from __future__ import annotations

import hashlib
import math
import time

from gligabao.ai.offline.records import offline_inference
from gligabao.ai.offline.words import stems
from gligabao.observability.inferences import CallContext

OFFLINE_EMBEDDING_MODEL = "offline-hash"
TRIGRAM_WEIGHT = 0.3
_STOPWORDS = frozenset("a an the is are was were of in at on to for and or it this that".split())


class OfflineEmbedder:
    """Hashed bag-of-words vectors of `dimensions`, in process."""

    provider = "offline"
    model = OFFLINE_EMBEDDING_MODEL

    def __init__(self, dimensions: int):
        self.dimensions = dimensions

    def __repr__(self) -> str:
        return f"OfflineEmbedder(dimensions={self.dimensions})"

    def embed(
        self, call: CallContext, texts: list[str], stage: str = "embed", *, deadline: float | None = None
    ) -> list[list[float]]:
        started = time.monotonic()
        with call.model_call():
            vectors = [hashed_vector(text, self.dimensions) for text in texts]
        call.record(offline_inference(stage, OFFLINE_EMBEDDING_MODEL, None, started))
        return vectors


def hashed_vector(text: str, dimensions: int) -> list[float]:
    weights: dict[int, float] = {}
    for word in _words(text):
        _add(weights, word, 1.0, dimensions)
        padded = f"<{word}>"
        for start in range(len(padded) - 2):
            _add(weights, padded[start : start + 3], TRIGRAM_WEIGHT, dimensions)
    norm = math.sqrt(sum(value * value for value in weights.values()))
    vector = [0.0] * dimensions
    if norm == 0:  # a text with no word: a fixed unit vector, so that the vector is never all zeros
        vector[0] = 1.0
        return vector
    for position, value in weights.items():
        vector[position] = value / norm
    return vector


def _add(weights: dict[int, float], feature: str, weight: float, dimensions: int) -> None:
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    position = int.from_bytes(digest[:6], "big") % dimensions
    sign = 1.0 if digest[7] & 1 else -1.0
    weights[position] = weights.get(position, 0.0) + sign * weight


def _words(text: str) -> list[str]:
    return stems(text, _STOPWORDS)
