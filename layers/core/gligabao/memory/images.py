"""remember for images (SPEC section 7): one vision call (stage `image`) gives the extraction of a
text and a description of the image; the rest is the text pipeline (embed -> resolve entities ->
resolve facts -> store, one transaction), with an artifact of kind 'image' whose text is the
description and a `gb_image_artifacts` row (sha256, media type, size, the stored extraction).

An image the dataset already holds (the same sha256) is answered from what its first remember
stored: no model call, no new artifact, and that first artifact's id and session.

The rules about the bytes live here: the size limit (413), the media types, and the magic bytes
that must match the declared type (400). The bytes never reach a log or an error message.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from gligabao.ai.prompts.image import IMAGE_MAX_TOKENS, ImageExtraction, image_prompt
from gligabao.ai.stages import level_for
from gligabao.db import images as image_rows
from gligabao.db import ontologies as ontology_rows
from gligabao.errors import BadRequest, PayloadTooLarge, ProviderError
from gligabao.limits import Limits
from gligabao.memory.extraction import clean_text, merge_extractions
from gligabao.memory.geo import locate_places
from gligabao.memory.names import normalized_name
from gligabao.memory.ontology import Ontology, prompt_section
from gligabao.memory.operation import operation
from gligabao.memory.ports import Memory
from gligabao.memory.remember import (
    ImageReading,
    Remembered,
    TextToRemember,
    embed,
    extract_model,
    judge_facts,
    within_ontology,
    write_graph,
)
from gligabao.memory.trajectory import recorder_for
from gligabao.model import IMAGE_MEDIA_TYPES, sniffed_media_type
from gligabao.observability.inferences import save_inferences, unsaved_on_failure

MEDIA_TYPES = IMAGE_MEDIA_TYPES


@dataclass(frozen=True)
class ImageToRemember:
    user_id: str
    dataset: str
    media_type: str
    data: bytes  # the image, decoded
    caption: str | None = None
    session_id: str | None = None
    reference_time: datetime | None = None
    reasoning: Mapping[str, str] = field(default_factory=dict)
    models: Mapping[str, str] = field(default_factory=dict)
    eval: bool = False  # record the call's trajectory (SPEC section 10)
    metadata: Mapping[str, object] = field(default_factory=dict)  # stored on the image's artifact


def check_image(image: ImageToRemember, limits: Limits) -> None:
    """413 for an image over the limit; 400 for a type not served, bytes that are not the declared
    type, or too long a caption."""
    if len(image.data) > limits.image_max_bytes:
        raise PayloadTooLarge(
            f"image is larger than {limits.image_max_bytes} bytes ({len(image.data)} bytes decoded)"
        )
    if image.media_type not in MEDIA_TYPES:
        raise BadRequest(f"image.media_type must be one of {', '.join(MEDIA_TYPES)}")
    sniffed = sniffed_media_type(image.data)
    if sniffed != image.media_type:
        found = f"its bytes are {sniffed}" if sniffed else "its bytes are no image type served"
        raise BadRequest(f"image.data is not {image.media_type}: {found}")
    if image.caption is not None and len(image.caption) > limits.image_caption_max_chars:
        raise BadRequest(f"caption is longer than {limits.image_caption_max_chars} characters")


def image_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def remember_image(
    memory: Memory,
    image: ImageToRemember,
    *,
    request_id: str | None = None,
    deadline: float | None = None,
) -> Remembered:
    """Remember one image. Checked before anything else; both model clients are obtained before
    any call, so a missing key (503) costs no model call."""
    check_image(image, memory.limits)
    sha256 = image_sha256(image.data)
    with operation(
        memory,
        "remember",
        user_id=image.user_id,
        dataset=image.dataset,
        session_id=image.session_id,
        request_id=request_id,
    ) as op:
        op.trajectory = recorder_for("remember", op.call, image, image.caption or image.media_type)
        with memory.database.transaction(image.user_id, image.dataset) as uow:
            first = (
                image_rows.find_image(uow.conn, uow.dataset_id, sha256)
                if uow.dataset_id is not None
                else None
            )
            attached = ontology_rows.of_dataset(uow.conn, image.user_id, image.dataset)
        ontology = (
            Ontology.from_json(attached["name"], attached["parsed"], attached["out_of_ontology"])
            if attached
            else None
        )
        if first is not None:
            return op.trajectory.save_repeated(memory, image.user_id, _repeated(image, first))
        llm, embedder, geo = memory.llm, memory.embedder, memory.geo  # 503s before any model call
        now = memory.clock()
        reference_time = image.reference_time or now
        system, content = image_prompt(
            image.data,
            image.media_type,
            caption=image.caption,
            reference_time=reference_time,
            current_time=now,
            ontology=prompt_section(ontology) if ontology else None,
        )
        reply = llm.complete(
            op.call,
            "image",
            system=system,
            content=content,
            reply_model=ImageExtraction,
            reasoning=level_for(dict(image.reasoning), "image"),
            model=image.models.get("image"),
            max_tokens=IMAGE_MAX_TOKENS,
            deadline=deadline,
        )
        extraction = _storable(reply.model_dump())
        description = extraction["description"].strip()
        if not description:
            raise ProviderError("LLM reply of stage image had an empty description")
        graph = merge_extractions([reply], reference_time, name_max_chars=memory.limits.entity_name_max_chars)
        graph, counts = within_ontology(embedder, op.call, graph, ontology, deadline)
        op.trajectory.extraction(graph)
        # From here on the image is remembered as the text of its description.
        as_text = TextToRemember(
            user_id=image.user_id,
            dataset=image.dataset,
            text=description,
            session_id=image.session_id,
            reference_time=image.reference_time,
            reasoning=image.reasoning,
            models=image.models,
            metadata=image.metadata,
        )
        vectors = embed(embedder, op.call, graph, [], deadline)
        op.trajectory.embedding(vectors)
        judgement = judge_facts(memory, op.call, as_text, graph, vectors, reference_time, now, deadline)
        places = locate_places(geo, graph.entities)  # {} while geo is off
        op.trajectory.resolution(graph, judgement, places)
        with (
            unsaved_on_failure(op.call),
            memory.database.transaction(
                image.user_id, image.dataset, lock_dataset=True, pipeline=True
            ) as uow,
        ):
            dataset_id = uow.dataset_id
            op.call.dataset_id = dataset_id
            # Under the dataset's lock: a concurrent remember of the same image may have stored it.
            first = image_rows.find_image(uow.conn, dataset_id, sha256)
            if first is not None:
                remembered = _repeated(image, first)
            else:
                remembered = write_graph(
                    memory,
                    uow,
                    op,
                    dataset_id,
                    as_text,
                    graph,
                    [],
                    vectors,
                    judgement,
                    reference_time,
                    places,
                    kind="image",
                    content_sha256=sha256,
                    model_id=extract_model(llm, image.models, "image"),
                )
                image_rows.insert_image(
                    uow.conn,
                    dataset_id,
                    artifact_id=remembered.artifact_id,
                    sha256=sha256,
                    media_type=image.media_type,
                    size=len(image.data),
                    extraction=extraction,
                    session_id=image.session_id,
                )
                remembered = replace(
                    remembered, description=description, reading=image_reading(extraction), ontology=counts
                )
            save_inferences(uow.conn, op.call)
            remembered = op.trajectory.save_remember(uow.conn, dataset_id, remembered)
        return remembered


def _repeated(image: ImageToRemember, first: image_rows.StoredImage) -> Remembered:
    """The answer to an image the dataset holds: its first artifact and session, the entities and
    the live facts that artifact stated (none of them created now), in its stored extraction's order."""
    graph = merge_extractions([ImageExtraction.model_validate(first.extraction)], first.created_at)
    entity_order = {entity.normalized_name: i for i, entity in enumerate(graph.entities)}
    fact_order = {
        (f.source.normalized_name, f.target.normalized_name, f.relation): i for i, f in enumerate(graph.facts)
    }
    last = len(entity_order) + len(fact_order)
    return Remembered(
        session_id=first.session_id,
        dataset=image.dataset,
        artifact_id=first.artifact_id,
        entities=sorted(first.entities, key=lambda e: entity_order.get(normalized_name(e.name), last)),
        edges=sorted(
            first.edges,
            key=lambda e: fact_order.get(
                (normalized_name(e.source), normalized_name(e.target), e.relation), last
            ),
        ),
        superseded=[],
        chunks=0,
        user_id=image.user_id,
        valid_at=first.reference_time,
        created_at=first.created_at,
        description=str(first.extraction.get("description", "")).strip(),
        repeated=True,
        reading=image_reading(first.extraction),
    )


def image_reading(extraction: dict[str, Any]) -> ImageReading:
    """The reading of a stored extraction (one stored before images were read has theme other,
    no title and no text)."""
    read = ImageExtraction.model_validate({**extraction, "description": extraction.get("description") or "-"})
    return ImageReading(read.theme, read.title, tuple((block.kind, block.text) for block in read.text_blocks))


def _storable(value: Any) -> Any:
    """The reply as jsonb can hold it: strings without control characters (NUL) or lone surrogates."""
    if isinstance(value, str):
        return clean_text(value).encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {key: _storable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_storable(item) for item in value]
    return value
