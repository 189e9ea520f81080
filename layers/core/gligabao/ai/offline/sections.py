"""A section of a prompt's content (`<question>...</question>`), as ai/prompts writes them."""

from __future__ import annotations

import re


def section(content: str, tag: str) -> str:
    """What the first `<tag>` (attributes allowed: `<nearby radius_km="5">`) holds, without the
    newlines around it; "" when the content has none."""
    found = re.search(rf"<{tag}(?: [^>]*)?>\n?(.*?)\n?</{tag}>", content, re.DOTALL)
    return found.group(1) if found else ""
