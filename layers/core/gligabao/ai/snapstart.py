"""Under SnapStart: the provider SDKs are imported before the snapshot is taken, and `random` is
reseeded after each restore."""

from __future__ import annotations

import os
import random
from collections.abc import Callable


def preload_on_snapshot(*also: Callable[[], None]) -> None:
    """Under SnapStart, import the provider SDKs before the snapshot is taken.

    A restored container then starts with them loaded, for free. Without SnapStart (locally,
    in tests, on plain Lambda) nothing happens: the SDKs stay imported on the first model call,
    so a cold start does not pay for them. `also`: more hooks of the same kind (geo's gazetteer).
    """
    try:
        from snapshot_restore_py import register_before_snapshot  # only in the Lambda runtime
    except ImportError:
        return
    register_before_snapshot(import_provider_sdks)
    for hook in also:
        register_before_snapshot(hook)


def import_provider_sdks() -> None:
    import anthropic  # noqa: F401
    import openai  # noqa: F401


def reseed_random_after_restore() -> None:
    """Under SnapStart, reseed `random` after each restore (a no-op elsewhere).

    Every environment restored from one snapshot starts with the snapshot's random state: without
    this, their retry jitter (ai/retries.py) would draw the same waits and retry in lockstep."""
    try:
        from snapshot_restore_py import register_after_restore  # only in the Lambda runtime
    except ImportError:
        return
    register_after_restore(reseed_random)


def reseed_random() -> None:
    random.seed(os.urandom(32))
