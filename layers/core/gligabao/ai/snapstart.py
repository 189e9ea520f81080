"""SnapStart's hooks for the model providers (registered by gligabao/snapstart.py): the provider
SDKs imported before the snapshot is taken, and `random` reseeded after each restore."""

from __future__ import annotations

import os
import random


def import_provider_sdks() -> None:
    """Before the snapshot: a restored container starts with the SDKs loaded, for free. Without
    SnapStart they stay imported on the first model call, so a cold start does not pay for them."""
    import anthropic  # noqa: F401
    import openai  # noqa: F401


def reseed_random() -> None:
    """After each restore: every environment restored from one snapshot starts with the snapshot's
    random state; without this, their retry jitter (ai/retries.py) would draw the same waits and
    retry in lockstep."""
    random.seed(os.urandom(32))
