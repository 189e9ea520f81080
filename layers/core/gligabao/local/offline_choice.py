"""Which providers `gligabao serve` runs on: the configured ones, or the offline ones where no key
is set (ai/offline), so that a fresh clone does the main job before any sign-up.

Only `serve` falls back: on Lambda a missing key stays a 503, and the offline providers run there
only when GB_LLM_PROVIDER or GB_EMBEDDING_PROVIDER names them. A provider the environment names
is never replaced, and a key that is set is always used.
"""

from __future__ import annotations

from gligabao.aws.secrets import ProviderKeys
from gligabao.bootstrap import Bundle, install
from gligabao.settings import Settings


def offline_where_keyless(deps: Bundle) -> Bundle:
    """The bundle with `offline` for each provider neither named nor keyed, installed as this
    process's (worker processes get its settings too); `deps` itself when nothing changes."""
    settings = deps.settings
    keys = ProviderKeys(settings).all()
    chosen = {}
    if "llm_provider" not in settings.model_fields_set and "ANTHROPIC_API_KEY" not in keys:
        chosen["llm_provider"] = "offline"
    if "embedding_provider" not in settings.model_fields_set and "OPENAI_API_KEY" not in keys:
        chosen["embedding_provider"] = "offline"
    if not chosen:
        return deps
    served = Bundle(settings.model_validate({**settings.model_dump(), **chosen}), database=deps.database)
    install(served)
    return served


def providers_line(settings: Settings) -> str:
    """What serve says it runs on, at start."""
    llm = settings.llm_provider
    llm_shown = (
        "offline (rule-based: no ANTHROPIC_API_KEY)" if llm == "offline" else f"{llm} {settings.llm_model}"
    )
    embeddings = (
        "offline (hashed words: no OPENAI_API_KEY)"
        if settings.embedding_provider == "offline"
        else f"openai {settings.embedding_model}"
    )
    line = f"providers: LLM {llm_shown}, embeddings {embeddings}"
    if "offline" in (llm, settings.embedding_provider):
        line += (
            "; offline providers are for trying the API: set the keys for real extraction (docs/providers.md)"
        )
    return line
