"""The LLM stages of each operation, and the request's per-stage `reasoning` and `models`.

`"reasoning": "low"` sets the operation's main stage; `{"extract": "high", "resolve": "low"}`
sets stages one by one. A stage left out reasons at "none" and uses the default model.

Remember also takes the gligabao server's names of its stages (REMEMBER_ALIASES), so that its
client's requests mean here what they mean there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from gligabao.errors import BadRequest

LEVELS = ("none", "low", "medium", "high")
REMEMBER_STAGES = ("extract", "resolve", "image")
QUERY_STAGES = ("query", "detect_geo")
OPERATION_STAGES = {"remember": REMEMBER_STAGES, "query": QUERY_STAGES}

# The gligabao server's stage names. Its chunk summaries are calls of their own; here one extract
# call per chunk returns the chunk's summary with its graph, so summarize_chunk sets extract, and
# gives way to extract (or extract_graph) when the request names that too.
REMEMBER_ALIASES = {
    "extract_graph": "extract",
    "summarize_chunk": "extract",
    "resolve_edges": "resolve",
    "extract_image": "image",
}
_YIELDING_ALIASES = frozenset({"summarize_chunk"})
# Its timeseries stage, which runs only for a fetch with a provider registered (memory/derived.py):
# a level for it is checked and kept, beside the remember's own stages.
REMEMBER_IDLE_REASONING = ("resolve_series",)
# remember's web search (`web_search`, ai/web_search.py) takes a model, allowed like the others
# (GB_ALLOWED_MODELS), but no reasoning level: as on the gligabao server, whose `reasoning` refuses
# the stage, the call never thinks. The name is the server's and ours.
WEB_SEARCH_STAGE = "web_search"
REMEMBER_MODEL_STAGES = (*REMEMBER_STAGES, WEB_SEARCH_STAGE, "resolve_series")

MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}")  # matched whole: no "$" newline slip


def parse_reasoning(
    value: object,
    stages: Sequence[str],
    default_stage: str,
    aliases: Mapping[str, str] | None = None,
    idle: Sequence[str] = (),
) -> dict[str, str]:
    """The reasoning level of each stage the request names (an alias names its stage; an idle
    stage's, one that is not the operation's own, is checked and kept as it is named)."""
    if value is None:
        return {}
    if isinstance(value, str):
        return {default_stage: parse_level(value)}
    if isinstance(value, dict):
        named = {stage: level for stage, level in value.items() if stage not in idle}
        kept = {stage: parse_level(value[stage]) for stage in idle if stage in value}
        return {
            **_by_stage("reasoning", named, stages, aliases or {}, lambda _stage, level: parse_level(level)),
            **kept,
        }
    raise BadRequest(f"reasoning: must be a level ({_one_of(LEVELS)}) or an object of stage levels")


def parse_level(value: object) -> str:
    level = value.strip().lower() if isinstance(value, str) else None
    if level in LEVELS:
        return level
    shown = f'"{value}"' if isinstance(value, str) else type(value).__name__
    raise BadRequest(f"reasoning: unknown level {shown} (use {_one_of(LEVELS)})")


def parse_models(
    value: object, stages: Sequence[str], aliases: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The model of each stage the request names (an alias names its stage)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest("models: must be an object of stage to model name")
    return _by_stage("models", value, stages, aliases or {}, _checked_model)


def _by_stage(
    field: str,
    values: Mapping[str, object],
    stages: Sequence[str],
    aliases: Mapping[str, str],
    parse: Callable[[str, object], str],
) -> dict[str, str]:
    """Each value, parsed, under its own stage. Two names of one stage must agree, except that a
    yielding alias (summarize_chunk) gives way to the stage's other names."""
    chosen: dict[str, str] = {}
    named_by: dict[str, str] = {}
    for name, raw in sorted(values.items(), key=lambda item: item[0] in _YIELDING_ALIASES):
        stage = aliases.get(name) or _checked_stage(field, name, stages)
        value = parse(name, raw)
        if stage in chosen and name in _YIELDING_ALIASES:
            continue
        if stage in chosen and chosen[stage] != value:
            raise BadRequest(
                f'{field}: "{named_by[stage]}" and "{name}" name the same stage ({stage}) with different values'
            )
        chosen[stage], named_by[stage] = value, name
    return chosen


@dataclass(frozen=True)
class ModelPolicy:
    """What a request may ask for, the operator paying: the models it may name and the highest
    reasoning level (GB_ALLOWED_MODELS, GB_MAX_REASONING)."""

    allowed_models: tuple[str, ...]
    max_reasoning: str = "none"

    def check_models(self, models: Mapping[str, str]) -> None:
        """BadRequest naming the first model the deployment does not allow."""
        for name in models.values():
            if name not in self.allowed_models:
                allowed = ", ".join(self.allowed_models)
                raise BadRequest(f"models: model '{name}' is not allowed here (allowed: {allowed})")

    def check_reasoning(self, reasoning: Mapping[str, str]) -> None:
        """BadRequest naming the first level above the deployment's maximum."""
        most = LEVELS.index(self.max_reasoning)
        for level in reasoning.values():
            if LEVELS.index(level) > most:
                raise BadRequest(
                    f"reasoning: level '{level}' is not allowed here (at most {self.max_reasoning})"
                )


def level_for(reasoning: dict[str, str], stage: str) -> str:
    return reasoning.get(stage, "none")


def _checked_model(stage: str, name: object) -> str:
    if isinstance(name, str) and MODEL_NAME.fullmatch(name):
        return name
    raise BadRequest(f'models: invalid model name for stage "{stage}"')


def _checked_stage(field: str, stage: object, stages: Sequence[str]) -> str:
    if stage in stages:
        return stage
    other = _operation_of(stage)
    if other:
        this = next((op for op, names in OPERATION_STAGES.items() if set(names) <= set(stages)), "this one")
        raise BadRequest(f'{field}: "{stage}" is a stage of {other}, not of {this} (use {_one_of(stages)})')
    raise BadRequest(f'{field}: unknown stage "{stage}" (use {_one_of(stages)})')


def _operation_of(stage: object) -> str | None:
    return next((op for op, names in OPERATION_STAGES.items() if stage in names), None)


def _one_of(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
