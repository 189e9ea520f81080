"""A provider's reply body read as the protocol promises it (a pydantic model of the part gligabao
reads), or a 502 saying how it is not: never an error of the SDK's unvalidated objects."""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from gligabao.ai.json_reply import NoJsonObject, extract_json_object
from gligabao.errors import ProviderError

Shape = TypeVar("Shape", bound=BaseModel)

MAX_PROBLEMS = 3


def parsed_reply(body: bytes, shape: type[Shape], what: str) -> Shape:
    """`body` as `shape`; else a ProviderError "<what> was not ...: <problems>"."""
    try:
        data = json.loads(body)
    except ValueError:  # UnicodeDecodeError included
        raise ProviderError(f"{what}: not JSON") from None
    try:
        return shape.model_validate(data)
    except ValidationError as error:
        raise ProviderError(f"{what}: {validation_problems(error)}") from None


def validation_problems(error: ValidationError) -> str:
    """The first problems, by field path, without the values (they may quote a prompt)."""
    problems = [
        f"{'.'.join(str(part) for part in problem['loc']) or 'reply'}: {problem['msg']}"
        for problem in error.errors(include_input=False, include_url=False)
    ]
    more = len(problems) - MAX_PROBLEMS
    return "; ".join(problems[:MAX_PROBLEMS]) + (f" (and {more} more)" if more > 0 else "")


def stage_reply(text: str, reply_model: type[Shape], stage: str) -> Shape:
    """The text of a model's reply to `stage` as its reply model (the JSON object in it, fences
    and prose tolerated); else a ProviderError saying why there is none. Any provider."""
    if not text.strip():
        raise ProviderError(f"LLM reply of stage {stage} was empty")
    try:
        data = extract_json_object(text)
    except NoJsonObject:
        raise ProviderError(f"LLM reply of stage {stage} was not JSON") from None
    try:
        return reply_model.model_validate(data)
    except ValidationError as error:
        problems = validation_problems(error)
        raise ProviderError(f"LLM reply of stage {stage} did not fit its schema: {problems}") from None
