"""Entity names as the graph compares them."""

from __future__ import annotations

import unicodedata


def normalized_name(name: str) -> str:
    """Unicode NFKC, lowercased, trimmed, inner whitespace collapsed to one space."""
    return " ".join(unicodedata.normalize("NFKC", name).lower().split())
