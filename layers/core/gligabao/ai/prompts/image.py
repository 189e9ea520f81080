"""Stage `image`: one vision call turns an image into the extraction of a text, plus a description
of what the image shows (the image artifact's text).

The image travels as a base64 image block of the Messages API; the caption, when given, is the
sender's words about the image, read as context.
"""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field

from gligabao.ai.prompts.extract import Extraction
from gligabao.timefmt import rfc3339

IMAGE_MAX_TOKENS = 8192


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value.strip()


# What kind of image it is, and the kinds of its text's blocks, as the gligabao server reads images.
THEMES = (
    "plot", "chart", "graph", "diagram", "table", "document", "screenshot", "slide", "map", "photo",
    "illustration", "other",
)  # fmt: skip
BLOCK_KINDS = (
    "title", "subtitle", "heading", "paragraph", "caption", "label", "axis", "legend", "annotation",
    "table", "other",
)  # fmt: skip


def _one_of(allowed: tuple[str, ...]):
    """A lenient reader of a model's word: lowercased, and "other" for anything off the list (or
    missing), so that a model's "Chart" or "bar chart" never fails the whole remember."""

    def read(value: object) -> str:
        word = value.strip().lower() if isinstance(value, str) else ""
        return word if word in allowed else "other"

    return read


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


class TextBlock(BaseModel):
    """One block of the text legible in the image, in reading order."""

    kind: Annotated[str, BeforeValidator(_one_of(BLOCK_KINDS))] = "other"
    text: Annotated[str, BeforeValidator(_text)] = ""


def _blocks(value: object) -> list:
    """The blocks that hold some text; a reply without a list has none."""
    if not isinstance(value, list):
        return []
    return [block for block in value if isinstance(block, dict) and _text(block.get("text"))]


class ImageExtraction(Extraction):
    """The extraction of section 5 and what the image shows (never empty: it is the artifact's
    text), with its reading: its theme, its title and the blocks of its legible text."""

    description: Annotated[
        str, BeforeValidator(lambda value: "" if value is None else value), AfterValidator(_not_blank)
    ]
    theme: Annotated[str, BeforeValidator(_one_of(THEMES))] = "other"
    title: Annotated[str, BeforeValidator(_text)] = ""
    text_blocks: Annotated[list[TextBlock], BeforeValidator(_blocks)] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The image's legible text: its blocks, one per line."""
        return "\n".join(block.text for block in self.text_blocks)


IMAGE_SYSTEM = """You turn an image into a knowledge graph for a long-term memory: a description of what the
image shows, the entities in it and the facts it states about them. Answer with only a JSON
object, no prose, in this shape:

{"description": "A photo of Alice in front of the Acme office in Paris.",
 "theme": "photo", "title": "",
 "text_blocks": [{"kind": "label", "text": "ACME"}, {"kind": "caption", "text": "Alice, Paris 2023"}],
 "entities": [{"name": "Alice", "type": "person", "description": "engineer"}],
 "edges": [{"source": "Alice", "target": "Acme", "relation": "works_at",
            "description": "Alice works at Acme.", "valid_at": "2023-01-01T00:00:00Z", "invalid_at": null}]}

Description
- description: two to five plain sentences saying what the image shows, with every name, text,
  number and date that is legible in it. Never empty.

Reading
- theme: what kind of image it is, one of: plot, chart, graph, diagram, table, document,
  screenshot, slide, map, photo, illustration, other.
- title: the image's own title as written in it; "" when it has none.
- text_blocks: every piece of text legible in the image, in reading order, transcribed exactly,
  each with its kind: title, subtitle, heading, paragraph, caption, label, axis, legend,
  annotation, table or other; [] when the image holds no text.

Entities
- Every person, organization, place, event, object or concept the image (its visible text
  included) or the caption states a fact about, named as written (a badge, a sign, a caption).
  Do not name people nobody names: "a woman" is no entity.
- type: one lowercase word: person, organization, place, event, object, concept, or another
  single lowercase word when none of these fits.
- description: one short phrase of what the image says the entity is; "" when it says nothing.

Edges (facts)
- One edge per fact the image or its caption states between two entities. source and target are
  entity names exactly as written in "entities"; list every entity an edge names.
- relation: a lowercase snake_case verb phrase in the present tense: works_at, lives_in,
  is_married_to, founded, owns. Use the same relation for the same kind of fact.
- description: the fact as one plain sentence.
- valid_at / invalid_at: when the fact began / stopped holding, as ISO 8601 with a time zone, only
  if the image or caption says (a dated document, "since 2019"); resolve relative times against
  the reference time; null otherwise.
- Only what the image and caption state: no guesses, no general knowledge, no fact twice."""


def image_prompt(
    image: bytes,
    media_type: str,
    *,
    caption: str | None,
    reference_time: datetime,
    current_time: datetime,
    ontology: str | None = None,
) -> tuple[str, list[dict]]:
    """(system, content) of one vision call: the image block, then the times and the caption;
    `ontology`: the types and relations the dataset allows (memory/ontology.py, prompt_section)."""
    lines = [
        f"<reference_time>{rfc3339(reference_time)}</reference_time>",
        f"<current_time>{rfc3339(current_time)}</current_time>",
    ]
    if caption:
        lines += ["<caption>", caption, "</caption>"]
    if ontology:
        lines += ["<ontology>", ontology, "</ontology>"]
    lines.append("Describe the image above and extract its knowledge graph.")
    block = {
        "type": "image",
        "source": {"type": "base64", "media_type": media_type, "data": base64.b64encode(image).decode()},
    }
    return IMAGE_SYSTEM, [block, {"type": "text", "text": "\n".join(lines)}]
